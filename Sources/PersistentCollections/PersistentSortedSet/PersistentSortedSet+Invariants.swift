extension PersistentSortedSet {
    /// Traps unless the tree holds its invariants (see `_SortedNode`):
    /// ascending order, separator bounds, exact subtree counts, uniform leaf
    /// depth and node fill. O(n). For tests and debug builds.
    public func _invariantCheck() {
        guard let root = _root else { return }
        precondition(root.count > 0, "an empty root must be nil")
        var leafDepth: Int?
        func check(_ node: _Node, depth: Int, lower: Element?, upper: Element?, isRoot: Bool) -> Int {
            precondition(node.width <= _Node.capacity, "node over capacity")
            precondition(isRoot || node.width >= _Node.minimum, "node under the minimum")
            if node.isLeaf {
                precondition(node.separators.isEmpty, "a leaf with separators")
                if let leafDepth { precondition(leafDepth == depth, "leaves at different depths") }
                leafDepth = depth
                for i in node.elements.indices.dropFirst() {
                    precondition(node.elements[i - 1] < node.elements[i], "leaf not strictly ascending")
                }
                if let lower, let first = node.elements.first {
                    precondition(lower <= first, "element below its separator")
                }
                if let upper, let last = node.elements.last {
                    precondition(last < upper, "element above its separator")
                }
                precondition(node.count == node.elements.count, "leaf count")
                return node.count
            }
            precondition(node.elements.isEmpty, "an internal node with elements")
            precondition(node.children.count == node.separators.count + 1, "separators and children")
            precondition(node.children.count >= 2, "an internal node with one child")
            var total = 0
            for (i, child) in node.children.enumerated() {
                let low = i == 0 ? lower : node.separators[i - 1]
                let high = i == node.separators.count ? upper : node.separators[i]
                total += check(child, depth: depth + 1, lower: low, upper: high, isRoot: false)
            }
            precondition(node.count == total, "subtree count")
            precondition(node.counts.elementsEqual(node.children.lazy.map(\.count)), "child counts")
            return total
        }
        _ = check(root, depth: 0, lower: nil, upper: nil, isRoot: true)
    }
}
