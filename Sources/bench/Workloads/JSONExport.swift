import Foundation
import PersistentCollections
import Strata

/// A plain JSON export of a database, the size a snapshot is judged
/// against: `{"table": {"id": {"field": value, …}, …}, …}` with dates as
/// ISO-8601-like seconds, bytes as hex and references as
/// `{"$ref": "table/id"}`. Written by hand into one byte buffer so the
/// baseline costs what JSON costs, not what a generic serializer costs.
struct JSONExport {
    private(set) var bytes: [UInt8] = []

    static func export(_ database: Database) -> [UInt8] {
        var export = JSONExport()
        export.bytes.reserveCapacity(database.recordCount * 256)
        export.write(database)
        return export.bytes
    }

    private mutating func write(_ database: Database) {
        bytes.append(UInt8(ascii: "{"))
        for (tableIndex, name) in database.tableNames.enumerated() {
            if tableIndex > 0 { bytes.append(UInt8(ascii: ",")) }
            string(name.string)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (id, record) in database[table: name] {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                string(Self.text(id))
                bytes.append(UInt8(ascii: ":"))
                bytes.append(UInt8(ascii: "{"))
                for (index, field) in record.enumerated() {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    string(field.name.string)
                    bytes.append(UInt8(ascii: ":"))
                    value(field.value)
                }
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private mutating func value(_ value: Value) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): bytes.append(contentsOf: String(number).utf8)
        case .double(let number): bytes.append(contentsOf: "\(number)".utf8)
        case .string(let text): string(text)
        case .bytes(let data):
            let hex = data.map { String($0, radix: 16) }.joined()
            string(hex)
        case .date(let date): bytes.append(contentsOf: "\(date.timeIntervalSince1970)".utf8)
        case .reference(let reference):
            bytes.append(contentsOf: #"{"$ref":"#.utf8)
            string(reference.table.string + "/" + Self.text(reference.id))
            bytes.append(UInt8(ascii: "}"))
        case .list(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .map(let entries):
            bytes.append(UInt8(ascii: "{"))
            for (index, key) in entries.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                string(key.string)
                bytes.append(UInt8(ascii: ":"))
                self.value(entries[key] ?? .null)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0..<0x20:
                bytes.append(contentsOf: String(format: "\\u%04x", byte).utf8)
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    static func text(_ id: RecordID) -> String {
        switch id.kind {
        case .integer(let number): return String(number)
        case .string(let text): return text
        case .uuid(let uuid): return uuid.uuidString
        }
    }
}
