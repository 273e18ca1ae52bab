extension _VectorNode {
    /// Extra nodes a level may keep beyond the optimum after a concatenation
    /// (the RRB search-step bound `e`): a lookup in a relaxed node scans at
    /// most this many slots past its radix guess.
    @inlinable static var extraSearchSteps: Int { 2 }

    /// The one or two nodes a concatenation leaves at a level.
    @usableFromInline
    typealias _Pair = (first: _VectorNode, second: _VectorNode?)

    /// A node gathered for a concatenation, unretained, with its element count.
    @usableFromInline
    typealias _Slot = (node: Unmanaged<_VectorNode>, size: Int)

    /// The most nodes a concatenation gathers at one level: every child of
    /// `left` but its last, the one or two the level below leaves, every
    /// child of `right` but its first. The lists of a level live on the
    /// stack: 64 slots of 16 bytes is within what a temporary allocation
    /// keeps there without asking the runtime (1 KiB), and the plan's
    /// record of the nodes it made fits one `UInt64`.
    @inlinable static var maximumGathered: Int { 2 * branching }

    /// Concatenates the subtree `left` (at height `leftHeight`) with `right`
    /// (at `rightHeight`). Returns one or two nodes at height max(leftHeight,
    /// rightHeight) holding all their elements, in order.
    ///
    /// Only the nodes along the seam (the right edge of `left`, the left
    /// edge of `right`) are rebuilt, and only where the RRB invariant needs
    /// it: O(log n) nodes of O(32) slots. Children are gathered unretained
    /// (the caller's trees and the local `centre` keep them alive) and
    /// retained once, when placed in a new node; nothing but the new nodes
    /// is allocated.
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
        let height = Swift.max(leftHeight, rightHeight)
        let centre: _Pair
        if leftHeight > rightHeight {
            centre = concat(left.child(at: left.count - 1), leftHeight - 1, right, rightHeight)
        } else if leftHeight < rightHeight {
            centre = concat(left, leftHeight, right.child(at: 0), rightHeight - 1)
        } else {
            centre = concat(left.child(at: left.count - 1), leftHeight - 1, right.child(at: 0), rightHeight - 1)
        }
        // What the buffer below holds: each side keeps all its children but one.
        precondition(left.count + right.count <= maximumGathered, "a concatenation gathers at most 64 nodes a level")
        return withExtendedLifetime(centre) {
            withUnsafeTemporaryAllocation(of: _Slot.self, capacity: maximumGathered) { buffer in
                let slots = buffer.baseAddress!
                var gathered = 0
                if leftHeight >= rightHeight {
                    left.gatherUnretainedChildren(
                        into: slots,
                        &gathered,
                        from: 0,
                        count: left.count - 1,
                        height: height
                    )
                }
                (slots + gathered).initialize(
                    to: (.passUnretained(centre.first), centre.first.size(height: height - 1))
                )
                gathered += 1
                if let second = centre.second {
                    (slots + gathered).initialize(to: (.passUnretained(second), second.size(height: height - 1)))
                    gathered += 1
                }
                if leftHeight <= rightHeight {
                    right.gatherUnretainedChildren(
                        into: slots,
                        &gathered,
                        from: 1,
                        count: right.count - 1,
                        height: height
                    )
                }
                return rebalance(UnsafeBufferPointer(start: slots, count: gathered), childHeight: height - 1)
            }
        }
    }

    /// Writes `count` children from `start`, unretained, with their sizes,
    /// at `list + filled` (advancing `filled`), read from this node (at
    /// `height`) without walking the children: every child of a regular
    /// node but the last is complete, and a relaxed node has its size table.
    @inlinable
    func gatherUnretainedChildren(
        into list: UnsafeMutablePointer<_Slot>,
        _ filled: inout Int,
        from start: Int,
        count: Int,
        height: Int
    ) {
        guard count > 0 else { return }
        let end = start &+ count
        if isRelaxed {
            let sizes = _sizes
            var before = start == 0 ? 0 : sizes[start &- 1]
            for i in start..<end {
                let after = sizes[i]
                (list + filled).initialize(to: (_unretainedChild(i), after &- before))
                filled &+= 1
                before = after
            }
            return
        }
        // Every child but the last is complete.
        let complete = Self.capacity(height: height - 1)
        let last = self.count &- 1
        for i in start..<end {
            let child = _unretainedChild(i)
            let size = i < last ? complete : child._withUnsafeGuaranteedRef { $0.size(height: height - 1) }
            (list + filled).initialize(to: (child, size))
            filled &+= 1
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

    /// Redistributes the slots of `nodes` (all at `childHeight`, unretained,
    /// at most ``maximumGathered``) so that the level holds at most
    /// `extraSearchSteps` nodes more than the minimum, then groups them
    /// under one or two parents at `childHeight + 1`.
    @inlinable
    static func rebalance(_ nodes: UnsafeBufferPointer<_Slot>, childHeight: Int) -> _Pair {
        let n = nodes.count
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * n) { buffer in
            let counts = UnsafeMutableBufferPointer(rebasing: buffer[..<n])
            let plan = UnsafeMutableBufferPointer(rebasing: buffer[n...])
            for i in 0..<n { counts.initializeElement(at: i, to: nodes[i].node._withUnsafeGuaranteedRef { $0.count }) }
            // A plan as long as the level is the level unchanged: every
            // step of the plan removes a node.
            let planned = concatPlan(UnsafeBufferPointer(counts), into: plan)
            if planned == n { return grouped(nodes, childHeight: childHeight) }
            return withUnsafeTemporaryAllocation(of: _Slot.self, capacity: planned) { level in
                let created = execute(
                    UnsafeBufferPointer(rebasing: plan[..<planned]),
                    nodes,
                    UnsafeBufferPointer(counts),
                    into: level.baseAddress!,
                    height: childHeight
                )
                let pair = grouped(UnsafeBufferPointer(level), childHeight: childHeight)
                // The parents hold the nodes `execute` made now.
                for i in 0..<planned where created & (1 << i) != 0 { level[i].node.release() }
                return pair
            }
        }
    }

    /// One parent at `childHeight + 1` over `level` (unretained), or two
    /// when it holds more than `branching` nodes.
    @inlinable
    static func grouped(_ level: UnsafeBufferPointer<_Slot>, childHeight: Int) -> _Pair {
        if level.count <= branching { return (branch(unretained: level, height: childHeight + 1), nil) }
        return (
            branch(unretained: UnsafeBufferPointer(rebasing: level[..<branching]), height: childHeight + 1),
            branch(unretained: UnsafeBufferPointer(rebasing: level[branching...]), height: childHeight + 1)
        )
    }

    /// Target slot counts for packing `counts` in order, written to `sizes`
    /// (at least as long); returns how many. Nodes that are nearly full
    /// stay as they are; the first sparse ones absorb their successors
    /// until the level is within `extraSearchSteps` of optimal.
    @inlinable
    static func concatPlan(_ counts: UnsafeBufferPointer<Int>, into sizes: UnsafeMutableBufferPointer<Int>) -> Int {
        // The buffers' subscripts are not checked in release builds: every
        // read below stays within `n` (a plan's steps are checked too).
        precondition(counts.count <= sizes.count, "concat plan has less room than the level")
        var total = 0
        for (i, count) in counts.enumerated() {
            sizes.initializeElement(at: i, to: count)
            total += count
        }
        let optimal = (total + branching - 1) / branching
        var n = counts.count
        var i = 0
        while optimal + extraSearchSteps < n {
            while sizes[i] >= branching - 1 {
                i += 1
                precondition(i < n, "concat plan ran past the level")
            }
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
        return n
    }

    /// Packs the slots of `nodes`, in order, into nodes of the planned
    /// sizes written to `level` (as long as `plan`), reusing every source
    /// node whose slots stay together. Returns which of `level`'s nodes it
    /// made, a bit each: those are retained once, for the caller to
    /// release when their parents hold them.
    @inlinable
    static func execute(
        _ plan: UnsafeBufferPointer<Int>,
        _ nodes: UnsafeBufferPointer<_Slot>,
        _ counts: UnsafeBufferPointer<Int>,
        into level: UnsafeMutablePointer<_Slot>,
        height: Int
    ) -> UInt64 {
        precondition(plan.count <= UInt64.bitWidth, "concat plan longer than a level can gather")
        var created: UInt64 = 0
        var source = 0
        var offset = 0
        for (index, target) in plan.enumerated() {
            if offset == 0 && counts[source] == target {
                (level + index).initialize(to: nodes[source])
                source += 1
                continue
            }
            let node: _VectorNode
            let size: Int
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
                size = target
            } else {
                (node, size) = withUnsafeTemporaryAllocation(of: _Slot.self, capacity: branching) { buffer in
                    let gathered = buffer.baseAddress!
                    var filled = 0
                    while filled < target {
                        let take = min(target - filled, counts[source] - offset)
                        nodes[source].node._withUnsafeGuaranteedRef {
                            $0.gatherUnretainedChildren(
                                into: gathered,
                                &filled,
                                from: offset,
                                count: take,
                                height: height
                            )
                        }
                        offset += take
                        if offset == counts[source] {
                            source += 1
                            offset = 0
                        }
                    }
                    let children = UnsafeBufferPointer(start: gathered, count: filled)
                    return (branch(unretained: children, height: height), children.reduce(0) { $0 + $1.size })
                }
            }
            (level + index).initialize(to: (.passRetained(node), size))
            created |= 1 << index
        }
        return created
    }

    /// A branch at `height` over unretained `children` of known sizes (each
    /// retained once here; the caller keeps them alive until then), regular
    /// when every child but the last is complete, relaxed otherwise.
    @inlinable
    static func branch(unretained children: UnsafeBufferPointer<_Slot>, height: Int) -> _VectorNode {
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
