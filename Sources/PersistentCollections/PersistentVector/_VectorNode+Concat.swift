extension _VectorNode {
    /// Extra nodes a level may keep beyond the optimum after a concatenation
    /// (the RRB search-step bound `e`): a lookup in a relaxed node scans at
    /// most this many slots past its radix guess.
    @inlinable static var extraSearchSteps: Int { 2 }

    /// The one or two nodes a concatenation leaves at a level.
    @usableFromInline
    typealias _Pair = (first: _VectorNode, second: _VectorNode?)

    /// Concatenates the subtree `left` (at height `leftHeight`) with `right`
    /// (at `rightHeight`). Returns one or two nodes at height max(leftHeight,
    /// rightHeight) holding all their elements, in order.
    ///
    /// Only the nodes along the seam (the right edge of `left`, the left
    /// edge of `right`) are rebuilt, and only where the RRB invariant needs
    /// it: O(log n) nodes of O(32) slots. Children are gathered unretained
    /// (the caller's trees and the local `centre` keep them alive) and
    /// retained once, when placed in a new node.
    @inlinable
    static func concat(
        _ left: _VectorNode,
        _ leftHeight: Int,
        _ right: _VectorNode,
        _ rightHeight: Int
    ) -> _Pair {
        if leftHeight == 0 && rightHeight == 0 {
            if left.count + right.count <= branching { return (merged(left, right), nil) }
            return (left, right)
        }
        let centre: _Pair
        let height = Swift.max(leftHeight, rightHeight)
        var gathered: [(node: Unmanaged<_VectorNode>, size: Int)] = []
        gathered.reserveCapacity(2 * branching + 2)
        if leftHeight > rightHeight {
            centre = concat(left.child(at: left.count - 1), leftHeight - 1, right, rightHeight)
            left.appendUnretainedChildren(to: &gathered, from: 0, count: left.count - 1, height: leftHeight)
        } else if leftHeight < rightHeight {
            centre = concat(left, leftHeight, right.child(at: 0), rightHeight - 1)
        } else {
            centre = concat(left.child(at: left.count - 1), leftHeight - 1, right.child(at: 0), rightHeight - 1)
            left.appendUnretainedChildren(to: &gathered, from: 0, count: left.count - 1, height: leftHeight)
        }
        gathered.append((.passUnretained(centre.first), centre.first.size(height: height - 1)))
        if let second = centre.second {
            gathered.append((.passUnretained(second), second.size(height: height - 1)))
        }
        if leftHeight <= rightHeight {
            right.appendUnretainedChildren(to: &gathered, from: 1, count: right.count - 1, height: rightHeight)
        }
        return withExtendedLifetime(centre) {
            rebalance(gathered, childHeight: height - 1)
        }
    }

    /// Appends `count` children from `start`, unretained, with their sizes,
    /// read from this node (at `height`) without walking the children: every
    /// child of a regular node but the last is complete, and a relaxed node
    /// has its size table.
    @inlinable
    func appendUnretainedChildren(
        to list: inout [(node: Unmanaged<_VectorNode>, size: Int)],
        from start: Int,
        count: Int,
        height: Int
    ) {
        guard count > 0 else { return }
        if isRelaxed {
            let sizes = _sizes
            var before = start == 0 ? 0 : sizes[start &- 1]
            for i in start..<(start &+ count) {
                let end = sizes[i]
                list.append((_unretainedChild(i), end &- before))
                before = end
            }
            return
        }
        // Every child but the last is complete.
        let complete = Self.capacity(height: height - 1)
        let last = self.count &- 1
        for i in start..<(start &+ count) {
            let child = _unretainedChild(i)
            list.append((child, i < last ? complete : child._withUnsafeGuaranteedRef { $0.size(height: height - 1) }))
        }
    }

    /// One leaf holding the elements of two leaves.
    @inlinable
    static func merged(_ a: _VectorNode, _ b: _VectorNode) -> _VectorNode {
        let node = allocateLeaf(capacity: a.count + b.count)
        node._elements._initialize(copying: a._elements, count: a.count)
        (node._elements + a.count)._initialize(copying: b._elements, count: b.count)
        node._header.pointee.count = UInt32(a.count + b.count)
        return node
    }

    /// Redistributes the slots of `nodes` (all at `childHeight`, unretained)
    /// so that the level holds at most `extraSearchSteps` nodes more than the
    /// minimum, then groups them under one or two parents at
    /// `childHeight + 1`.
    @inlinable
    static func rebalance(_ nodes: [(node: Unmanaged<_VectorNode>, size: Int)], childHeight: Int) -> _Pair {
        var counts: [Int] = []
        counts.reserveCapacity(nodes.count)
        for entry in nodes { counts.append(entry.node._withUnsafeGuaranteedRef { $0.count }) }
        let plan = concatPlan(counts)
        // `created` owns the nodes `execute` makes; reused nodes stay owned
        // by their old parents until the new parents retain them.
        let (packed, created) = execute(plan, nodes, counts, height: childHeight)
        return withExtendedLifetime(created) {
            if packed.count <= branching {
                return (branch(unretained: packed, height: childHeight + 1), nil)
            }
            return (
                branch(unretained: Array(packed[..<branching]), height: childHeight + 1),
                branch(unretained: Array(packed[branching...]), height: childHeight + 1)
            )
        }
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
        if n == sizes.count { return sizes }
        return Array(sizes[..<n])
    }

    /// Packs the slots of `nodes`, in order, into nodes of the planned sizes,
    /// reusing every source node whose slots stay together. Returns the
    /// level, unretained, and the nodes it created (which own themselves
    /// through that array).
    @inlinable
    static func execute(
        _ plan: [Int],
        _ nodes: [(node: Unmanaged<_VectorNode>, size: Int)],
        _ counts: [Int],
        height: Int
    ) -> (level: [(node: Unmanaged<_VectorNode>, size: Int)], created: [_VectorNode]) {
        if plan == counts { return (nodes, []) }
        var level: [(node: Unmanaged<_VectorNode>, size: Int)] = []
        level.reserveCapacity(plan.count)
        var created: [_VectorNode] = []
        var source = 0
        var offset = 0
        var gathered: [(node: Unmanaged<_VectorNode>, size: Int)] = []
        for target in plan {
            if offset == 0 && counts[source] == target {
                level.append(nodes[source])
                source += 1
                continue
            }
            let node: _VectorNode
            if height == 0 {
                node = allocateLeaf(capacity: target)
                var filled = 0
                while filled < target {
                    let take = min(target - filled, counts[source] - offset)
                    nodes[source].node._withUnsafeGuaranteedRef {
                        (node._elements + filled)._initialize(copying: $0._elements + offset, count: take)
                    }
                    filled += take
                    offset += take
                    if offset == counts[source] {
                        source += 1
                        offset = 0
                    }
                }
                node._header.pointee.count = UInt32(target)
            } else {
                gathered.removeAll(keepingCapacity: true)
                while gathered.count < target {
                    let take = min(target - gathered.count, counts[source] - offset)
                    nodes[source].node._withUnsafeGuaranteedRef {
                        $0.appendUnretainedChildren(to: &gathered, from: offset, count: take, height: height)
                    }
                    offset += take
                    if offset == counts[source] {
                        source += 1
                        offset = 0
                    }
                }
                node = branch(unretained: gathered, height: height)
            }
            created.append(node)
            level.append((.passUnretained(node), height == 0 ? target : gathered.reduce(0) { $0 + $1.size }))
        }
        return (level, created)
    }

    /// A branch at `height` over unretained `children` of known sizes (each
    /// retained once here; the caller keeps them alive until then), regular
    /// when every child but the last is complete, relaxed otherwise.
    @inlinable
    static func branch(unretained children: [(node: Unmanaged<_VectorNode>, size: Int)], height: Int) -> _VectorNode {
        let n = children.count
        precondition(n > 0 && n <= branching)
        let complete = capacity(height: height - 1)
        var regular = true
        for i in 0..<(n - 1) where children[i].size != complete {
            regular = false
            break
        }
        let node = allocateBranch(capacity: n, relaxed: !regular)
        let slots = node._children
        for i in 0..<n { (slots + i).initialize(to: children[i].node.takeUnretainedValue()) }
        if !regular {
            let sizes = node._sizes
            var total = 0
            for i in 0..<n {
                total &+= children[i].size
                (sizes + i).initialize(to: total)
            }
        }
        node._header.pointee.count = UInt32(n)
        return node
    }
}
