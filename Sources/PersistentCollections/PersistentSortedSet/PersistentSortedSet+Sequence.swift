// Iteration walks the leaves with a path of (node, child) positions: O(1)
// amortized per element, no allocation beyond the path (depth ≤ 5 up to
// ~10^9 elements).

/// A position in a B+tree: the path from the root to a leaf element.
@usableFromInline
struct _SortedCursor<Element: Comparable> {
    @usableFromInline typealias _Node = _SortedNode<Element>
    /// Internal nodes and the child taken in each.
    @usableFromInline var path: [(node: _Node, child: Int)]
    @usableFromInline var leaf: _Node?
    /// The leaf's elements, held directly so that stepping within a leaf
    /// touches no node.
    @usableFromInline var elements: ContiguousArray<Element>
    @usableFromInline var position: Int

    /// The cursor at `offset` (0...count; at `count`, past the end).
    @inlinable
    init(root: _Node?, offset: Int) {
        path = []
        leaf = nil
        elements = []
        position = 0
        guard var node = root else { return }
        var remaining = Swift.min(offset, node.count)
        while !node.isLeaf {
            var child = 0
            while child < node.children.count - 1 && remaining >= node.counts[child] {
                remaining -= node.counts[child]
                child += 1
            }
            path.append((node, child))
            node = node.children[child]
        }
        leaf = node
        elements = node.elements
        position = remaining
    }

    /// The element here, or nil past either end.
    @inlinable
    var element: Element? {
        guard position >= 0, position < elements.count else { return nil }
        return elements[position]
    }

    /// Moves to the next element.
    @inlinable
    mutating func advance() {
        position += 1
        if position < elements.count { return }
        guard let current = leaf else { return }
        // Up to the first ancestor with a next child, then down its left edge.
        while let (node, child) = path.last {
            path.removeLast()
            if child + 1 < node.children.count {
                path.append((node, child + 1))
                var next = node.children[child + 1]
                while !next.isLeaf {
                    path.append((next, 0))
                    next = next.children[0]
                }
                leaf = next
                elements = next.elements
                position = 0
                return
            }
        }
        // Past the end: stay on the last leaf.
        position = current.elements.count
        leaf = current
        path = []
    }

    /// Moves to the previous element.
    @inlinable
    mutating func retreat() {
        position -= 1
        if position >= 0 { return }
        guard let current = leaf else { return }
        while let (node, child) = path.last {
            path.removeLast()
            if child > 0 {
                path.append((node, child - 1))
                var next = node.children[child - 1]
                while !next.isLeaf {
                    path.append((next, next.children.count - 1))
                    next = next.children[next.children.count - 1]
                }
                leaf = next
                elements = next.elements
                position = next.elements.count - 1
                return
            }
        }
        position = -1
        leaf = current
        path = []
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
        Iterator(_cursor: _SortedCursor(root: _root, offset: 0), remaining: count)
    }

    /// The number of elements. O(1).
    @inlinable public var underestimatedCount: Int { count }

    /// Calls `body` with each leaf's elements in order, a contiguous buffer
    /// at a time, until it returns false. O(n); no per-element overhead.
    @inlinable
    public func forEachChunk(_ body: (UnsafeBufferPointer<Element>) throws -> Bool) rethrows {
        guard let root = _root else { return }
        func visit(_ node: _Node) throws -> Bool {
            if node.isLeaf { return try node.elements.withUnsafeBufferPointer(body) }
            for child in node.children where try !visit(child) { return false }
            return true
        }
        _ = try visit(root)
    }
}

extension PersistentSortedSet {
    /// The elements at offsets `start..<end`, ascending or descending: a
    /// view that iterates without copying.
    public struct Elements: Sequence {
        @usableFromInline let _root: _SortedNode<Element>?
        /// The offsets covered.
        public let offsets: Range<Int>
        /// Whether iteration runs from the last offset down.
        public let isDescending: Bool

        @inlinable
        init(_root: _SortedNode<Element>?, offsets: Range<Int>, isDescending: Bool) {
            self._root = _root
            self.offsets = offsets
            self.isDescending = isDescending
        }

        /// The number of elements. O(1).
        @inlinable public var count: Int { offsets.count }

        /// The same elements in the other direction. O(1).
        @inlinable
        public func reversed() -> Elements {
            Elements(_root: _root, offsets: offsets, isDescending: !isDescending)
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
                _cursor: _SortedCursor(root: _root, offset: Swift.max(start, 0)),
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
        return Elements(_root: _root, offsets: clamped, isDescending: false)
    }

    /// The elements in `range`. O(log n).
    @inlinable
    public func elements(in range: Range<Element>) -> Elements {
        elements(
            atOffsets: rank(of: range.lowerBound)..<Swift.max(rank(of: range.lowerBound), rank(of: range.upperBound))
        )
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
