extension _VectorNode {
    /// The first `count` elements of this subtree (at `height`), sharing every
    /// node left of the cut. 1 ≤ count ≤ size. O(log n).
    ///
    /// Only the right edge is rebuilt. A prefix of a regular node is regular
    /// (every child left of the cut is complete), so it needs no size table.
    @inlinable
    func prefix(_ count: Int, height: Int) -> _VectorNode {
        if isLeaf {
            if count == self.count { return self }
            return Self.leaf(UnsafeBufferPointer(start: _elements, count: count))
        }
        let (slot, before) = locate(count - 1, height: height)
        let child = _children[slot]
        let newLast = child.prefix(count - before, height: height - 1)
        if slot == self.count - 1 && newLast === child { return self }
        let node = Self.allocateBranch(capacity: slot + 1, relaxed: isRelaxed)
        node._children._initialize(copying: _children, count: slot)
        (node._children + slot).initialize(to: newLast)
        if isRelaxed {
            node._sizes._initialize(copying: _sizes, count: slot)
            (node._sizes + slot).initialize(to: count)
        }
        node._header.pointee.count = UInt32(slot + 1)
        return node
    }

    /// This subtree (at `height`) without its first `count` elements.
    /// 0 ≤ count < size. O(log n).
    ///
    /// Only the left edge is rebuilt; the result is relaxed unless its first
    /// child is complete or alone.
    @inlinable
    func dropping(_ count: Int, height: Int) -> _VectorNode {
        if count == 0 { return self }
        if isLeaf {
            return Self.leaf(UnsafeBufferPointer(start: _elements + count, count: self.count - count))
        }
        let (slot, before) = locate(count, height: height)
        let newFirst = _children[slot].dropping(count - before, height: height - 1)
        let kept = self.count - slot
        let relaxed = kept > 1
        let node = Self.allocateBranch(capacity: kept, relaxed: relaxed)
        let children = node._children
        children.initialize(to: newFirst)
        (children + 1)._initialize(copying: _children + slot + 1, count: kept - 1)
        if relaxed {
            // Cumulative sizes shift down by the elements dropped.
            let sizes = node._sizes
            if isRelaxed {
                let old = _sizes + slot
                for i in 0..<kept { (sizes + i).initialize(to: old[i] &- count) }
            } else {
                // Every child but the last is complete.
                let step = 1 << (Self.bits * height)
                var end = (slot + 1) << (Self.bits * height)
                for i in 0..<(kept - 1) {
                    (sizes + i).initialize(to: end &- count)
                    end &+= step
                }
                (sizes + kept - 1).initialize(to: size(height: height) &- count)
            }
        }
        node._header.pointee.count = UInt32(kept)
        return node
    }

    /// This branch (at `height`) one level lower when each of its children
    /// is a branch with a single child: a relaxed branch of those
    /// grandchildren, the same elements in the same order. nil otherwise
    /// (or when the children are leaves). O(branching · log n).
    @inlinable
    func loweringSingleChildren(height: Int) -> _VectorNode? {
        guard height >= 2 else { return nil }
        let count = self.count
        for i in 0..<count where _children[i].count != 1 { return nil }
        let node = Self.allocateBranch(capacity: count, relaxed: true)
        var total = 0
        for i in 0..<count {
            let grandchild = _children[i].child(at: 0)
            total += grandchild.size(height: height - 2)
            (node._children + i).initialize(to: grandchild)
            (node._sizes + i).initialize(to: total)
        }
        node._header.pointee.count = UInt32(count)
        return node
    }

    /// The child holding element `index` of this branch and the number of
    /// elements before that child.
    @inlinable
    func locate(_ index: Int, height: Int) -> (slot: Int, before: Int) {
        let shift = Self.bits * height
        if isRelaxed {
            var slot = index >> shift
            while _sizes[slot] <= index { slot += 1 }
            return (slot, _sizes[slot - 1])
        }
        let slot = index >> shift
        return (slot, slot << shift)
    }
}
