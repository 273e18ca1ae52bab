extension PersistentMap {
    /// Checks every structural invariant of the trie and traps on the first
    /// violation: bitmaps disjoint, item and child counts within capacity,
    /// every key in the slot its hash names, canonical shape (no empty or
    /// single-item leaf below the root), collision nodes only where hash bits
    /// run out, and the stored count. O(n). Run by the tests; call it in
    /// debug code after unusual manipulation.
    public func _invariantCheck() {
        precondition(_Node._itemLayoutCheck, "the item layout computed for a node's deinit is not the compiler's")
        guard let root = _root else {
            precondition(_count == 0, "empty trie with count \(_count)")
            return
        }
        let total = root._invariantCheck(shift: 0, prefix: 0, isRoot: true)
        precondition(total == _count, "trie holds \(total) entries, count says \(_count)")
        precondition(total > 0, "a non-empty map's root is empty")
    }
}

extension PersistentMap {
    /// The number of nodes on the longest path from the root, counting the
    /// root (0 for an empty map): how many levels a lookup may descend.
    /// O(nodes). For tests and diagnostics.
    public var _maximumDepth: Int {
        guard let root = _root else { return 0 }
        var deepest = 0
        var pending: [(_Node, Int)] = [(root, 1)]
        while let (node, depth) = pending.popLast() {
            deepest = Swift.max(deepest, depth)
            for index in 0..<node.childCount {
                pending.append((node.child(index), depth + 1))
            }
        }
        return deepest
    }
}
