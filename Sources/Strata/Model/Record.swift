import PersistentCollections

/// One record's fields: a small set of (name, value) pairs, stored packed.
///
/// Records hold 5–30 fields and a database holds up to millions of them, so
/// the layout is chosen for bytes per record: one exact-size byte array
/// holding the fields in the codec's compact encoding, each field name
/// replaced by a process-wide integer ID (one byte for the first 128
/// names). A song of 10 fields takes ~150 bytes plus the array's 32-byte
/// header, against ~1,000 for an array of `(String, Value)` pairs with their
/// out-of-line strings, list and reference boxes. Reading a field scans the
/// fields (O(k), k ≤ ~30, no allocation but the value's own) and decodes
/// the value; writing one splices the bytes (O(record size)). Equality and
/// hashing compare the bytes.
///
/// Field names are ``Key``s: they compare and sort by their UTF-8 bytes, so
/// `"\u{E9}"` and `"e\u{301}"` name two fields. Iteration and encoding use
/// that order, so equal records encode to equal bytes in every process.
public struct Record: Sendable {
    /// A named field.
    public struct Field: Hashable, Sendable {
        /// The field's name.
        public let name: Key
        /// The field's value.
        public var value: Value

        /// A field named `name` holding `value`.
        public init(name: Key, value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// The packed fields (layout in `Format/PackedReader.swift`).
    var _bytes: [UInt8]

    /// A record with no fields. O(1).
    public init() {
        _bytes = [0]
    }

    /// A record from trusted packed bytes.
    init(_packed bytes: [UInt8]) {
        _bytes = bytes
    }

    /// A record with the given fields. O(k log k).
    public init(_ fields: [Key: Value]) {
        _bytes = Self._pack(fields.map { (name: $0.key, value: $0.value) })
    }

    /// A record with the given fields, in any order; a name given more
    /// than once keeps its last value (as JSON objects read). O(k log k).
    public init(fields: [(Key, Value)]) {
        // By name, then by position: the last of each name ends its run.
        var order = Array(fields.indices)
        order.sort { a, b in
            let (x, y) = (fields[a].0, fields[b].0)
            return Self._precedes(x, y) || (x == y && a < b)
        }
        var unique: [(name: Key, value: Value)] = []
        unique.reserveCapacity(fields.count)
        for (position, index) in order.enumerated()
        where position == order.count - 1 || fields[order[position + 1]].0 != fields[index].0 {
            unique.append(fields[index])
        }
        _bytes = Self._pack(unique, isSorted: true)
    }

    /// The number of fields. O(1).
    public var count: Int {
        var reader = _PackedReader(_bytes)
        return Int(reader.varint())
    }

    /// Whether the record has no fields. O(1).
    public var isEmpty: Bool { count == 0 }

    /// The fields in name order. O(size).
    public var fields: [Field] { Array(self) }

    /// How many distinct field names this process has interned (records
    /// store a small integer per field instead of the name): names of
    /// records built or decoded and kept; a rejected input adds none.
    /// For diagnostics. O(1).
    public static var internedFieldNameCount: Int { FieldNames.count }

    /// Whether this process holds `name` in its table of field names (see
    /// `internedFieldNameCount`), without adding it. For diagnostics. O(1).
    public static func isFieldNameInterned(_ name: Key) -> Bool {
        FieldNames.existingID(of: name) != nil
    }

    /// The field names in order. O(k).
    public var names: [Key] {
        let all = FieldNames.all
        var result: [Key] = []
        _forEachField { id, _ in
            result.append(all[Int(id)])
            return true
        }
        return result
    }

    /// The number of bytes the packed fields occupy (the record's heap
    /// footprint is this plus a 32-byte array header). O(1).
    public var packedSize: Int { _bytes.count }

    /// The value of field `name`; setting nil removes the field. O(k) to
    /// read, O(record size) to write.
    public subscript(name: Key) -> Value? {
        get {
            guard let id = FieldNames.existingID(of: name), let range = _valueRange(of: id) else { return nil }
            return _value(at: range)
        }
        set {
            _set(name, newValue)
        }
    }

    /// The value at a path: the field `path[0]`, then keys of nested maps.
    /// Nil where the path does not lead to a value. O(k + depth · log16 n).
    public subscript(path path: FieldPath) -> Value? {
        guard let field = self[path.field] else { return nil }
        return field[path: path.keys]
    }
}

extension Record: Hashable {
    /// Equal fields with equal values. O(size).
    public static func == (lhs: Record, rhs: Record) -> Bool { lhs._bytes == rhs._bytes }

    /// Hashes the packed fields. O(size).
    public func hash(into hasher: inout Hasher) {
        _bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

extension Record: ExpressibleByDictionaryLiteral {
    /// A record from `["title": "Blue River", "plays": 12]`; a repeated name
    /// keeps its last value.
    public init(dictionaryLiteral elements: (Key, Value)...) {
        var latest: [Key: Value] = [:]
        for (name, value) in elements { latest[name] = value }
        self.init(latest)
    }
}

extension Record: Sequence {
    /// Iterates the fields in name order, decoding each value as it goes.
    public struct Iterator: IteratorProtocol {
        var _reader: _PackedReader
        var _remaining: Int
        let _names: PersistentVector<Key>

        /// The next field, or nil after the last.
        public mutating func next() -> Field? {
            guard _remaining > 0 else { return nil }
            _remaining -= 1
            let name = _names[Int(_reader.varint())]
            return Field(name: name, value: _reader.value())
        }
    }

    /// An iterator over the fields in name order.
    public func makeIterator() -> Iterator {
        var reader = _PackedReader(_bytes)
        let count = Int(reader.varint())
        return Iterator(_reader: reader, _remaining: count, _names: FieldNames.all)
    }

    /// The number of fields. O(1).
    public var underestimatedCount: Int { count }
}

extension Record: CustomStringConvertible {
    /// `{name: value, ...}` in name order.
    public var description: String {
        "{" + map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "}"
    }
}
