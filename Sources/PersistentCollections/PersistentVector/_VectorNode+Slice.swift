extension _VectorNode {
    /// The first `count` elements of this subtree (at `height`), sharing every
    /// node left of the cut. 1 ≤ count ≤ size. O(log n).
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
        var children: [(node: Unmanaged<_VectorNode>, size: Int)] = []
        children.reserveCapacity(slot + 1)
        appendUnretainedChildren(to: &children, from: 0, count: slot, height: height)
        children.append((.passUnretained(newLast), count - before))
        return withExtendedLifetime(newLast) { Self.branch(unretained: children, height: height) }
    }

    /// This subtree (at `height`) without its first `count` elements.
    /// 0 ≤ count < size. O(log n).
    @inlinable
    func dropping(_ count: Int, height: Int) -> _VectorNode {
        if count == 0 { return self }
        if isLeaf {
            return Self.leaf(UnsafeBufferPointer(start: _elements + count, count: self.count - count))
        }
        let (slot, before) = locate(count, height: height)
        let firstSize = childSize(slot, height: height)
        let newFirst = _children[slot].dropping(count - before, height: height - 1)
        var children: [(node: Unmanaged<_VectorNode>, size: Int)] = [
            (.passUnretained(newFirst), firstSize - (count - before))
        ]
        appendUnretainedChildren(to: &children, from: slot + 1, count: self.count - slot - 1, height: height)
        return withExtendedLifetime(newFirst) { Self.branch(unretained: children, height: height) }
    }

    /// The child holding element `index` of this branch and the number of
    /// elements before that child.
    @inlinable
    func locate(_ index: Int, height: Int) -> (slot: Int, before: Int) {
        let shift = Self.bits * height
        if isRelaxed {
            var slot = index >> shift
            while _sizes[slot] <= index { slot += 1 }
            return (slot, slot == 0 ? 0 : _sizes[slot - 1])
        }
        let slot = index >> shift
        return (slot, slot << shift)
    }
}
