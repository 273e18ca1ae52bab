extension PersistentMap where Value: Equatable {
    /// The keys that differ between two versions of a map.
    @frozen
    public struct Difference {
        /// Keys present in the newer map only.
        public var inserted: [Key]
        /// Keys present in the older map only.
        public var removed: [Key]
        /// Keys present in both whose values differ.
        public var changed: [Key]

        /// Creates a difference from its three key lists.
        @inlinable
        public init(inserted: [Key] = [], removed: [Key] = [], changed: [Key] = []) {
            self.inserted = inserted
            self.removed = removed
            self.changed = changed
        }

        /// Whether the two maps were equal.
        @inlinable
        public var isEmpty: Bool { inserted.isEmpty && removed.isEmpty && changed.isEmpty }
    }

    /// What changed from `older` to this map: the keys inserted, removed and
    /// changed. Subtrees the two versions share are skipped by identity, so
    /// the time is proportional to the differing subtrees, not to the size
    /// of the map: 100 changes in a million entries touch a few hundred
    /// nodes.
    ///
    /// Look up the old and new values with `older[key]` and `self[key]`.
    @inlinable
    public func difference(from older: PersistentMap) -> Difference {
        var result = Difference()
        switch (older._root, _root) {
        case (nil, nil):
            break
        case (let old?, nil):
            old.forEachItem { result.removed.append($0.key) }
        case (nil, let new?):
            new.forEachItem { result.inserted.append($0.key) }
        case let (old?, new?):
            _Node.difference(old, new, into: &result)
        }
        return result
    }
}

extension PersistentMap.Difference: Equatable where Key: Equatable {}
extension PersistentMap.Difference: Sendable where Key: Sendable {}
