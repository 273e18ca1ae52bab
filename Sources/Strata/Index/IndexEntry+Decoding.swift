import Foundation
import PersistentCollections

// Reading entries back: an entry's bytes were written by `IndexEntryWriter`
// in this process (entries are never read from disk), so reads are trusted.

extension IndexEntry {
    /// The record ID that follows the first `valueCount` values. O(count).
    func recordID(after valueCount: Int) -> RecordID {
        withBytes { bytes in
            var offset = 0
            for _ in 0..<valueCount { Self.skipValue(bytes, &offset) }
            return Self.readRecordID(bytes, &offset)
        }
    }

    /// The first `valueCount` values. O(count).
    func values(_ valueCount: Int) -> [Value] {
        withBytes { bytes in
            var offset = 0
            return (0..<valueCount).map { _ in Self.readValue(bytes, &offset) }
        }
    }

    /// Moves past one value (the checked walk of IndexEntry+Validation,
    /// trapping where it fails: these bytes are trusted).
    static func skipValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) {
        precondition(checkedSkipValue(bytes, &offset, depth: 0), "a malformed index entry")
    }

    static func readBody(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> [UInt8] {
        var result: [UInt8] = []
        while true {
            let byte = bytes[offset]
            offset += 1
            if byte == 0 {
                if offset < bytes.count && bytes[offset] == 0xFF {
                    offset += 1
                } else {
                    return result
                }
            }
            result.append(byte)
        }
    }

    static func readInt(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, tag: UInt8) -> Int64 {
        let length = abs(Int(tag) - Int(_IndexTag.intZero))
        var payload: UInt64 = 0
        for _ in 0..<length {
            payload = payload << 8 | UInt64(bytes[offset])
            offset += 1
        }
        if tag >= _IndexTag.intZero { return Int64(bitPattern: payload) }
        let mask = length == 8 ? UInt64.max : (1 << UInt64(8 * length)) - 1
        let magnitude = mask - payload
        return Int64(bitPattern: 0 &- magnitude)
    }

    static func readOrdered(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64 {
        var key: UInt64 = 0
        for _ in 0..<8 {
            key = key << 8 | UInt64(bytes[offset])
            offset += 1
        }
        return key & (1 << 63) != 0 ? key & ~(1 << 63) : ~key
    }

    static func readRecordID(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> RecordID {
        let tag = bytes[offset]
        offset += 1
        switch tag {
        case _IndexTag.string: return RecordID(String(decoding: readBody(bytes, &offset), as: UTF8.self))
        case _IndexTag.uuid:
            defer { offset += 16 }
            return RecordID(UUID(bytes: bytes[offset..<(offset + 16)]))
        default: return RecordID(readInt(bytes, &offset, tag: tag))
        }
    }

    static func readValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Value {
        let tag = bytes[offset]
        offset += 1
        switch tag {
        case _IndexTag.null: return .null
        case _IndexTag.false: return .bool(false)
        case _IndexTag.true: return .bool(true)
        case 0x0C...0x1C: return .int(readInt(bytes, &offset, tag: tag))
        case _IndexTag.double: return .double(Double(bitPattern: readOrdered(bytes, &offset)))
        case _IndexTag.date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: readOrdered(bytes, &offset))))
        case _IndexTag.string: return .string(String(decoding: readBody(bytes, &offset), as: UTF8.self))
        case _IndexTag.bytes: return .bytes(readBody(bytes, &offset))
        case _IndexTag.reference:
            let table = Key(String(decoding: readBody(bytes, &offset), as: UTF8.self))
            return .reference(RecordReference(table: table, id: readRecordID(bytes, &offset)))
        case _IndexTag.list:
            var elements: [Value] = []
            while bytes[offset] != _IndexTag.end { elements.append(readValue(bytes, &offset)) }
            offset += 1
            return .list(PersistentVector(elements))
        case _IndexTag.map:
            var map = PersistentMap<Key, Value>()
            while bytes[offset] != _IndexTag.end {
                offset += 1
                let key = Key(String(decoding: readBody(bytes, &offset), as: UTF8.self))
                map[key] = readValue(bytes, &offset)
            }
            offset += 1
            return .map(map)
        default: preconditionFailure("index entry tag \(tag)")
        }
    }
}
