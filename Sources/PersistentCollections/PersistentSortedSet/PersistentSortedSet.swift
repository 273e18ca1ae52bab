/// A sorted collection of unique elements with value semantics and
/// structural sharing: a persistent B+tree with about 30 elements per leaf
/// (as many as fill a power-of-two allocation) and 16 children per internal
/// node, each internal node counting the elements under each child.
///
/// Copying a set is O(1). Inserting into or removing from a copy copies
/// only the O(log n) nodes on the path, one allocation each; a set that is
/// not shared is mutated in place and allocates only to split a node.
/// Subtree counts make ``rank(of:)`` and ``element(at:)`` O(log n), so
/// paging by offset costs the same as a lookup.
///
///     var titles: PersistentSortedSet = ["Echo", "Blue River"]
///     let before = titles
///     titles.insert("Velvet")             // `before` is unchanged
///     titles.element(at: 1)               // "Echo"
///     titles.elements(in: "C"..<"F")      // ["Echo"]
@frozen
public struct PersistentSortedSet<Element: Comparable> {
    @usableFromInline typealias _Leaf = _SortedLeaf<Element>
    @usableFromInline typealias _Inner = _SortedInner<Element>

    /// The root, or nil when empty (an empty set allocates nothing): a
    /// `_SortedLeaf` when `_height` is 0, else a `_SortedInner`.
    @usableFromInline var _root: AnyObject?
    /// Internal levels above the leaves.
    @usableFromInline var _height: Int

    @inlinable
    init(_root: AnyObject?, height: Int) {
        self._root = _root
        self._height = height
    }

    /// An empty set. O(1).
    @inlinable
    public init() {
        _root = nil
        _height = 0
    }

    /// The number of elements. O(1).
    @inlinable public var count: Int { _root.map { Self._count($0, height: _height) } ?? 0 }

    /// Whether the set is empty. O(1).
    @inlinable public var isEmpty: Bool { _root == nil }
}

extension PersistentSortedSet: @unchecked Sendable where Element: Sendable {}

// MARK: Nodes by height

extension PersistentSortedSet {
    @inlinable
    static func _leaf(_ node: AnyObject) -> _Leaf { unsafeDowncast(node, to: _Leaf.self) }

    @inlinable
    static func _inner(_ node: AnyObject) -> _Inner { unsafeDowncast(node, to: _Inner.self) }

    @inlinable
    static func _count(_ node: AnyObject, height: Int) -> Int {
        height == 0 ? _leaf(node).width : _inner(node).count
    }

    @inlinable
    static func _width(_ node: AnyObject, height: Int) -> Int {
        height == 0 ? _leaf(node).width : _inner(node).width
    }

    @inlinable
    static func _maximum(height: Int) -> Int { height == 0 ? _Leaf.maximum : _Inner.maximum }

    @inlinable
    static func _minimum(height: Int) -> Int { height == 0 ? _Leaf.minimum : _Inner.minimum }

    /// The smallest element under `node`.
    @inlinable
    static func _first(_ node: AnyObject, height: Int) -> Element {
        var node = node
        for _ in 0..<height { node = _inner(node)[0].node }
        return _leaf(node)[0]
    }
}

// MARK: Reading

// The descents below (and `_SortedTree`'s, which they call) take their
// comparisons as closures, and are always
// inlined into the public operation that passes them: left to the
// optimizer's judgement, a descent that grew by a few lines stopped being
// inlined, and every comparison became an indirect call (a count went
// from 8,000 to 11,000 instructions).

extension PersistentSortedSet {
    /// The leaf where a descent choosing children by `child` ends, found
    /// without reference counting (see `_SortedInner.unretainedChild`);
    /// `child` returns the child to take in an internal node.
    @inlinable @inline(__always)
    func _descend<R>(
        _ child: (_Inner) -> Int,
        _ body: (_Leaf) -> R
    ) -> R? {
        guard let root = _root else { return nil }
        return _SortedTree.descend(from: root, height: _height, child, body)
    }

    /// The element the probe matches, or nil: a descent comparing by
    /// `isBelow` (element < probe) and `isAbove` (probe < element).
    @inlinable @inline(__always)
    func _lookup(isBelow: (Element) -> Bool, isAbove: (Element) -> Bool) -> Element? {
        let found: Element?? = _descend({ $0.childIndex(probeIsBelow: isAbove) }) { leaf in
            let position = leaf.lowerBound(isBelow)
            guard position < leaf.width else { return nil }
            let found = leaf[position]
            return isAbove(found) ? nil : found
        }
        return found ?? nil
    }

    /// The number of elements below the probe.
    @inlinable @inline(__always)
    func _rank(isBelow: (Element) -> Bool, isAbove: (Element) -> Bool) -> Int {
        guard let root = _root else { return 0 }
        return _SortedTree.rank(from: root, height: _height, isBelow: isBelow, isAbove: isAbove)
    }

    /// The ranks of two probes, the lower first: found in one descent
    /// while both lie under the same child (a narrow range shares most of
    /// its path, whose nodes are then read once), and in two descents
    /// taken in step below the node where they part. Nil or an empty range when
    /// the upper probe is below the lower one (callers pass ordered
    /// probes: a `Range` or `ClosedRange`'s bounds).
    @inlinable @inline(__always)
    func _ranks(
        lowerIsBelow: (Element) -> Bool,
        lowerIsAbove: (Element) -> Bool,
        upperIsBelow: (Element) -> Bool,
        upperIsAbove: (Element) -> Bool
    ) -> Range<Int>? {
        guard let root = _root else { return 0..<0 }
        return _SortedTree.ranks(
            from: root,
            height: _height,
            lowerIsBelow: lowerIsBelow,
            lowerIsAbove: lowerIsAbove,
            upperIsBelow: upperIsBelow,
            upperIsAbove: upperIsAbove
        )
    }

    /// The offsets of the elements in `range`: `rank(of: range.lowerBound)
    /// ..< rank(of: range.upperBound)`, in one descent while the bounds
    /// share a path. O(log n).
    @inlinable
    public func offsets(in range: Range<Element>) -> Range<Int> {
        let lower = range.lowerBound
        let upper = range.upperBound
        return _ranks(
            lowerIsBelow: { $0 < lower },
            lowerIsAbove: { lower < $0 },
            upperIsBelow: { $0 < upper },
            upperIsAbove: { upper < $0 }
        ) ?? 0..<0
    }

    /// The number of elements in `range`. O(log n); see ``offsets(in:)``.
    @inlinable
    public func count(in range: Range<Element>) -> Int { offsets(in: range).count }

    /// The number of elements in `range`. O(log n).
    @inlinable
    public func count(in range: ClosedRange<Element>) -> Int {
        let lower = range.lowerBound
        let upper = range.upperBound
        // The upper probe's rank counts the elements at most `upper`.
        return _ranks(
            lowerIsBelow: { $0 < lower },
            lowerIsAbove: { lower < $0 },
            upperIsBelow: { !(upper < $0) },
            upperIsAbove: { upper < $0 }
        )?.count ?? 0
    }

    /// Whether `element` is in the set. O(log n).
    @inlinable
    public func contains(_ element: Element) -> Bool {
        _lookup(isBelow: { $0 < element }, isAbove: { element < $0 }) != nil
    }

    /// The member equal to `element`, or nil. O(log n).
    @inlinable
    public func member(equalTo element: Element) -> Element? {
        _lookup(isBelow: { $0 < element }, isAbove: { element < $0 })
    }

    /// The number of elements less than `element` (its position if
    /// inserted). O(log n).
    @inlinable
    public func rank(of element: Element) -> Int {
        _rank(isBelow: { $0 < element }, isAbove: { element < $0 })
    }

    /// The element at `offset` in ascending order. O(log n).
    /// - Precondition: `0 <= offset < count`.
    @inlinable
    public func element(at offset: Int) -> Element {
        precondition(offset >= 0 && offset < count, "offset \(offset) out of 0..<\(count)")
        var remaining = offset
        return _descend({ $0.child(containing: &remaining) }) { $0[remaining] }!
    }

    /// The smallest element, or nil. O(log n).
    @inlinable public var first: Element? { _root.map { Self._first($0, height: _height) } }

    /// The largest element, or nil. O(log n).
    @inlinable
    public var last: Element? {
        guard var node = _root else { return nil }
        for _ in 0..<_height {
            let inner = Self._inner(node)
            node = inner[inner.width - 1].node
        }
        let leaf = Self._leaf(node)
        return leaf[leaf.width - 1]
    }
}
