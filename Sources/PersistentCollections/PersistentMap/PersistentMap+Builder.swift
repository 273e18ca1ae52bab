extension PersistentMap {
    /// Accumulates entries into a map that no one else can see yet, so every
    /// insert mutates nodes in place (no path copies). `build()` hands the
    /// result over in O(1).
    ///
    ///     var builder = PersistentMap<Int, String>.Builder()
    ///     for song in songs { builder[song.id] = song.title }
    ///     let map = builder.build()
    ///
    /// For a sequence of distinct keys known up front,
    /// ``PersistentMap/init(uniqueKeysWithValues:)-6rka0`` is faster still: it
    /// builds every node at its final size in one pass.
    @frozen
    public struct Builder {
        @usableFromInline var _map: PersistentMap

        /// An empty builder.
        @inlinable
        public init() {
            _map = PersistentMap()
        }

        /// A builder that starts from `map`; its first change to each shared
        /// node copies it, later changes are in place.
        @inlinable
        public init(_ map: PersistentMap) {
            _map = map
        }

        /// The number of entries so far. O(1).
        @inlinable public var count: Int { _map.count }

        /// Sets `value` for `key`, returning the replaced value. O(log16 n).
        @inlinable
        @discardableResult
        public mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
            _map.updateValue(value, forKey: key)
        }

        /// Removes `key`, returning its value. O(log16 n).
        @inlinable
        @discardableResult
        public mutating func removeValue(forKey key: Key) -> Value? {
            _map.removeValue(forKey: key)
        }

        /// Reads or writes the value for `key`. O(log16 n).
        @inlinable
        public subscript(key: Key) -> Value? {
            get { _map[key] }
            set { _map[key] = newValue }
        }

        /// The map built so far. O(1).
        @inlinable
        public func build() -> PersistentMap { _map }
    }
}

extension PersistentMap {
    /// Creates a map from distinct keys and their values, building every
    /// node at its final size in one pass (faster than inserting one by
    /// one). O(n log16 n).
    ///
    /// - Precondition: the keys are distinct.
    @inlinable
    public init(uniqueKeysWithValues entries: some Sequence<(Key, Value)>) {
        guard let map = PersistentMap(checkingUniqueKeysWithValues: entries) else {
            preconditionFailure("PersistentMap(uniqueKeysWithValues:): duplicate keys")
        }
        self = map
    }

    /// Creates a map from distinct keys and their values given as labeled
    /// pairs (another map's or a `Dictionary`'s elements), without the
    /// dynamic cast per element that converting them to unlabeled pairs
    /// costs. O(n log16 n).
    ///
    /// - Precondition: the keys are distinct.
    @inlinable
    public init(uniqueKeysWithValues entries: some Sequence<(key: Key, value: Value)>) {
        self.init(uniqueKeysWithValues: entries.lazy.map { ($0.key, $0.value) })
    }

    /// Creates a map from keys and their values like
    /// `init(uniqueKeysWithValues:)`, or returns nil when a key repeats
    /// (for input that is not trusted, such as a decoded file). O(n log16 n).
    @inlinable
    public init?(checkingUniqueKeysWithValues entries: some Sequence<(Key, Value)>) {
        guard let built = _Node.build(entries) else { return nil }
        self.init(_root: built.root, count: built.count)
        _checkAfterMutation()
    }

    /// Creates a map from entries that may repeat a key, combining the
    /// values of a repeated key with `combine(old, new)`. O(n log16 n).
    @inlinable
    public init<S: Sequence>(
        _ entries: S,
        uniquingKeysWith combine: (Value, Value) throws -> Value
    ) rethrows where S.Element == (Key, Value) {
        self.init()
        try merge(entries, uniquingKeysWith: combine)
    }
}

extension PersistentMap: ExpressibleByDictionaryLiteral {
    /// Creates a map from a dictionary literal.
    ///
    /// - Precondition: the keys are distinct.
    @inlinable
    public init(dictionaryLiteral elements: (Key, Value)...) {
        self.init(uniqueKeysWithValues: elements)
    }
}
