extension PersistentMap {
    /// A contiguous run of a map's iteration order: some of the root's
    /// entries and subtries. Made by ``PersistentMap/parts(maximumCount:)``
    /// to spread work over threads; a part keeps its map's nodes alive.
    @frozen
    public struct Part {
        @usableFromInline let _root: _Node?
        /// The root's own entries in this part.
        @usableFromInline let _rootItems: Range<Int>
        /// The root's subtries in this part.
        @usableFromInline let _children: Range<Int>
        /// The number of entries in the part. O(1).
        public let count: Int

        @inlinable
        init(_root: _Node?, rootItems: Range<Int>, children: Range<Int>, count: Int) {
            self._root = _root
            self._rootItems = rootItems
            self._children = children
            self.count = count
        }

        /// Calls `body` on each entry of the part, in the map's iteration
        /// order. O(count).
        @inlinable
        public func forEach(_ body: (Element) throws -> Void) rethrows {
            guard let root = _root else { return }
            try root.forEachItem(inSlots: _rootItems) { try body(($0.key, $0.value)) }
            try root.forEachItem(inChildren: _children) { try body(($0.key, $0.value)) }
        }
    }

    /// The entries cut into at most `maximumCount` parts of similar size
    /// (the root's subtries are not divided, so a part holds at least one
    /// subtrie or the root's own entries). Visiting the parts in order, each
    /// with ``Part/forEach(_:)``, visits every entry once in the map's
    /// iteration order; a part can be visited on any thread.
    ///
    ///     let parts = songs.parts(maximumCount: 8)
    ///     DispatchQueue.concurrentPerform(iterations: parts.count) { k in
    ///         parts[k].forEach { id, record in … }
    ///     }
    ///
    /// - Returns: no part for an empty map; otherwise between 1 and
    ///   `max(maximumCount, 1)` parts, none of them empty.
    /// - Complexity: O(the number of nodes): each subtrie of the root is
    ///   counted, its entries are not visited.
    public func parts(maximumCount: Int) -> [Part] {
        guard let root = _root else { return [] }
        let childCount = root.childCount
        let wanted = Swift.max(1, Swift.min(maximumCount, childCount + (root.itemCount > 0 ? 1 : 0)))
        guard wanted > 1 else {
            return [Part(_root: root, rootItems: 0..<root.itemCount, children: 0..<childCount, count: _count)]
        }
        var parts: [Part] = []
        parts.reserveCapacity(wanted)
        // Cut where the running count first reaches each k/wanted of the
        // total; the root's own entries lead the first part.
        var partStart = 0
        var partCount = root.itemCount
        var reached = root.itemCount
        var rootItems = 0..<root.itemCount
        for i in 0..<childCount {
            let size = root.child(i)._entryCount()
            reached += size
            partCount += size
            let isLast = i == childCount - 1
            if isLast || reached * wanted >= (parts.count + 1) * _count {
                parts.append(Part(_root: root, rootItems: rootItems, children: partStart..<(i + 1), count: partCount))
                rootItems = 0..<0
                partStart = i + 1
                partCount = 0
            }
        }
        return parts
    }
}

extension PersistentMap.Part: @unchecked Sendable where Key: Sendable, Value: Sendable {}
