extension PersistentSortedMap: Sequence {
    /// Iterates the entries in key order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var _base: PersistentSortedSet<_SortedMapEntry<Key, Value>>.Iterator

        @inlinable
        init(_base: PersistentSortedSet<_SortedMapEntry<Key, Value>>.Iterator) { self._base = _base }

        /// The next entry, or nil. O(1) amortized.
        @inlinable
        public mutating func next() -> (key: Key, value: Value)? {
            _base.next().map { ($0.key, $0.value) }
        }
    }

    /// An iterator from the smallest key. O(log n).
    @inlinable
    public func makeIterator() -> Iterator { Iterator(_base: _entries.makeIterator()) }

    /// The number of entries. O(1).
    @inlinable public var underestimatedCount: Int { count }

    /// The entries whose keys lie in `range`, in key order (`reversed()`
    /// for the other). O(log n) to start.
    public func elements(in range: Range<Key>) -> [(key: Key, value: Value)] {
        let low = rank(of: range.lowerBound)
        return elements(atOffsets: low..<Swift.max(low, rank(of: range.upperBound)))
    }

    /// The entries whose keys lie in `range`, both bounds included.
    public func elements(in range: ClosedRange<Key>) -> [(key: Key, value: Value)] {
        let low = rank(of: range.lowerBound)
        let high = rank(of: range.upperBound) + (contains(range.upperBound) ? 1 : 0)
        return elements(atOffsets: low..<Swift.max(low, high))
    }

    /// The entries at offsets `offsets` (clamped), in key order: a page.
    /// O(log n + page).
    public func elements(atOffsets offsets: Range<Int>) -> [(key: Key, value: Value)] {
        _entries.elements(atOffsets: offsets).map { ($0.key, $0.value) }
    }
}

extension PersistentSortedMap: Equatable where Value: Equatable {
    /// Same keys with equal values. O(1) for copies of one tree, else O(n).
    public static func == (lhs: PersistentSortedMap, rhs: PersistentSortedMap) -> Bool {
        if lhs._entries._root === rhs._entries._root { return true }
        return lhs.count == rhs.count && lhs.elementsEqual(rhs) { $0.key == $1.key && $0.value == $1.value }
    }
}

extension PersistentSortedMap: Hashable where Key: Hashable, Value: Hashable {
    /// Hashes the entries in key order. O(n).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for (key, value) in self {
            hasher.combine(key)
            hasher.combine(value)
        }
    }
}

extension PersistentSortedMap: CustomStringConvertible {
    /// `[a: 1, b: 2]`.
    public var description: String {
        isEmpty ? "[:]" : "[" + map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

extension PersistentSortedMap: Encodable where Key: Encodable, Value: Encodable {
    /// Encodes alternating keys and values in key order, in one unkeyed container.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for (key, value) in self {
            try container.encode(key)
            try container.encode(value)
        }
    }
}

extension PersistentSortedMap: Decodable where Key: Decodable, Value: Decodable {
    /// Decodes alternating keys and values. - Throws: `DecodingError` when
    /// the keys are not strictly ascending or a value is missing.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var entries: [(Key, Value)] = []
        while !container.isAtEnd {
            let key = try container.decode(Key.self)
            if let last = entries.last, !(last.0 < key) {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "keys are not strictly ascending"
                )
            }
            guard !container.isAtEnd else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a key without a value")
            }
            entries.append((key, try container.decode(Value.self)))
        }
        self.init(sortedUniqueKeysWithValues: entries)
    }
}

extension PersistentSortedMap where Value: Equatable {
    /// The keys only in `self` (inserted), only in `other` (removed), and in
    /// both with different values (changed), each ascending. Subtrees the
    /// two share are skipped by identity: O(d · log n) node visits for d
    /// differences when one is an edited copy of the other.
    public func difference(from other: PersistentSortedMap) -> (inserted: [Key], removed: [Key], changed: [Key]) {
        var inserted: [Key] = []
        var removed: [Key] = []
        var changed: [Key] = []
        _entries._difference(
            from: other._entries,
            inserted: { inserted.append($0.key) },
            removed: { removed.append($0.key) },
            same: { new, old in if new.value != old.value { changed.append(new.key) } }
        )
        return (inserted, removed, changed)
    }
}
