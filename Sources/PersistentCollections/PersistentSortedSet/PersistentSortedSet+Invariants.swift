extension PersistentSortedSet {
    /// Traps unless the tree holds its invariants (see `_SortedLeaf` and
    /// `_SortedInner`): ascending order, separator bounds, exact subtree
    /// counts, uniform leaf depth, node fill and capacities. O(n). For tests
    /// and debug builds.
    public func _invariantCheck() {
        guard let root = _root else {
            precondition(_height == 0, "an empty set with a height")
            return
        }
        precondition(count > 0, "an empty root must be nil")
        func check(_ node: AnyObject, height: Int, lower: Element?, upper: Element?, isRoot: Bool) -> Int {
            Self._checkNode(node, height: height, lower: lower, upper: upper, isRoot: isRoot) { child, low, high in
                check(child, height: height - 1, lower: low, upper: high, isRoot: false)
            }
        }
        _ = check(root, height: _height, lower: nil, upper: nil, isRoot: true)
    }
}

extension PersistentSortedSet {
    /// Checks `node`, at `height`, alone: its fill, order and bounds
    /// (`lower` ≤ its elements < `upper`), its separators, and each child's
    /// stored count against `countOf(child, lower, upper)` (the child's own
    /// check, or its count); returns its element count. O(width × height).
    @usableFromInline
    @discardableResult
    static func _checkNode(
        _ node: AnyObject,
        height: Int,
        lower: Element?,
        upper: Element?,
        isRoot: Bool,
        countOf: (_ child: AnyObject, _ lower: Element?, _ upper: Element?) -> Int
    ) -> Int {
        let width = _width(node, height: height)
        precondition(width <= _maximum(height: height), "node over its maximum")
        precondition(isRoot || width >= _minimum(height: height), "node under the minimum")
        if height == 0 {
            let leaf = _leaf(node)
            precondition(leaf.width <= leaf.storedCapacity, "leaf over its capacity")
            return leaf.withElements { elements in
                for i in elements.indices.dropFirst() {
                    precondition(elements[i - 1] < elements[i], "leaf not strictly ascending")
                }
                if let lower, let first = elements.first { precondition(lower <= first, "element below its bound") }
                if let upper, let last = elements.last { precondition(last < upper, "element above its bound") }
                return elements.count
            }
        }
        let inner = _inner(node)
        precondition(inner.width <= inner.storedCapacity, "node over its capacity")
        precondition(inner.width >= 2, "an internal node with fewer than two children")
        let separators = inner.header.separators
        precondition(separators.count == inner.width - 1, "separators and children")
        precondition(inner._separatorElementsAreCurrent, "stale separator elements")
        var total = 0
        for (i, child) in inner.children.enumerated() {
            let low = i == 0 ? lower : separators[i - 1]
            let high = i == separators.count ? upper : separators[i]
            if let low, let high { precondition(low < high, "separators not ascending") }
            // A separator is the first member to its right, never a
            // copy of one removed or replaced.
            if i > 0 {
                let first = _first(child.node, height: height - 1)
                precondition(!(first < separators[i - 1]) && !(separators[i - 1] < first), "stale separator")
            }
            let counted = countOf(child.node, low, high)
            precondition(child.count == counted, "child count")
            total += counted
        }
        precondition(inner.count == total, "subtree count")
        return total
    }

    /// Whether this build checks the set's invariants inside every
    /// mutation (a build with `STRATA_INTERNAL_CHECKS`, as `make test`
    /// makes). Documented complexities do not hold in such a build.
    public static var _isConsistencyCheckingEnabled: Bool { _internalChecks }

    /// After a mutation of the whole set (a build): in a checking build,
    /// every invariant. Nothing in other builds.
    @inlinable @inline(__always)
    func _checkAfterMutation() {
        if _internalChecks { _invariantCheck() }
    }

    /// After an insertion or removal at the probe (`isAbove(e)`: the probe
    /// is below `e`): in a checking build, the whole set when it is small,
    /// else every node on the probe's path and their neighbours. Nothing
    /// in other builds.
    @inlinable @inline(__always)
    func _checkAfterMutation(at isAbove: (Element) -> Bool) {
        if _internalChecks { _checkChangedPath(isAbove) }
    }

    @usableFromInline @inline(never)
    func _checkChangedPath(_ isAbove: (Element) -> Bool) {
        guard count > _wholeCheckLimit, var node = _root else { return _invariantCheck() }
        var height = _height
        var lower: Element?
        var upper: Element?
        while true {
            let h = height
            Self._checkNode(node, height: h, lower: lower, upper: upper, isRoot: h == _height) { child, _, _ in
                Self._count(child, height: h - 1)
            }
            guard height > 0 else { return }
            let inner = Self._inner(node)
            let child = inner.childIndex(probeIsBelow: isAbove)
            // The neighbours too: a split's other half, a sibling that lent
            // an entry or took a merged one.
            for i in Swift.max(child - 1, 0)...Swift.min(child + 1, inner.width - 1) where i != child {
                Self._checkNode(
                    inner[i].node,
                    height: h - 1,
                    lower: i == 0 ? lower : inner.separator(i - 1),
                    upper: i == inner.width - 1 ? upper : inner.separator(i),
                    isRoot: false
                ) { grandchild, _, _ in Self._count(grandchild, height: h - 2) }
            }
            if child > 0 { lower = inner.separator(child - 1) }
            if child < inner.width - 1 { upper = inner.separator(child) }
            node = inner[child].node
            height -= 1
        }
    }
}
