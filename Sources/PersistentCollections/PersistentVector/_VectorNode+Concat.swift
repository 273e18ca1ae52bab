extension _VectorNode {
    /// Extra nodes a level may keep beyond the optimum after a concatenation
    /// (the RRB search-step bound `e`): a lookup in a relaxed node scans at
    /// most this many slots past its radix guess.
    @inlinable static var extraSearchSteps: Int { 2 }

    /// Concatenates the subtree `left` (at height `leftHeight`) with `right`
    /// (at `rightHeight`). Returns a node at height max + 1 holding one or
    /// two children; the caller unwraps single-child roots.
    ///
    /// Only the nodes along the seam (the right edge of `left`, the left
    /// edge of `right`) are rebuilt, and only where the RRB invariant needs
    /// it: O(log n) nodes of O(32) slots.
    @inlinable
    static func concat(
        _ left: _VectorNode,
        _ leftHeight: Int,
        _ right: _VectorNode,
        _ rightHeight: Int
    ) -> _VectorNode {
        if leftHeight > rightHeight {
            let centre = concat(left._children[left.count - 1], leftHeight - 1, right, rightHeight)
            return rebalance(
                Array(left.childArray.dropLast()) + centre.childArray,
                childHeight: leftHeight - 1
            )
        }
        if leftHeight < rightHeight {
            let centre = concat(left, leftHeight, right._children[0], rightHeight - 1)
            return rebalance(centre.childArray + Array(right.childArray.dropFirst()), childHeight: rightHeight - 1)
        }
        if leftHeight == 0 {
            if left.count + right.count <= branching {
                return branch([merged(left, right)], height: 1)
            }
            return branch([left, right], height: 1)
        }
        let centre = concat(left._children[left.count - 1], leftHeight - 1, right._children[0], rightHeight - 1)
        return rebalance(
            Array(left.childArray.dropLast()) + centre.childArray + Array(right.childArray.dropFirst()),
            childHeight: leftHeight - 1
        )
    }

    /// One leaf holding the elements of two leaves.
    @inlinable
    static func merged(_ a: _VectorNode, _ b: _VectorNode) -> _VectorNode {
        let node = allocateLeaf(capacity: a.count + b.count)
        node._elements.initialize(from: a._elements, count: a.count)
        (node._elements + a.count).initialize(from: b._elements, count: b.count)
        node._header.pointee.count = UInt32(a.count + b.count)
        return node
    }

    /// Redistributes the slots of `nodes` (all at `childHeight`) so that the
    /// level holds at most `extraSearchSteps` nodes more than the minimum,
    /// then groups them under one or two parents at `childHeight + 1`, and
    /// returns those under a node at `childHeight + 2`.
    @inlinable
    static func rebalance(_ nodes: [_VectorNode], childHeight: Int) -> _VectorNode {
        let plan = concatPlan(nodes.map(\.count))
        let packed = execute(plan, nodes, height: childHeight)
        if packed.count <= branching {
            return branch([branch(packed, height: childHeight + 1)], height: childHeight + 2)
        }
        let left = branch(Array(packed[..<branching]), height: childHeight + 1)
        let right = branch(Array(packed[branching...]), height: childHeight + 1)
        return branch([left, right], height: childHeight + 2)
    }

    /// Target slot counts for packing `counts` in order: nodes that are
    /// nearly full stay as they are; the first sparse ones absorb their
    /// successors until the level is within `extraSearchSteps` of optimal.
    @inlinable
    static func concatPlan(_ counts: [Int]) -> [Int] {
        var sizes = counts
        let total = sizes.reduce(0, +)
        let optimal = (total + branching - 1) / branching
        var n = sizes.count
        var i = 0
        while optimal + extraSearchSteps < n {
            while sizes[i] >= branching - 1 { i += 1 }
            var remaining = sizes[i]
            repeat {
                precondition(i + 1 < n, "concat plan ran past the level")
                let filled = min(remaining + sizes[i + 1], branching)
                sizes[i] = filled
                remaining = remaining + sizes[i + 1] - filled
                i += 1
            } while remaining > 0
            for j in i..<(n - 1) { sizes[j] = sizes[j + 1] }
            n -= 1
            i -= 1
        }
        return Array(sizes[..<n])
    }

    /// Packs the slots of `nodes`, in order, into nodes of the planned sizes,
    /// reusing every source node whose slots stay together.
    @inlinable
    static func execute(_ plan: [Int], _ nodes: [_VectorNode], height: Int) -> [_VectorNode] {
        var result: [_VectorNode] = []
        result.reserveCapacity(plan.count)
        var source = 0
        var offset = 0
        for target in plan {
            if offset == 0 && nodes[source].count == target {
                result.append(nodes[source])
                source += 1
                continue
            }
            if height == 0 {
                let leaf = allocateLeaf(capacity: target)
                var filled = 0
                while filled < target {
                    let node = nodes[source]
                    let take = min(target - filled, node.count - offset)
                    (leaf._elements + filled).initialize(from: node._elements + offset, count: take)
                    filled += take
                    offset += take
                    if offset == node.count {
                        source += 1
                        offset = 0
                    }
                }
                leaf._header.pointee.count = UInt32(target)
                result.append(leaf)
            } else {
                var children: [_VectorNode] = []
                children.reserveCapacity(target)
                while children.count < target {
                    let node = nodes[source]
                    let take = min(target - children.count, node.count - offset)
                    children.append(contentsOf: UnsafeBufferPointer(start: node._children + offset, count: take))
                    offset += take
                    if offset == node.count {
                        source += 1
                        offset = 0
                    }
                }
                result.append(branch(children, height: height))
            }
        }
        return result
    }
}
