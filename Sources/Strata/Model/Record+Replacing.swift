import PersistentCollections

// Many fields changed at once: one pass over the packed bytes, where
// setting them one at a time splices the whole record once per field
// (an update of every field of a 50,000-field record took 81 s).

extension Record {
    /// Changes of more fields than this go through `_replacing(_:)` and
    /// `_values(of:)`; fewer, one field at a time (no sort, no dictionary).
    static let _bulkFieldMinimum = 8

    /// This record with each of `changes`' fields set to its value (nil:
    /// removed). The names must be distinct. O(size + k log k) for k
    /// changes.
    func _replacing(_ changes: [(name: Key, value: Value?)]) -> Record {
        let sorted = changes.sorted { Self._precedes($0.name, $1.name) }
        // A name twice would write its field twice.
        assert(zip(sorted, sorted.dropFirst()).allSatisfy { $0.name != $1.name }, "a field changed twice")
        // Numbered before the names are read, so that a new name does not
        // change a copy held here.
        let ids = sorted.map { $0.value == nil ? FieldNames.existingID(of: $0.name) : FieldNames.id(of: $0.name) }
        let names = FieldNames.all
        var body = ByteWriter(capacity: _bytes.count + 16 * sorted.count)
        var count = 0
        var next = 0
        func write(_ change: Int) {
            guard let value = sorted[change].value, let id = ids[change] else { return }
            body.varint(UInt64(id))
            body.value(value, packed: true)
            count += 1
        }
        var reader = _PackedReader(_bytes)
        let total = reader.varint()
        for _ in 0..<total {
            let start = reader.offset
            let id = UInt32(reader.varint())
            reader.skipValue()
            let name = names[Int(id)]
            // Changes of fields the record lacks, in order before this one.
            while next < sorted.count, Self._precedes(sorted[next].name, name) {
                write(next)
                next += 1
            }
            if next < sorted.count, sorted[next].name == name {
                write(next)
                next += 1
            } else {
                body.bytes.append(bytesOf: _bytes, in: start..<reader.offset)
                count += 1
            }
        }
        while next < sorted.count {
            write(next)
            next += 1
        }
        var head = ByteWriter(capacity: Varint.length(of: UInt64(count)) + body.bytes.count)
        head.varint(count)
        head.bytes.append(contentsOf: body.bytes)
        return Record(_packed: Array(head.bytes[...]))
    }

    /// The values of fields `names` (nil: absent), read in one pass.
    /// O(size + k).
    func _values(of names: some Sequence<Key>) -> [Key: Value?] {
        var values: [Key: Value?] = [:]
        var wanted: [UInt32: Key] = [:]
        for name in names {
            values[name] = .some(nil)
            if let id = FieldNames.existingID(of: name) { wanted[id] = name }
        }
        var missing = wanted.count
        guard missing > 0 else { return values }
        _forEachField { id, range in
            if let name = wanted[id] {
                values[name] = .some(_value(at: range))
                missing -= 1
            }
            return missing > 0
        }
        return values
    }
}
