extension PersistentVector {
    /// Checks every structural invariant and traps on the first violation:
    /// counts, the tail, node kinds per height, no empty nodes, regular
    /// nodes left-dense (every child but the last complete), size tables
    /// consistent and never ahead of the radix guess, and the height bound
    /// (log16 n + 2). The RRB search-step bound itself is a property of the
    /// concatenation plan (each rebalanced level within `extraSearchSteps`
    /// nodes of optimal), tested on the plan directly. O(n).
    public func _invariantCheck() {
        guard let root = _checkTailAndRoot() else { return }
        let size = root._invariantCheck(height: _height)
        precondition(size == _treeCount, "tree holds \(size) elements, expected \(_treeCount)")
        // Height bound: every level below the root keeps at least half the
        // branching on average, so the height stays within log16(n) + 2.
        var bound = 2
        var reach = 16
        while reach < size {
            reach = reach.multipliedReportingOverflow(by: 16).overflow ? .max : reach * 16
            bound += 1
        }
        precondition(_height <= bound, "height \(_height) for \(size) elements exceeds \(bound)")
    }

    /// Checks the count, the tail and the root's own shape (the parts of
    /// `_invariantCheck()` that need no walk); returns the root.
    func _checkTailAndRoot() -> _Node? {
        precondition(_count >= 0, "negative count")
        if let tail = _tail {
            precondition(tail.isLeaf, "tail is not a leaf")
            precondition(tail.count <= _Node.branching, "tail over 32 elements")
            precondition(tail.slotCapacity >= tail.count, "tail over capacity")
        }
        guard let root = _root else {
            precondition(_count == _tailCount, "no tree, but count \(_count) != tail \(_tailCount)")
            return nil
        }
        precondition(root.isLeaf || root.count > 1 || _height == 0, "root branch with a single child")
        return root
    }
}

extension PersistentVector {
    /// Whether this build checks the vector's invariants inside every
    /// mutation (a build with `STRATA_INTERNAL_CHECKS`, as `make test`
    /// makes). Documented complexities do not hold in such a build.
    public static var _isConsistencyCheckingEnabled: Bool { _internalChecks }

    /// After a mutation that changed the nodes on the paths to the
    /// elements at `first` and `last` (the edges of a seam or a slice): in
    /// a checking build, the whole vector when it is small, else the tail,
    /// the root and those paths. Nothing in other builds.
    @inlinable @inline(__always)
    func _checkAfterMutation(around first: Int, _ last: Int) {
        if _internalChecks { _checkChangedPaths(first, last, withChildren: false) }
    }

    /// After a concatenation or a slice, whose seam or cut at `first` and
    /// `last` repacked the children of the nodes on their paths: the same
    /// checks, and those children too.
    @inlinable @inline(__always)
    func _checkAfterRepacking(around first: Int, _ last: Int) {
        if _internalChecks { _checkChangedPaths(first, last, withChildren: true) }
    }

    @usableFromInline @inline(never)
    func _checkChangedPaths(_ first: Int, _ last: Int, withChildren: Bool) {
        guard _count > _wholeCheckLimit else { return _invariantCheck() }
        guard let root = _checkTailAndRoot() else { return }
        precondition(root.size(height: _height) == _treeCount, "tree size is not the count less the tail")
        for index in [first, last] where index >= 0 && index < _treeCount {
            root._checkPath(height: _height, to: index, withChildren: withChildren)
        }
    }
}

extension PersistentVector {
    /// The slot counts the concatenation rebalancer packs a level of nodes
    /// with the given slot counts into. Exposed for tests of its bound: the
    /// result has at most two nodes more than ⌈total / 32⌉.
    public static func _concatenationPlan(_ counts: [Int]) -> [Int] {
        _Node.concatPlan(counts)
    }
}
