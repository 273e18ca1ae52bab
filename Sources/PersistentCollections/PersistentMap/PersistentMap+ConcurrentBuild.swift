extension PersistentMap where Key: Sendable, Value: Sendable {
    /// Creates a map from parts of entries, as
    /// `init(checkingUniqueKeysWithValues: parts.joined())` does, on every
    /// core: the parts are taken in and hashed one part per task, sorted
    /// into the trie's order for its first levels (two radix passes, one
    /// range per task), then the root's subtries are built one per task.
    /// The result is the same map.
    ///
    /// For a million entries decoded in chunks (a snapshot's), this is about
    /// the sequential build's time divided by the number of cores.
    ///
    /// Pass parts the caller holds nowhere else (their last use) and their
    /// entries are moved into the map, not copied: no retain of each key
    /// and value on the way in, and no release when the parts are freed.
    ///
    /// - Returns: nil when a key repeats, within a part or across parts.
    /// - Complexity: O(n log16 n) work, where n is the total count.
    @inlinable
    public init?(checkingUniqueKeysWithValuesOf parts: consuming [[(Key, Value)]]) {
        // A local copy the tasks can pop from (the parameter is consumed here).
        var parts = parts
        var offsets: [Int] = []
        offsets.reserveCapacity(parts.count + 1)
        var total = 0
        for part in parts {
            offsets.append(total)
            total += part.count
        }
        // Below this the tasks cost more than they save.
        guard total >= Self._concurrentBuildMinimum else {
            self.init(checkingUniqueKeysWithValues: parts.joined())
            return
        }
        guard let root = _Node.buildConcurrently(moving: &parts, offsets: offsets, count: total) else { return nil }
        self.init(_root: root, count: total)
        _checkAfterMutation()
    }

    /// Entries from which ``init(checkingUniqueKeysWithValuesOf:)`` builds on
    /// every core.
    @inlinable static var _concurrentBuildMinimum: Int { 4_096 }
}
