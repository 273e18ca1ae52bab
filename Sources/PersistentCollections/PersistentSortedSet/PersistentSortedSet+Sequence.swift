// Iteration walks the leaves with a path of (node, child) positions: O(1)
// amortized per element, no allocation beyond the path (a few levels up
// to ~10^9 elements).

/// A position in a B+tree: the path from the root to a leaf element.
@usableFromInline
struct _SortedCursor<Element: Comparable> {
    @usableFromInline typealias _Set = PersistentSortedSet<Element>
    /// Internal nodes and the child taken in each.
    @usableFromInline var path: [(node: _SortedInner<Element>, child: Int)]
    @usableFromInline var leaf: _SortedLeaf<Element>?
    @usableFromInline var width: Int
    @usableFromInline var position: Int

    /// The cursor at `offset` (0...count; at `count`, past the end).
    @inlinable
    init(_ set: _Set, offset: Int) {
        path = []
        leaf = nil
        width = 0
        position = 0
        guard var node = set._root else { return }
        path.reserveCapacity(set._height)
        var remaining = Swift.min(offset, set.count)
        for _ in 0..<set._height {
            let inner = _Set._inner(node)
            let child = inner.child(containing: &remaining)
            node = inner[child].node
            path.append((inner, child))
        }
        let leaf = _Set._leaf(node)
        self.leaf = leaf
        width = leaf.width
        position = remaining
    }

    /// The element here, or nil past either end.
    @inlinable
    var element: Element? {
        guard position >= 0, position < width, let leaf else { return nil }
        return leaf[position]
    }

    /// Moves to the next element.
    @inlinable
    mutating func advance() {
        position += 1
        if position < width { return }
        guard leaf != nil else { return }
        // Up to the first ancestor with a next child, then down its left edge.
        var level = path.count - 1
        while level >= 0 {
            let (node, child) = path[level]
            if child + 1 < node.width {
                path[level].child = child + 1
                var next = node[child + 1].node
                for below in (level + 1)..<path.count {
                    let inner = _Set._inner(next)
                    path[below] = (inner, 0)
                    next = inner[0].node
                }
                let leaf = _Set._leaf(next)
                self.leaf = leaf
                width = leaf.width
                position = 0
                return
            }
            level -= 1
        }
        // Past the end: stay on the last leaf.
        position = width
    }

    /// Moves to the previous element.
    @inlinable
    mutating func retreat() {
        position -= 1
        if position >= 0 { return }
        guard leaf != nil else { return }
        var level = path.count - 1
        while level >= 0 {
            let (node, child) = path[level]
            if child > 0 {
                path[level].child = child - 1
                var next = node[child - 1].node
                for below in (level + 1)..<path.count {
                    let inner = _Set._inner(next)
                    path[below] = (inner, inner.width - 1)
                    next = inner[inner.width - 1].node
                }
                let leaf = _Set._leaf(next)
                self.leaf = leaf
                width = leaf.width
                position = width - 1
                return
            }
            level -= 1
        }
        position = -1
    }
}

extension PersistentSortedSet: Sequence {
    /// Iterates in ascending order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var _cursor: _SortedCursor<Element>
        @usableFromInline var _remaining: Int

        @inlinable
        init(_cursor: _SortedCursor<Element>, remaining: Int) {
            self._cursor = _cursor
            self._remaining = remaining
        }

        /// The next element, or nil at the end. O(1) amortized.
        @inlinable
        public mutating func next() -> Element? {
            guard _remaining > 0, let element = _cursor.element else { return nil }
            _remaining -= 1
            _cursor.advance()
            return element
        }
    }

    /// An iterator from the smallest element. O(log n).
    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(_cursor: _SortedCursor(self, offset: 0), remaining: count)
    }

    /// The number of elements. O(1).
    @inlinable public var underestimatedCount: Int { count }

    /// Calls `body` with each leaf's elements in order, a contiguous buffer
    /// at a time, until it returns false. O(n); no per-element overhead.
    @inlinable
    public func forEachChunk(_ body: (UnsafeBufferPointer<Element>) throws -> Bool) rethrows {
        guard let root = _root else { return }
        func visit(_ node: AnyObject, height: Int) throws -> Bool {
            if height == 0 { return try Self._leaf(node).withElements(body) }
            let inner = Self._inner(node)
            for child in inner.children where try !visit(child.node, height: height - 1) { return false }
            return true
        }
        _ = try visit(root, height: _height)
    }
}

extension PersistentSortedSet {
    /// Calls `body` with the elements at `offsets` (clamped to
    /// `0..<count`), a contiguous buffer (the part of one leaf in range) at
    /// a time, until it returns false: leaves in ascending order, or from
    /// the last when `descending` (each buffer still ascending; read it
    /// backwards). O(log n + k) for k elements, with no allocation and no
    /// reference counting: the fastest way to read a window of the set.
    ///
    ///     var ids: [Int] = []
    ///     set.forEachChunk(inOffsets: 100..<150) { chunk in
    ///         ids.append(contentsOf: chunk)
    ///         return true
    ///     }
    @inlinable
    public func forEachChunk(
        inOffsets offsets: Range<Int>,
        descending: Bool = false,
        _ body: (UnsafeBufferPointer<Element>) throws -> Bool
    ) rethrows {
        let range = offsets.clamped(to: 0..<count)
        guard let root = _root, !range.isEmpty else { return }
        _ = try Self._visitChunks(
            Unmanaged.passUnretained(root),
            height: _height,
            range.lowerBound,
            range.upperBound,
            descending,
            body
        )
    }

    /// ``forEachChunk(inOffsets:descending:_:)`` under `node` (which the
    /// caller's tree keeps alive), `height` levels above the leaves, for
    /// its offsets `low..<high` (not empty, within its count); false when
    /// `body` stopped.
    @inlinable
    static func _visitChunks(
        _ node: Unmanaged<AnyObject>,
        height: Int,
        _ low: Int,
        _ high: Int,
        _ descending: Bool,
        _ body: (UnsafeBufferPointer<Element>) throws -> Bool
    ) rethrows -> Bool {
        try node._withUnsafeGuaranteedRef { object in
            if height == 0 {
                return try _leaf(object).withElements { try body(UnsafeBufferPointer(rebasing: $0[low..<high])) }
            }
            let inner = _inner(object)
            // The first and last children the range meets, and where each starts.
            var (first, firstStart) = (0, 0)
            while firstStart + inner.count(of: first) <= low {
                firstStart += inner.count(of: first)
                first += 1
            }
            var (last, lastStart) = (first, firstStart)
            while lastStart + inner.count(of: last) < high {
                lastStart += inner.count(of: last)
                last += 1
            }
            var (child, start) = descending ? (last, lastStart) : (first, firstStart)
            while true {
                let width = inner.count(of: child)
                let (from, to) = (Swift.max(low - start, 0), Swift.min(high - start, width))
                guard try _visitChunks(inner.unretainedChild(child), height: height - 1, from, to, descending, body)
                else { return false }
                if descending {
                    guard child > first else { return true }
                    child -= 1
                    start -= inner.count(of: child)
                } else {
                    guard child < last else { return true }
                    start += width
                    child += 1
                }
            }
        }
    }

    /// The elements at offsets `start..<end`, ascending or descending: a
    /// view that iterates without copying.
    public struct Elements: Sequence {
        @usableFromInline let _set: PersistentSortedSet
        /// The offsets covered.
        public let offsets: Range<Int>
        /// Whether iteration runs from the last offset down.
        public let isDescending: Bool

        @inlinable
        init(_set: PersistentSortedSet, offsets: Range<Int>, isDescending: Bool) {
            self._set = _set
            self.offsets = offsets
            self.isDescending = isDescending
        }

        /// The number of elements. O(1).
        @inlinable public var count: Int { offsets.count }

        /// The same elements in the other direction. O(1).
        @inlinable
        public func reversed() -> Elements {
            Elements(_set: _set, offsets: offsets, isDescending: !isDescending)
        }

        /// Iterates the view.
        public struct Iterator: IteratorProtocol {
            @usableFromInline var _cursor: _SortedCursor<Element>
            @usableFromInline var _remaining: Int
            @usableFromInline let _descending: Bool

            @inlinable
            init(_cursor: _SortedCursor<Element>, remaining: Int, descending: Bool) {
                self._cursor = _cursor
                self._remaining = remaining
                self._descending = descending
            }

            /// The next element, or nil. O(1) amortized.
            @inlinable
            public mutating func next() -> Element? {
                guard _remaining > 0, let element = _cursor.element else { return nil }
                _remaining -= 1
                if _descending { _cursor.retreat() } else { _cursor.advance() }
                return element
            }
        }

        /// An iterator positioned at the first element of the view. O(log n).
        @inlinable
        public func makeIterator() -> Iterator {
            let start = isDescending ? offsets.upperBound - 1 : offsets.lowerBound
            return Iterator(
                _cursor: _SortedCursor(_set, offset: Swift.max(start, 0)),
                remaining: offsets.count,
                descending: isDescending
            )
        }

        /// The number of elements. O(1).
        @inlinable public var underestimatedCount: Int { offsets.count }
    }

    /// The elements at `offsets` (clamped to `0..<count`). O(1); iterating
    /// starts in O(log n).
    @inlinable
    public func elements(atOffsets offsets: Range<Int>) -> Elements {
        let clamped = offsets.clamped(to: 0..<count)
        return Elements(_set: self, offsets: clamped, isDescending: false)
    }

    /// The elements in `range`. O(log n).
    @inlinable
    public func elements(in range: Range<Element>) -> Elements {
        let low = rank(of: range.lowerBound)
        return elements(atOffsets: low..<Swift.max(low, rank(of: range.upperBound)))
    }

    /// The elements in `range`, both bounds included. O(log n).
    @inlinable
    public func elements(in range: ClosedRange<Element>) -> Elements {
        let low = rank(of: range.lowerBound)
        let high = rank(of: range.upperBound) + (contains(range.upperBound) ? 1 : 0)
        return elements(atOffsets: low..<Swift.max(low, high))
    }

    /// The elements from `element` on (included). O(log n).
    @inlinable
    public func elements(from element: Element) -> Elements {
        elements(atOffsets: rank(of: element)..<count)
    }

    /// The elements up to `element`, included. O(log n).
    @inlinable
    public func elements(through element: Element) -> Elements {
        elements(atOffsets: 0..<(rank(of: element) + (contains(element) ? 1 : 0)))
    }

    /// The elements below `element`. O(log n).
    @inlinable
    public func elements(upTo element: Element) -> Elements {
        elements(atOffsets: 0..<rank(of: element))
    }
}
