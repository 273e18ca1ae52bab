extension _VectorNode {
    /// The height of the deepest branch on the right edge of this subtree (a
    /// node at `height` ≥ 1) with a free slot, where a new leaf goes; 0 when
    /// every branch on the edge is full and the tree must grow. O(height).
    @inlinable
    func _deepestOpenSpineHeight(height: Int) -> Int {
        var open = 0
        return _walkRightEdge(height: height) { node, level in
            if node.count < Self.branching { open = level }
            return level == 1 ? open : nil
        }
    }

    /// `leaf` under single-child branches up to `height`.
    @inlinable
    static func path(to leaf: _VectorNode, height: Int) -> _VectorNode {
        height == 0 ? leaf : branch([path(to: leaf, height: height - 1)], height: height)
    }

    /// Appends `leaf` at the right edge of the subtree at `slot` (height ≥ 1)
    /// as a new child of the edge's branch at height `target`, copying
    /// shared nodes on the way down.
    ///
    /// - Precondition: `target` is `slot._deepestOpenSpineHeight(height:)`
    ///   and not 0.
    @inlinable
    static func pushLeaf(_ slot: inout _VectorNode, height: Int, target: Int, _ leaf: _VectorNode) {
        if !isKnownUniquelyReferenced(&slot) { slot = slot.copy() }
        if height == target {
            let child = height == 1 ? leaf : path(to: leaf, height: height - 1)
            appendChild(child, size: leaf.count, to: &slot, height: height)
            return
        }
        let last = slot.count - 1
        if slot.isRelaxed { slot._sizes[last] += leaf.count }
        let children = slot._children
        pushLeaf(&children[last], height: height - 1, target: target, leaf)
    }

    /// Whether this subtree at `height` holds 32^(height+1) elements; reads
    /// counts along the right edge only. O(height).
    @inlinable
    func isComplete(height: Int) -> Bool {
        _walkRightEdge(height: height) { node, level in
            if node.isLeaf { return node.count == Self.branching }
            if node.count < Self.branching { return false }
            if node.isRelaxed { return node._sizes[node.count &- 1] == Self.capacity(height: level) }
            return nil
        }
    }

    /// Adds `child` last to the uniquely referenced branch in `slot`, a node
    /// at `height`: in place, or in a new node when out of capacity or when
    /// the previous last child is not complete (the node then needs a size
    /// table).
    @inlinable
    static func appendChild(_ child: __owned _VectorNode, size childSize: Int, to slot: inout _VectorNode, height: Int)
    {
        let n = slot.count
        precondition(n < branching, "appendChild on a full node")
        let needsSizes =
            !slot.isRelaxed && n > 0
            && !slot._unretainedChild(n - 1)._withUnsafeGuaranteedRef { $0.isComplete(height: height - 1) }
        if needsSizes || slot.slotCapacity == n {
            slot = slot._movedToFullCapacity(relaxed: slot.isRelaxed || needsSizes, height: height)
        }
        (slot._children + n).initialize(to: child)
        if slot.isRelaxed {
            let sizes = slot._sizes
            (sizes + n).initialize(to: (n == 0 ? 0 : sizes[n - 1]) + childSize)
        }
        slot._header.pointee.count = UInt32(n + 1)
    }

    /// A branch of capacity 32 holding this uniquely referenced branch's
    /// children, moved out of it (this node is left empty).
    @inlinable
    func _movedToFullCapacity(relaxed: Bool, height: Int) -> _VectorNode {
        precondition(relaxed || !isRelaxed, "a relaxed branch keeps its size table")
        let n = count
        let node = _VectorNode.allocateBranch(capacity: Self.branching, relaxed: relaxed)
        if relaxed {
            var total = 0
            for i in 0..<n {
                total = isRelaxed ? _sizes[i] : total + _children[i].size(height: height - 1)
                (node._sizes + i).initialize(to: total)
            }
        }
        node._children.moveInitialize(from: _children, count: n)
        _header.pointee.count = 0
        node._header.pointee.count = UInt32(n)
        return node
    }

    /// Sets element `index` of the subtree at `slot`, copying shared nodes.
    @inlinable
    static func set(_ slot: inout _VectorNode, height: Int, _ index: Int, _ element: Element) {
        if !isKnownUniquelyReferenced(&slot) { slot = slot.copy() }
        if height == 0 {
            slot._elements[index] = element
            return
        }
        let (slotIndex, before) = slot.locate(index, height: height)
        let children = slot._children
        set(&children[slotIndex], height: height - 1, index - before, element)
    }
}
