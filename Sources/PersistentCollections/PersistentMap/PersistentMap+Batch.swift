extension PersistentMap {
    /// The values for `keys`, in their order; nil where a key is absent.
    /// O(k log16 n) for k keys, like k lookups.
    ///
    /// The lookups descend together, one trie level at a time, so that the
    /// memory reads of different keys overlap: on a map larger than the
    /// processor's caches, where each level of a lookup waits for memory,
    /// ten keys cost little more than one.
    ///
    ///     let songs = library.values(forKeys: albumTrackIDs)
    ///
    /// - Parameter keys: The keys to look up, in the order of the result.
    @inlinable
    public func values(forKeys keys: some Collection<Key>) -> [Value?] {
        let count = keys.count
        guard let root = _root, count > 0 else { return Array(repeating: nil, count: count) }
        return _Node.values(forKeys: keys, count: count, from: root)
    }
}
