extension PersistentVector: RandomAccessCollection, MutableCollection {
    public typealias Index = Int
    public typealias Indices = Range<Int>

    /// 0. O(1).
    @inlinable public var startIndex: Int { 0 }
    /// `count`. O(1).
    @inlinable public var endIndex: Int { _count }

    /// The element at `position`; setting it copies only the shared nodes on
    /// its path. O(log32 n).
    @inlinable
    public subscript(position: Int) -> Element {
        get { element(at: position) }
        set { _set(position, newValue) }
    }

    /// The valid indices. O(1).
    @inlinable public var indices: Range<Int> { 0..<_count }

    /// Walks leaf by leaf (see `_VectorWalk`): one tree descent per 32
    /// elements, then a pointer increment per element.
    @frozen
    public struct Iterator: IteratorProtocol {
        @usableFromInline let _vector: PersistentVector
        @usableFromInline var _walk: _VectorWalk<Element>

        @inlinable
        init(_vector: PersistentVector) {
            self._vector = _vector
            self._walk = _VectorWalk()
        }

        /// The next element, or nil at the end. O(1) amortized.
        @inlinable
        public mutating func next() -> Element? {
            _walk.next(in: _vector)
        }
    }

    /// An iterator over the elements in order. O(1).
    @inlinable
    public func makeIterator() -> Iterator { Iterator(_vector: self) }

    /// Calls `body` with each leaf's elements in order, as contiguous buffers.
    /// The fastest way to scan a vector. O(n).
    @inlinable
    public func forEachChunk(_ body: (UnsafeBufferPointer<Element>) throws -> Void) rethrows {
        var position = 0
        while position < _count {
            let (leaf, offset, start) = _leaf(containing: position)
            try leaf.withElements(from: offset, body)
            position = start + leaf.count
        }
    }
}

extension PersistentVector: RangeReplaceableCollection {
    /// Replaces the elements in `subrange` with `newElements`. O(log n + m).
    @inlinable
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == Element {
        replaceSubrange(subrange, with: PersistentVector(newElements))
    }

    /// Appends every element of `newElements`. O(m) amortized.
    @inlinable
    public mutating func append<S: Sequence>(contentsOf newElements: S) where S.Element == Element {
        if let vector = newElements as? PersistentVector {
            append(contentsOf: vector)
            return
        }
        for element in newElements { append(element) }
    }

    /// A vector of the elements of `elements`, built leaf by leaf. O(n).
    ///
    /// A short sequence gets a tail of exactly its length (a two-element
    /// list costs one small allocation, not a 32-slot leaf); appending to
    /// it later grows the tail to 32.
    @inlinable
    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        self.init()
        if let vector = elements as? PersistentVector {
            self = vector
            return
        }
        let expected = elements.underestimatedCount
        if expected > 0 && expected < _Node.branching {
            _tail = _Node.allocateLeaf(capacity: expected)
        }
        for element in elements { append(element) }
    }

    /// Inserts `element` at `index`. O(log n) by split and concatenation;
    /// O(1) amortized at the end.
    @inlinable
    public mutating func insert(_ element: Element, at index: Int) {
        precondition(index >= 0 && index <= _count, "PersistentVector insert index out of range")
        if index == _count {
            append(element)
            return
        }
        // Split, append, join: `replaceSubrange` without a vector for the
        // one new element.
        var result = prefix(index)
        result.append(element)
        result.append(contentsOf: suffix(from: index))
        self = result
    }

    /// Removes and returns the element at `index`. O(log n).
    @inlinable
    @discardableResult
    public mutating func remove(at index: Int) -> Element {
        let element = self[index]
        replaceSubrange(index..<(index + 1), with: PersistentVector())
        return element
    }
}

extension PersistentVector: ExpressibleByArrayLiteral {
    /// A vector of the literal's elements. O(n).
    @inlinable
    public init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}
