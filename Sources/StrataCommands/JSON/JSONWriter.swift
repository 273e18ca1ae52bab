import Foundation
import PersistentCollections
import Strata

/// Writes JSON into a byte buffer, by hand: the export of a million
/// records costs what writing JSON costs, not what a generic serializer
/// costs.
///
/// Record values follow the Strata JSON convention, which ``JSONReader``
/// reads back to equal values:
///
///     null, true, 12, "text", [..], {..}    as themselves (a map as an object)
///     2.5, 3.0                              a double always has a point or an exponent
///     {"$double": "nan" | "inf" | "-inf"}   a double JSON cannot write
///     {"$bytes": "<base64>"}
///     {"$date": "2026-11-24T06:00:00.123Z", "$seconds": 785656800.123}
///                                           ($seconds: since 2001-01-01 UTC, exact)
///     {"$ref": {"table": "albums", "id": 7}}
///     {"$uuid": "…"}                        a UUID record ID
///     {"$map": {..}}                        a map with a key that starts with "$"
package struct JSONWriter {
    package var bytes: [UInt8] = []

    package init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func byte(_ byte: UInt8) { bytes.append(byte) }

    mutating func write(_ json: JSON) {
        switch json {
        case .null: raw("null")
        case .bool(let flag): flag ? raw("true") : raw("false")
        case .int(let number): integer(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let items):
            byte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                write(item)
            }
            byte(UInt8(ascii: "]"))
        case .object(let members):
            byte(UInt8(ascii: "{"))
            for (index, (name, member)) in members.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                string(name)
                byte(UInt8(ascii: ":"))
                write(member)
            }
            byte(UInt8(ascii: "}"))
        case .value(let value): self.value(value)
        case .encoded(let encoded): bytes.append(contentsOf: encoded)
        }
    }

    mutating func integer(_ number: Int64) {
        if number >= 0, number < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(number))
            return
        }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: 20 digits and a sign fit
        let count = withUnsafeMutableBytes(of: &digits) { buffer -> Int in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if number < 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: buffer[index...])
            return buffer.count - index
        }
        _ = count
    }

    mutating func double(_ number: Double) {
        guard number.isFinite else {
            raw(#"{"$double":""#)
            if number.isNaN {
                // Values compare doubles bit for bit: a NaN other than the
                // standard one (a sign, a payload) keeps its bits.
                let bits = number.bitPattern
                if bits == Double.nan.bitPattern {
                    raw("nan")
                } else {
                    raw("nan:")
                    bytes.append(contentsOf: String(bits, radix: 16).utf8)
                }
            } else {
                number < 0 ? raw("-inf") : raw("inf")
            }
            raw(#""}"#)
            return
        }
        let text = number.description
        bytes.append(contentsOf: text.utf8)
        // "3.0" and "1e+20" read back as doubles; Swift writes both so, but
        // an integral magnitude it prints without a point must get one.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") }) { raw(".0") }
    }

    /// A JSON string: quotes, the escapes JSON requires, UTF-8 as is.
    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string(utf8: $0) }
    }

    /// A JSON string of these UTF-8 bytes (escaped where JSON requires).
    /// Contiguous bytes, copied a run at a time: a generic collection made
    /// each string of an export look up the metadata of its slice type.
    mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        byte(UInt8(ascii: "\""))
        var start = 0
        for index in 0..<utf8.count {
            let unit = utf8[index]
            guard unit < 0x20 || unit == UInt8(ascii: "\"") || unit == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
            escape(unit)
            start = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        byte(UInt8(ascii: "\""))
    }

    private mutating func escape(_ unit: UInt8) {
        byte(UInt8(ascii: "\\"))
        switch unit {
        case UInt8(ascii: "\""): byte(unit)
        case UInt8(ascii: "\\"): byte(unit)
        case 0x0A: byte(UInt8(ascii: "n"))
        case 0x0D: byte(UInt8(ascii: "r"))
        case 0x09: byte(UInt8(ascii: "t"))
        case 0x08: byte(UInt8(ascii: "b"))
        case 0x0C: byte(UInt8(ascii: "f"))
        default:
            raw("u00")
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            byte(hex[Int(unit >> 4)])
            byte(hex[Int(unit & 0xF)])
        }
    }

    // MARK: Record values

    /// A record value in the Strata JSON convention.
    package mutating func value(_ value: Value) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): flag ? raw("true") : raw("false")
        case .int(let number): integer(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .bytes(let data): self.bytesValue(Data(data))
        case .date(let date): self.date(secondsSince2001: date.timeIntervalSinceReferenceDate)
        case .reference(let reference):
            raw(#"{"$ref":{"table":"#)
            string(reference.table.string)
            raw(#","id":"#)
            recordID(reference.id)
            raw("}}")
        case .list(let items):
            byte(UInt8(ascii: "["))
            var first = true
            for item in items {
                if !first { byte(UInt8(ascii: ",")) }
                first = false
                self.value(item)
            }
            byte(UInt8(ascii: "]"))
        case .map(let map):
            let keys = map.keys.sorted()
            let wrapped = keys.contains { $0.string.utf8.first == UInt8(ascii: "$") }
            if wrapped { raw(#"{"$map":"#) }
            byte(UInt8(ascii: "{"))
            for (index, key) in keys.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                string(key.string)
                byte(UInt8(ascii: ":"))
                self.value(map[key]!)
            }
            byte(UInt8(ascii: "}"))
            if wrapped { byte(UInt8(ascii: "}")) }
        }
    }

    /// `{"$bytes": "<base64>"}`.
    mutating func bytesValue(_ data: Data) {
        raw(#"{"$bytes":""#)
        bytes.append(contentsOf: data.base64EncodedString().utf8)
        raw(#""}"#)
    }

    /// `{"$date": "…", "$seconds": …}`: text only for dates ISO 8601
    /// writes the way every reader reads (years 1583 to 9999, Gregorian);
    /// the seconds always.
    package mutating func date(secondsSince2001 seconds: Double) {
        byte(UInt8(ascii: "{"))
        if JSONDates.iso8601(Date(timeIntervalSinceReferenceDate: seconds), into: &bytes, prefix: #""$date":""#) {
            raw(#"","#)
        }
        raw(#""$seconds":"#)
        double(seconds)
        byte(UInt8(ascii: "}"))
    }

    /// A record ID: a number, a string, or `{"$uuid": "…"}`.
    mutating func recordID(_ id: RecordID) {
        switch id.kind {
        case .integer(let number): integer(number)
        case .string(let text): string(text)
        case .uuid(let uuid):
            raw(#"{"$uuid":""#)
            bytes.append(contentsOf: uuid.uuidString.utf8)
            raw(#""}"#)
        }
    }

    /// A record as one object: `extra` members first (its ID, its table),
    /// then its fields in their stored order.
    package mutating func record(_ record: Record, id: RecordID, idField: String, table: String?) {
        var names = JSONFieldNames()
        self.record(record, id: id, idField: idField, table: table, names: &names)
    }

    /// A record as one object, its fields written from their packed bytes
    /// (no `Value` is built but for a map) and their names from `names`,
    /// which must have been made after `record` existed.
    package mutating func record(
        _ record: Record,
        id: RecordID,
        idField: String,
        table: String?,
        names: inout JSONFieldNames
    ) {
        byte(UInt8(ascii: "{"))
        if let table {
            raw(#""$table":"#)
            string(table)
            byte(UInt8(ascii: ","))
        }
        string(idField)
        byte(UInt8(ascii: ":"))
        recordID(id)
        var tokens = record.tokens
        // Strings are copied out of the record's bytes through one buffer
        // view per record: a slice per string would retain and release
        // the array each time.
        tokens.bytes.withUnsafeBufferPointer { packed in
            while let field = tokens.nextField() {
                byte(UInt8(ascii: ","))
                names.append(field, to: &bytes)
                byte(UInt8(ascii: ":"))
                value(&tokens, packed, names: &names)
            }
        }
        byte(UInt8(ascii: "}"))
    }

    /// The next value of `tokens` (whose bytes are `packed`), as
    /// ``value(_:)`` writes it.
    private mutating func value(
        _ tokens: inout RecordTokens,
        _ packed: UnsafeBufferPointer<UInt8>,
        names: inout JSONFieldNames
    ) {
        switch tokens.nextValue() {
        case .null: raw("null")
        case .bool(let flag): flag ? raw("true") : raw("false")
        case .int(let number): integer(number)
        case .double(let number): double(number)
        case .string(let range): string(utf8: UnsafeBufferPointer(rebasing: packed[range]))
        case .bytes(let range): self.bytesValue(Data(packed[range]))
        case .date(let seconds): date(secondsSince2001: seconds)
        case .reference(let tableID, let id):
            raw(#"{"$ref":{"table":"#)
            names.append(tableID, to: &bytes)
            raw(#","id":"#)
            recordID(id)
            raw("}}")
        case .list(let count):
            byte(UInt8(ascii: "["))
            for index in 0..<count {
                if index > 0 { byte(UInt8(ascii: ",")) }
                value(&tokens, packed, names: &names)
            }
            byte(UInt8(ascii: "]"))
        case .map(let map): value(map)
        }
    }
}

/// Field and table names as JSON strings, each escaped once (when first
/// met) and then copied: a million records share a dozen names.
package struct JSONFieldNames {
    private let names: PersistentVector<Key>
    /// Every name met so far, quoted, one after the other.
    private var quoted: [UInt8] = []
    /// Where each name's quoted form lies in `quoted`; empty until met
    /// (a quoted name has at least its two quotes).
    private var ranges: [Range<Int>]

    /// The names of every record that exists now.
    package init() {
        names = RecordTokens.fieldNames
        ranges = Array(repeating: 0..<0, count: names.count)
    }

    /// Appends `"name"` for the name with this ID.
    mutating func append(_ id: Int, to bytes: inout [UInt8]) {
        if ranges[id].isEmpty {
            var writer = JSONWriter(capacity: names[id].utf8Count + 2)
            writer.string(names[id].string)
            ranges[id] = quoted.count..<(quoted.count + writer.bytes.count)
            quoted.append(contentsOf: writer.bytes)
        }
        let range = ranges[id]
        quoted.withUnsafeBufferPointer { bytes.append(contentsOf: $0[range]) }
    }
}
