extension PersistentMap {
    /// The keys of a map, in its iteration order.
    @frozen
    public struct Keys: Collection {
        public typealias Index = PersistentMap.Index
        public typealias Element = Key

        @usableFromInline let _base: PersistentMap

        @inlinable
        init(_base: PersistentMap) {
            self._base = _base
        }

        /// Iterates the keys without touching the values.
        @frozen
        public struct Iterator: IteratorProtocol {
            @usableFromInline var _base: PersistentMap.Iterator

            @inlinable
            init(_base: PersistentMap.Iterator) {
                self._base = _base
            }

            /// The next key, or nil. O(1) amortized.
            @inlinable
            public mutating func next() -> Key? { _base.next()?.key }
        }

        /// An iterator over the keys. O(1).
        @inlinable public func makeIterator() -> Iterator { Iterator(_base: _base.makeIterator()) }
        /// The number of keys. O(1).
        @inlinable public var count: Int { _base.count }
        /// Whether there are no keys. O(1).
        @inlinable public var isEmpty: Bool { _base.isEmpty }
        /// The first position. O(log16 n).
        @inlinable public var startIndex: Index { _base.startIndex }
        /// The past-the-end position. O(1).
        @inlinable public var endIndex: Index { _base.endIndex }
        /// The position after `i`. O(log16 n).
        @inlinable public func index(after i: Index) -> Index { _base.index(after: i) }
        /// The key at `position`. O(log16 n).
        @inlinable public subscript(position: Index) -> Key { _base._key(at: position) }
        /// Whether `key` is in the map. O(log16 n), not O(n).
        @inlinable public func contains(_ key: Key) -> Bool { _base.contains(key) }

        /// Calls `body` on each key, in the map's order, without reading
        /// (or retaining) any value: on a map whose values live elsewhere
        /// in memory, that is a cache miss saved per entry. O(n).
        @inlinable
        public func forEach(_ body: (Key) throws -> Void) rethrows {
            try _base._root?.forEachKey(body)
        }
    }

    /// The values of a map, in its iteration order.
    @frozen
    public struct Values: Collection {
        public typealias Index = PersistentMap.Index
        public typealias Element = Value

        @usableFromInline let _base: PersistentMap

        @inlinable
        init(_base: PersistentMap) {
            self._base = _base
        }

        /// Iterates the values.
        @frozen
        public struct Iterator: IteratorProtocol {
            @usableFromInline var _base: PersistentMap.Iterator

            @inlinable
            init(_base: PersistentMap.Iterator) {
                self._base = _base
            }

            /// The next value, or nil. O(1) amortized.
            @inlinable
            public mutating func next() -> Value? { _base.next()?.value }
        }

        /// An iterator over the values. O(1).
        @inlinable public func makeIterator() -> Iterator { Iterator(_base: _base.makeIterator()) }
        /// The number of values. O(1).
        @inlinable public var count: Int { _base.count }
        /// Whether there are no values. O(1).
        @inlinable public var isEmpty: Bool { _base.isEmpty }
        /// The first position. O(log16 n).
        @inlinable public var startIndex: Index { _base.startIndex }
        /// The past-the-end position. O(1).
        @inlinable public var endIndex: Index { _base.endIndex }
        /// The position after `i`. O(log16 n).
        @inlinable public func index(after i: Index) -> Index { _base.index(after: i) }
        /// The value at `position`. O(log16 n).
        @inlinable public subscript(position: Index) -> Value { _base._value(at: position) }
    }

    /// The keys, as a collection sharing this map's storage. O(1).
    @inlinable public var keys: Keys { Keys(_base: self) }

    /// The values, as a collection sharing this map's storage. O(1).
    @inlinable public var values: Values { Values(_base: self) }
}

extension PersistentMap.Keys: Sendable where Key: Sendable, Value: Sendable {}
extension PersistentMap.Values: Sendable where Key: Sendable, Value: Sendable {}
