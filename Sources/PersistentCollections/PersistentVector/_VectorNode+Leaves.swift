/// A leaf of a vector, held unretained: valid while the vector that
/// holds it is alive (the caller keeps it so).
@usableFromInline
@frozen
struct _VectorLeaf<Element> {
    @usableFromInline let _node: Unmanaged<_VectorNode<Element>>

    @inlinable
    init(_ node: Unmanaged<_VectorNode<Element>>) { self._node = node }

    /// The element at `offset`. O(1).
    @inlinable
    subscript(offset: Int) -> Element { _node._withUnsafeGuaranteedRef { $0._elements[offset] } }

    /// The number of elements. O(1).
    @inlinable
    var count: Int { _node._withUnsafeGuaranteedRef { $0.count } }

    /// Whether both are the same node.
    @inlinable
    func isSameNode(as other: _VectorLeaf) -> Bool { _node.toOpaque() == other._node.toOpaque() }

    /// Calls `body` with the elements from `offset` on.
    @inlinable
    func withElements<R>(from offset: Int, _ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        try _node._withUnsafeGuaranteedRef { node in
            try body(UnsafeBufferPointer(start: node._elements + offset, count: node.count - offset))
        }
    }
}

extension _VectorLeaf {
    /// Whether `count` elements from `offset` are equivalent, by
    /// `areEquivalent`, to those of `other` from `otherOffset`. O(count).
    @inlinable
    func elementsEqual(
        from offset: Int,
        _ other: _VectorLeaf,
        from otherOffset: Int,
        count: Int,
        by areEquivalent: (Element, Element) -> Bool
    ) -> Bool {
        _node._withUnsafeGuaranteedRef { a in
            other._node._withUnsafeGuaranteedRef { b in
                let (x, y) = (a._elements + offset, b._elements + otherOffset)
                for i in 0..<count where !areEquivalent(x[i], y[i]) { return false }
                return true
            }
        }
    }
}

/// A walk over a vector's elements, leaf by leaf: one descent per leaf,
/// then a pointer increment per element. The walk's owner keeps the
/// vector alive.
@usableFromInline
@frozen
struct _VectorWalk<Element> {
    @usableFromInline var _elements: UnsafeMutablePointer<Element>?
    @usableFromInline var _offset: Int
    @usableFromInline var _leafCount: Int
    @usableFromInline var _nextLeafStart: Int

    @inlinable
    init() {
        self._elements = nil
        self._offset = 0
        self._leafCount = 0
        self._nextLeafStart = 0
    }

    /// The next element of `vector`, or nil at its end. O(1) amortized.
    @inlinable
    mutating func next(in vector: PersistentVector<Element>) -> Element? {
        if _offset < _leafCount {
            defer { _offset &+= 1 }
            return _elements.unsafelyUnwrapped[_offset]
        }
        guard _nextLeafStart < vector._count else { return nil }
        let (leaf, offset, start) = vector._leaf(containing: _nextLeafStart)
        let (elements, count) = leaf._node._withUnsafeGuaranteedRef { ($0._elements, $0.count) }
        _elements = elements
        _leafCount = count
        _offset = offset + 1
        _nextLeafStart = start + count
        return elements[offset]
    }
}

extension _VectorNode {
    /// The leaf of the vector made of `root`, `tail`, `height` and
    /// `treeCount` that holds `index`, unretained (valid while the vector
    /// is alive), the offset of `index` in it, and the leaf's first index.
    /// - Precondition: `0 <= index < treeCount + tail's count`.
    @inlinable
    static func leaf(
        containing index: Int,
        root: _VectorNode?,
        tail: _VectorNode?,
        height: Int,
        treeCount: Int
    ) -> (leaf: _VectorLeaf<Element>, offset: Int, leafStart: Int) {
        if index >= treeCount {
            return (_VectorLeaf(Unmanaged.passUnretained(tail.unsafelyUnwrapped)), index - treeCount, treeCount)
        }
        // One level at a time as random indexing descends (`_child(of:_:_:)`).
        var node = Unmanaged.passUnretained(root.unsafelyUnwrapped)
        var level = height
        var relative = index
        while level > 0 {
            node = _child(of: node, level, &relative)
            level &-= 1
        }
        return (_VectorLeaf(node), relative, index - relative)
    }

    /// The element at `index` of the tree under `root` (a node at
    /// `height`). O(height), no reference counting.
    ///
    /// Random indexing's path, kept to a few instructions a level: an
    /// out-of-order core holds only so many instructions in flight, and
    /// the fewer each lookup takes, the more lookups' cache misses overlap.
    /// The levels of trees up to 32^4 elements are spelled out (see
    /// `_child(of:_:_:)` for one level).
    /// - Precondition: `0 <= index <` the tree's element count.
    @inlinable
    @inline(__always)
    static func element(at index: Int, root: _VectorNode, height: Int) -> Element {
        var node = Unmanaged.passUnretained(root)
        var relative = index
        var level = height
        while level > 3 {
            node = _child(of: node, level, &relative)
            level &-= 1
        }
        switch level {
        case 3:
            node = _child(of: node, 3, &relative)
            fallthrough
        case 2:
            node = _child(of: node, 2, &relative)
            fallthrough
        case 1:
            node = _child(of: node, 1, &relative)
            fallthrough
        default:
            return node._withUnsafeGuaranteedRef { $0._elements[relative] }
        }
    }

    /// The child of `node`, a branch at `level`, on the way to the element
    /// at `relative` (its position under `node`), which becomes the
    /// position under the child. O(1).
    @inlinable
    @inline(__always)
    static func _child(of node: Unmanaged<_VectorNode>, _ level: Int, _ relative: inout Int) -> Unmanaged<_VectorNode> {
        let shift = bits &* level
        return node._withUnsafeGuaranteedRef { node in
            guard _slowPath(node.isRelaxed) else {
                // Every child but the last is complete: the slot is the
                // position's digit at this level, the rest its position
                // in the child.
                let slot = relative &>> shift
                relative &= (1 &<< shift) &- 1
                return node._unretainedChild(slot)
            }
            // The answer lies at or past the radix guess, usually within
            // two slots of it (the concatenation plan's bound): two steps
            // without a branch to mispredict, then a loop that rarely runs.
            // No step passes the last child's slot, whose size exceeds
            // every position in the node; the slots past it hold Int.max.
            let sizes = node._sizes
            var slot = relative &>> shift
            slot &+= sizes[slot] <= relative ? 1 : 0
            slot &+= sizes[slot] <= relative ? 1 : 0
            while sizes[slot] <= relative { slot &+= 1 }
            relative &-= sizes[slot &- 1]
            return node._unretainedChild(slot)
        }
    }

    /// Appends `element` to this leaf when it has room; false when full.
    @inlinable
    func appendIfRoom(_ element: Element) -> Bool {
        let header = _header
        let n = Int(header.pointee.count)
        guard n < Int(header.pointee.capacity) else { return false }
        (_elements + n).initialize(to: element)
        header.pointee.count = UInt32(n &+ 1)
        return true
    }

    /// Replaces the element at `offset` of this leaf.
    @inlinable
    func replaceElement(at offset: Int, with element: Element) {
        _elements[offset] = element
    }

    /// A new leaf holding this leaf's elements in `range`, with room for
    /// `capacity`.
    @inlinable
    func leaf(copying range: Range<Int>, capacity: Int) -> _VectorNode {
        Self.leaf(UnsafeBufferPointer(start: _elements + range.lowerBound, count: range.count), capacity: capacity)
    }
}
