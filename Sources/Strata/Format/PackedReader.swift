import Foundation
import PersistentCollections

// A record's fields live in one byte array, in the same encoding the binary
// codec writes for a value, with two differences: field names and the table
// names of references are process-wide `FieldNames` IDs instead of names,
// and the bytes are trusted — they were produced by `ByteWriter.value(_:packed:)`
// or validated by the codec — so reading them never fails.
//
//     record := count (varint), field*           fields sorted by name (UTF-8 order)
//     field  := name ID (varint), value
//     value  := tag, payload                     `ValueTag`, as in the codec
//     record ID := tag, payload                  `RecordIDTag`, as in the codec

/// Reads trusted packed bytes; out-of-range reads trap, since they mean a
/// bug in this module, never bad input.
struct _PackedReader {
    let bytes: [UInt8]
    var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() -> UInt64 { Varint.readTrusted(bytes, at: &offset) }

    /// A value's tag; the bytes were checked when they were packed.
    mutating func valueTag() -> ValueTag { ValueTag(byte: byte())! }

    mutating func zigzag() -> Int64 {
        let raw = varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func fixed64() -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return value
    }

    mutating func string() -> String {
        let length = Int(varint())
        defer { offset += length }
        return String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
    }

    mutating func recordID() -> RecordID {
        switch RecordIDTag(rawValue: byte())! {
        case .integer: return RecordID(zigzag())
        case .string: return RecordID(string())
        case .uuid:
            defer { offset += 16 }
            return RecordID(UUID(bytes: bytes[offset..<(offset + 16)]))
        }
    }

    /// The value at the reader. Lists and maps are entered by recursion
    /// down to ``Value/recursionLimit`` levels, deeper ones on the heap
    /// (`deepValue()`): a record built in memory may nest without bound.
    mutating func value(levelsAbove: Int = 0) -> Value {
        let start = offset
        switch valueTag() {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(zigzag())
        case .double: return .double(Double(bitPattern: fixed64()))
        case .string: return .string(string())
        case .bytes:
            let length = Int(varint())
            defer { offset += length }
            return .bytes(Array(bytes[offset..<(offset + length)]))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: fixed64())))
        case .reference:
            let table = FieldNames.name(UInt32(varint()))
            return .reference(RecordReference(table: table, id: recordID()))
        case .list:
            guard levelsAbove < Value.recursionLimit else {
                offset = start
                return deepValue()
            }
            let count = Int(varint())
            var elements: [Value] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(value(levelsAbove: levelsAbove + 1)) }
            return .list(PersistentVector(elements))
        case .map:
            guard levelsAbove < Value.recursionLimit else {
                offset = start
                return deepValue()
            }
            let count = Int(varint())
            var map = PersistentMap<Key, Value>.Builder()
            for _ in 0..<count {
                let key = Key(string())
                map.updateValue(value(levelsAbove: levelsAbove + 1), forKey: key)
            }
            return .map(map.build())
        }
    }

    /// Moves past one value without building it (past
    /// ``Value/recursionLimit`` levels without recursion).
    mutating func skipValue(levelsAbove: Int = 0) {
        let start = offset
        switch valueTag() {
        case .null, .false, .true: return
        case .int: _ = varint()
        case .double, .date: offset += 8
        case .string, .bytes: offset += Int(varint())
        case .reference:
            _ = varint()
            skipRecordID()
        case .list:
            guard levelsAbove < Value.recursionLimit else {
                offset = start
                return walkValue { _ in }
            }
            for _ in 0..<varint() { skipValue(levelsAbove: levelsAbove + 1) }
        case .map:
            guard levelsAbove < Value.recursionLimit else {
                offset = start
                return walkValue { _ in }
            }
            for _ in 0..<varint() {
                offset += Int(varint())
                skipValue(levelsAbove: levelsAbove + 1)
            }
        }
    }

    /// Moves past one value, returning how many lists and maps it nests
    /// (0 for a scalar): what the codec's depth limit counts.
    mutating func skipValueMeasuringNesting(levelsAbove: Int = 0) -> Int {
        // A record being refused for its depth may nest thousands of levels:
        // past the recursion limit, the rest is measured on the heap.
        guard levelsAbove < Value.recursionLimit else { return skipDeepValueMeasuringNesting() }
        let start = offset
        switch valueTag() {
        case .list:
            var deepest = 0
            for _ in 0..<varint() {
                deepest = Swift.max(deepest, skipValueMeasuringNesting(levelsAbove: levelsAbove + 1))
            }
            return deepest + 1
        case .map:
            var deepest = 0
            for _ in 0..<varint() {
                offset += Int(varint())
                deepest = Swift.max(deepest, skipValueMeasuringNesting(levelsAbove: levelsAbove + 1))
            }
            return deepest + 1
        default:
            offset = start
            skipValue()
            return 0
        }
    }

    /// ``skipValueMeasuringNesting(levelsAbove:)`` without recursion.
    mutating func skipDeepValueMeasuringNesting() -> Int {
        // `open` holds, per list or map entered, the values it still holds.
        var open: [(left: UInt64, isMap: Bool)] = []
        var deepest = 0
        while true {
            let start = offset
            switch valueTag() {
            case .list:
                open.append((varint(), false))
                deepest = Swift.max(deepest, open.count)
            case .map:
                open.append((varint(), true))
                deepest = Swift.max(deepest, open.count)
            default:
                offset = start
                skipValue()
            }
            while let last = open.last, last.left == 0 { open.removeLast() }
            guard !open.isEmpty else { return deepest }
            open[open.count - 1].left -= 1
            // A map's next value follows its key.
            if open[open.count - 1].isMap { offset += Int(varint()) }
        }
    }

    mutating func skipRecordID() {
        switch RecordIDTag(rawValue: byte())! {
        case .integer: _ = varint()
        case .string: offset += Int(varint())
        case .uuid: offset += 16
        }
    }
}
