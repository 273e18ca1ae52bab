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
//     value  := tag, payload                     tags as in the codec:
//        0 null · 1 false · 2 true · 3 int (zigzag) · 4 double (8 bytes LE)
//        5 string (length, UTF-8) · 6 bytes (length, bytes) · 7 date (8 bytes LE)
//        8 reference (table name ID, record ID) · 9 list (count, value*)
//        10 map (count, (key string, value)* sorted by key UTF-8)
//     record ID := 0 int (zigzag) · 1 string (length, UTF-8) · 2 UUID (16 bytes)

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

    mutating func varint() -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = byte()
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

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
        switch byte() {
        case 0: return RecordID(zigzag())
        case 1: return RecordID(string())
        default:
            let b = bytes[offset..<(offset + 16)].map { $0 }
            offset += 16
            return RecordID(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )
                )
            )
        }
    }

    mutating func value() -> Value {
        switch byte() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .int(zigzag())
        case 4: return .double(Double(bitPattern: fixed64()))
        case 5: return .string(string())
        case 6:
            let length = Int(varint())
            defer { offset += length }
            return .bytes(Array(bytes[offset..<(offset + length)]))
        case 7: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: fixed64())))
        case 8:
            let table = FieldNames.name(UInt32(varint()))
            return .reference(RecordReference(table: table, id: recordID()))
        case 9:
            let count = Int(varint())
            var elements: [Value] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(value()) }
            return .list(PersistentVector(elements))
        default:
            let count = Int(varint())
            var map = PersistentMap<Key, Value>.Builder()
            for _ in 0..<count {
                let key = Key(string())
                map.updateValue(value(), forKey: key)
            }
            return .map(map.build())
        }
    }

    /// Moves past one value without building it.
    mutating func skipValue() {
        switch byte() {
        case 0, 1, 2: return
        case 3: _ = varint()
        case 4, 7: offset += 8
        case 5, 6: offset += Int(varint())
        case 8:
            _ = varint()
            skipRecordID()
        case 9:
            for _ in 0..<varint() { skipValue() }
        default:
            for _ in 0..<varint() {
                offset += Int(varint())
                skipValue()
            }
        }
    }

    /// Moves past one value, returning how many lists and maps it nests
    /// (0 for a scalar): what the codec's depth limit counts.
    mutating func skipValueMeasuringNesting() -> Int {
        let start = offset
        switch byte() {
        case 9:
            var deepest = 0
            for _ in 0..<varint() { deepest = Swift.max(deepest, skipValueMeasuringNesting()) }
            return deepest + 1
        case 10:
            var deepest = 0
            for _ in 0..<varint() {
                offset += Int(varint())
                deepest = Swift.max(deepest, skipValueMeasuringNesting())
            }
            return deepest + 1
        default:
            offset = start
            skipValue()
            return 0
        }
    }

    mutating func skipRecordID() {
        switch byte() {
        case 0: _ = varint()
        case 1: offset += Int(varint())
        default: offset += 16
        }
    }
}

extension Record {
    /// Whether field or key `a` sorts before `b`: by UTF-8 bytes, so that
    /// the order (and so the encoding) is the same in every process.
    static func _precedes(_ a: Key, _ b: Key) -> Bool {
        a < b
    }

    /// The packed bytes of `fields`, which must have distinct names.
    static func _pack(_ fields: [(name: Key, value: Value)]) -> [UInt8] {
        let sorted = fields.sorted { _precedes($0.name, $1.name) }
        var writer = ByteWriter(capacity: 16 + 24 * sorted.count)
        writer.varint(sorted.count)
        for field in sorted {
            writer.varint(UInt64(FieldNames.id(of: field.name)))
            writer.value(field.value, packed: true)
        }
        return Array(writer.bytes[...])  // an exact-size copy
    }

    /// Calls `body` with each field's name ID and the byte range of its
    /// value, in order, until it returns false.
    func _forEachField(_ body: (_ id: UInt32, _ value: Range<Int>) -> Bool) {
        var reader = _PackedReader(_bytes)
        let count = reader.varint()
        for _ in 0..<count {
            let id = UInt32(reader.varint())
            let start = reader.offset
            reader.skipValue()
            if !body(id, start..<reader.offset) { return }
        }
    }

    /// The first field whose value nests more than `limit` lists and maps,
    /// with its nesting; nil when every field is within it. O(record size).
    func _fieldNested(deeperThan limit: Int) -> (name: Key, depth: Int)? {
        // Each level takes at least 2 bytes (tag, count): a small record cannot be too deep.
        guard _bytes.count > 2 * limit else { return nil }
        var reader = _PackedReader(_bytes)
        let count = reader.varint()
        for _ in 0..<count {
            let id = UInt32(reader.varint())
            let depth = reader.skipValueMeasuringNesting()
            if depth > limit { return (FieldNames.all[Int(id)], depth) }
        }
        return nil
    }

    /// The byte range of field `id`'s value, if present.
    func _valueRange(of id: UInt32) -> Range<Int>? {
        var found: Range<Int>?
        _forEachField { fieldID, range in
            if fieldID == id { found = range }
            return found == nil
        }
        return found
    }

    /// The value stored at `range` of the packed bytes.
    func _value(at range: Range<Int>) -> Value {
        var reader = _PackedReader(_bytes, offset: range.lowerBound)
        return reader.value()
    }

    /// Replaces, inserts or (for nil) removes field `name`, splicing the
    /// bytes: O(record size).
    mutating func _set(_ name: Key, _ newValue: Value?) {
        let names = FieldNames.all
        let id = newValue == nil ? FieldNames.existingID(of: name) : FieldNames.id(of: name)
        guard let id else { return }
        // Where the field is, or where it would go.
        var fieldStart = 0
        var replaced: Range<Int>?
        var reader = _PackedReader(_bytes)
        let total = Int(reader.varint())
        fieldStart = reader.offset
        for _ in 0..<total {
            let start = reader.offset
            let fieldID = UInt32(reader.varint())
            if fieldID == id {
                reader.skipValue()
                replaced = start..<reader.offset
                fieldStart = start
                break
            }
            if Self._precedes(name, names[Int(fieldID)]) {
                fieldStart = start
                break
            }
            reader.skipValue()
            fieldStart = reader.offset
        }
        if replaced == nil && newValue == nil { return }
        var field = ByteWriter(capacity: 32)
        if let newValue {
            field.varint(UInt64(id))
            field.value(newValue, packed: true)
        }
        let newCount = total + (replaced == nil ? 1 : 0) - (newValue == nil ? 1 : 0)
        let bodyStart = _PackedReader.varintLength(UInt64(total))
        let suffix = _bytes[(replaced?.upperBound ?? fieldStart)...]
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            _PackedReader.varintLength(UInt64(newCount)) + (fieldStart - bodyStart) + field.bytes.count + suffix.count
        )
        var head = ByteWriter(capacity: 0)
        head.varint(newCount)
        bytes.append(contentsOf: head.bytes)
        bytes.append(contentsOf: _bytes[bodyStart..<fieldStart])
        bytes.append(contentsOf: field.bytes)
        bytes.append(contentsOf: suffix)
        _bytes = bytes
    }
}

extension _PackedReader {
    static func varintLength(_ value: UInt64) -> Int {
        var length = 1
        var v = value
        while v >= 0x80 {
            v >>= 7
            length += 1
        }
        return length
    }
}
