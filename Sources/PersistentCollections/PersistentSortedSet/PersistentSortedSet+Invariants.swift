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
            let width = Self._width(node, height: height)
            precondition(width <= Self._maximum(height: height), "node over its maximum")
            precondition(isRoot || width >= Self._minimum(height: height), "node under the minimum")
            if height == 0 {
                let leaf = Self._leaf(node)
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
            let inner = Self._inner(node)
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
                    let first = Self._first(child.node, height: height - 1)
                    precondition(!(first < separators[i - 1]) && !(separators[i - 1] < first), "stale separator")
                }
                let counted = check(child.node, height: height - 1, lower: low, upper: high, isRoot: false)
                precondition(child.count == counted, "child count")
                total += counted
            }
            precondition(inner.count == total, "subtree count")
            return total
        }
        _ = check(root, height: _height, lower: nil, upper: nil, isRoot: true)
    }
}
