import Foundation
import PersistentCollections

extension Record {
    /// Whether field or key `a` sorts before `b`: by UTF-8 bytes, so that
    /// the order (and so the encoding) is the same in every process.
    static func _precedes(_ a: Key, _ b: Key) -> Bool {
        a < b
    }

    /// The packed bytes of `fields`, which must have distinct names
    /// (`isSorted`: and be in name order already).
    static func _pack(_ fields: [(name: Key, value: Value)], isSorted: Bool = false) -> [UInt8] {
        let sorted = isSorted ? fields : fields.sorted { _precedes($0.name, $1.name) }
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: sorted.count) { ids in
            // Records are packed on every core at once (an import): one
            // lock of the name table per record.
            FieldNames.ids(of: sorted.lazy.map(\.name), into: ids)
            var writer = ByteWriter(capacity: 16 + 24 * sorted.count)
            writer.varint(sorted.count)
            for (i, field) in sorted.enumerated() {
                writer.varint(UInt64(ids[i]))
                writer.value(field.value, packed: true)
            }
            return Array(writer.bytes[...])  // an exact-size copy
        }
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
        let id = newValue == nil ? FieldNames.existingID(of: name) : FieldNames.id(of: name)
        guard let id else { return }
        // Taken after the name is numbered, which then changes no copy.
        let names = FieldNames.all
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
        let bodyStart = Varint.length(of: UInt64(total))
        let suffix = _bytes[(replaced?.upperBound ?? fieldStart)...]
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            Varint.length(of: UInt64(newCount)) + (fieldStart - bodyStart) + field.bytes.count + suffix.count
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
