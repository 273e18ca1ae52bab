extension PersistentVector {
    /// Appends the elements of `other`. O(log n): the trees are joined by
    /// rebalancing only their seam; a short `other` is appended element by
    /// element. `other` is not copied.
    @inlinable
    public mutating func append(contentsOf other: PersistentVector) {
        if other.isEmpty { return }
        if isEmpty {
            self = other
            return
        }
        if other._count <= _Node.branching - _tailCount || other._root == nil {
            for element in other { append(element) }
            return
        }
        _pushTail()
        let seam = _count
        let (root, height) = Self._joined(_root, _height, other._root!, other._height)
        _root = root
        _height = height
        _tail = other._tail
        _count += other._count
        _checkAfterRepacking(around: seam - 1, seam)
    }

    /// The concatenation of two trees (either may be absent).
    @inlinable
    static func _joined(_ left: _Node?, _ leftHeight: Int, _ right: _Node, _ rightHeight: Int) -> (_Node, Int) {
        guard let left else { return (right, rightHeight) }
        let pair = _Node.concat(left, leftHeight, right, rightHeight)
        var height = Swift.max(leftHeight, rightHeight)
        var root = pair.first
        if let second = pair.second {
            root = _Node.branch([root, second], height: height + 1)
            height += 1
        }
        while !root.isLeaf && root.count == 1 {
            root = root.child(at: 0)
            height -= 1
        }
        return (root, height)
    }

    /// The concatenation of two vectors. O(log n).
    @inlinable
    public static func + (lhs: PersistentVector, rhs: PersistentVector) -> PersistentVector {
        var result = lhs
        result.append(contentsOf: rhs)
        return result
    }

    /// Appends `rhs` to `lhs`. O(log n).
    @inlinable
    public static func += (lhs: inout PersistentVector, rhs: PersistentVector) {
        lhs.append(contentsOf: rhs)
    }
}

// MARK: Slicing

extension PersistentVector {
    /// The elements in `range` as a vector sharing this one's nodes.
    /// O(log n).
    @inlinable
    public func subrange(_ range: Range<Int>) -> PersistentVector {
        precondition(range.lowerBound >= 0 && range.upperBound <= _count, "PersistentVector range out of bounds")
        if range.isEmpty { return PersistentVector() }
        if range == 0..<_count { return self }
        let treeCount = _treeCount
        var result = PersistentVector()
        if range.lowerBound < treeCount {
            var root = _root!
            var height = _height
            let upper = Swift.min(range.upperBound, treeCount)
            if upper < treeCount { root = root.prefix(upper, height: height) }
            root = root.dropping(range.lowerBound, height: height)
            // A window across a boundary of the root keeps on each side of
            // it a chain of single-child nodes (the edges the cut rebuilt):
            // those levels go, so the height fits the count.
            while !root.isLeaf {
                if root.count == 1 {
                    root = root.child(at: 0)
                } else if let lowered = root.loweringSingleChildren(height: height) {
                    root = lowered
                } else {
                    break
                }
                height -= 1
            }
            result._root = root
            result._height = height
            result._count = upper - range.lowerBound
        }
        if range.upperBound > treeCount {
            let tail = _tail!
            let start = Swift.max(range.lowerBound, treeCount) - treeCount
            let end = range.upperBound - treeCount
            // A window reaching the end keeps the tail itself: an append
            // to either vector copies a tail it does not own alone.
            result._tail =
                start == 0 && end == tail.count ? tail : tail.leaf(copying: start..<end, capacity: _Node.branching)
            result._count += end - start
        }
        result._checkAfterRepacking(around: 0, result._count - 1)
        return result
    }

    /// The first `maxLength` elements (all when shorter), as a vector.
    /// O(log n).
    @inlinable
    public func prefix(_ maxLength: Int) -> PersistentVector {
        precondition(maxLength >= 0, "negative length")
        return subrange(0..<Swift.min(maxLength, _count))
    }

    /// The last `maxLength` elements (all when shorter), as a vector.
    /// O(log n).
    @inlinable
    public func suffix(_ maxLength: Int) -> PersistentVector {
        precondition(maxLength >= 0, "negative length")
        return subrange(Swift.max(0, _count - maxLength)..<_count)
    }

    /// The elements from `start` to the end, as a vector. O(log n).
    @inlinable
    public func suffix(from start: Int) -> PersistentVector {
        subrange(start..<_count)
    }

    /// Replaces the elements in `range` with those of `newElements`.
    /// O(log n + m) for m new elements: split, concatenate, join.
    @inlinable
    public mutating func replaceSubrange(_ range: Range<Int>, with newElements: PersistentVector) {
        precondition(range.lowerBound >= 0 && range.upperBound <= _count, "PersistentVector range out of bounds")
        if range.lowerBound == _count {
            append(contentsOf: newElements)
            return
        }
        var result = prefix(range.lowerBound)
        result.append(contentsOf: newElements)
        result.append(contentsOf: suffix(from: range.upperBound))
        self = result
    }
}
