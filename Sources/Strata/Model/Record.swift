import PersistentCollections

/// One record's fields: a small sorted array of (name, value) pairs.
///
/// Records hold 5–30 fields. A sorted array is the compact layout for that
/// size: one allocation of 32 + 40·k bytes (a `String` field name of up to
/// 15 UTF-8 bytes is stored inline, a `Value` is 17 bytes padded to 24),
/// lookups by binary search, iteration and encoding in a canonical (name)
/// order, and an update copies at most ~1 KB — the same order as a trie's
/// path copy, without its per-node headers. A per-record hash trie would
/// spend a node header and hashing on every record for no asymptotic gain.
public struct Record: Sendable {
    /// A named field.
    public struct Field: Hashable, Sendable {
        /// The field's name.
        public let name: String
        /// The field's value.
        public var value: Value

        /// A field named `name` holding `value`.
        public init(name: String, value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// Fields sorted by name, names unique.
    @usableFromInline var _fields: [Field]

    /// A record with no fields. O(1).
    public init() {
        _fields = []
    }

    /// A record from fields already sorted by name with unique names.
    init(sortedFields: [Field]) {
        _fields = sortedFields
    }

    /// A record with the given fields. O(k log k).
    public init(_ fields: [String: Value]) {
        _fields = fields.map { Field(name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
    }

    /// The number of fields. O(1).
    public var count: Int { _fields.count }

    /// Whether the record has no fields. O(1).
    public var isEmpty: Bool { _fields.isEmpty }

    /// The fields in name order.
    public var fields: [Field] { _fields }

    /// The field names in order.
    public var names: [String] { _fields.map(\.name) }

    /// Where `name` is, or where it would be inserted.
    @usableFromInline
    func _search(_ name: String) -> (index: Int, found: Bool) {
        var low = 0
        var high = _fields.count
        while low < high {
            let mid = (low + high) / 2
            let candidate = _fields[mid].name
            if candidate == name { return (mid, true) }
            if candidate < name { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    /// The value of field `name`; setting nil removes the field. O(log k) to
    /// read, O(k) to write.
    public subscript(name: String) -> Value? {
        get {
            let (index, found) = _search(name)
            return found ? _fields[index].value : nil
        }
        set {
            let (index, found) = _search(name)
            switch (found, newValue) {
            case (true, let value?): _fields[index].value = value
            case (true, nil): _fields.remove(at: index)
            case (false, let value?): _fields.insert(Field(name: name, value: value), at: index)
            case (false, nil): break
            }
        }
    }

    /// The value at a path: the field `path[0]`, then keys of nested maps.
    /// Nil where the path does not lead to a value. O(log k + depth · log32 n).
    public subscript(path path: FieldPath) -> Value? {
        guard let field = self[path.field] else { return nil }
        return field[path: path.keys]
    }
}

extension Record: Hashable {
    /// Equal fields with equal values. O(k).
    public static func == (lhs: Record, rhs: Record) -> Bool { lhs._fields == rhs._fields }

    /// Hashes the fields in name order. O(k).
    public func hash(into hasher: inout Hasher) { hasher.combine(_fields) }
}

extension Record: ExpressibleByDictionaryLiteral {
    /// A record from `["title": "Blue River", "plays": 12]`; a repeated name
    /// keeps its last value.
    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init()
        for (name, value) in elements { self[name] = value }
    }
}

extension Record: Sequence {
    /// Iterates the fields in name order.
    public func makeIterator() -> IndexingIterator<[Field]> { _fields.makeIterator() }
}

extension Record: CustomStringConvertible {
    /// `{name: value, ...}` in name order.
    public var description: String {
        "{" + _fields.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "}"
    }
}
