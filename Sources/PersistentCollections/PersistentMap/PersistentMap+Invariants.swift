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
    /// Whether this build checks the map's invariants inside every
    /// mutation (a build with `STRATA_INTERNAL_CHECKS`, as `make test`
    /// makes). Documented complexities do not hold in such a build.
    public static var _isConsistencyCheckingEnabled: Bool { _internalChecks }

    /// After a mutation that changed the entry whose key hashes to `hash`:
    /// in a checking build, the whole map when it is small, else the nodes
    /// on that key's path. Nothing in other builds.
    @inlinable @inline(__always)
    func _checkAfterMutation(hash: UInt64) {
        if _internalChecks { _checkChangedPath(hash: hash) }
    }

    /// After a mutation of the whole map (a build, a transform): in a
    /// checking build, every invariant. Nothing in other builds.
    @inlinable @inline(__always)
    func _checkAfterMutation() {
        if _internalChecks { _invariantCheck() }
    }

    /// After a mutation that changed the entries of the keys of `changes`:
    /// the whole map when it is small, else each of those keys' paths.
    @inlinable @inline(__always)
    func _checkAfterMutation<Change>(ofKeysIn changes: PersistentMap<Key, Change>) {
        if _internalChecks { _checkChangedPaths(changes.keys) }
    }

    @usableFromInline @inline(never)
    func _checkChangedPaths(_ keys: some Sequence<Key>) {
        guard _count > _wholeCheckLimit, let root = _root else { return _invariantCheck() }
        for key in keys { root._checkPath(of: _hash(key)) }
    }

    @usableFromInline @inline(never)
    func _checkChangedPath(hash: UInt64) {
        guard _count > _wholeCheckLimit, let root = _root else { return _invariantCheck() }
        root._checkPath(of: hash)
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
