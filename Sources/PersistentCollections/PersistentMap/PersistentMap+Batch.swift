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
        var values: [Value?] = []
        values.reserveCapacity(count)
        _Node.forEachItem(forKeys: keys, count: count, from: root) { _, item in
            values.append(item?.pointee.value)
        }
        return values
    }

    /// Calls `body` with the position in `keys` and the value of each key
    /// present, in the order of `keys`, after looking them all up as
    /// ``values(forKeys:)`` does: no array of results is made, and `body`
    /// copies only what it keeps. O(k log16 n) for k keys.
    ///
    ///     songs.forEachValue(forKeys: ids) { position, song in
    ///         rows.append((ids[position], song))
    ///     }
    @inlinable
    public func forEachValue(
        forKeys keys: some Collection<Key>,
        _ body: (Int, borrowing Value) throws -> Void
    ) rethrows {
        let count = keys.count
        guard let root = _root, count > 0 else { return }
        try _Node.forEachItem(forKeys: keys, count: count, from: root) { position, item in
            if let item { try body(position, item.pointee.value) }
        }
    }
}
