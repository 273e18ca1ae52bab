/// An ordered, random-access collection with value semantics and structural
/// sharing: a relaxed radix balanced (RRB) tree of 32-way nodes with a tail
/// buffer.
///
/// Copying is O(1); changing one element of a copy copies the O(log32 n)
/// nodes on its path, not the whole vector. Appends go to a tail buffer and
/// are amortized O(1). Concatenation (`+`, `append(contentsOf:)`), slicing
/// (`prefix`, `suffix`, `subrange`) and insertion or removal in the middle are
/// O(log n): concatenation rebalances only the seam, keeping at most two
/// extra nodes per level, so indexing stays O(log32 n) however the vector was
/// built.
///
///     var playlist: PersistentVector = ["Blue River", "Echo"]
///     let saved = playlist                 // O(1)
///     playlist.append("Velvet")            // `saved` is unchanged
///     let both = saved + playlist          // O(log n)
///
/// A vector that is not shared is mutated in place.
@frozen
public struct PersistentVector<Element> {
    @usableFromInline typealias _Node = _VectorNode<Element>

    /// The tree holding elements `0 ..< count - tailCount`, or nil.
    @usableFromInline var _root: _Node?
    /// Height of `_root` (0: the root is a leaf).
    @usableFromInline var _height: Int
    /// A leaf of capacity 32 holding the last elements, or nil.
    @usableFromInline var _tail: _Node?
    @usableFromInline var _count: Int

    @inlinable
    init(_root: _Node?, height: Int, tail: _Node?, count: Int) {
        self._root = _root
        self._height = height
        self._tail = tail
        self._count = count
    }

    /// An empty vector. O(1); allocates nothing.
    @inlinable
    public init() {
        self.init(_root: nil, height: 0, tail: nil, count: 0)
    }

    /// The number of elements. O(1).
    @inlinable public var count: Int { _count }

    /// Whether the vector is empty. O(1).
    @inlinable public var isEmpty: Bool { _count == 0 }

    @inlinable var _tailCount: Int { _tail?.count ?? 0 }
    @inlinable var _treeCount: Int { _count - _tailCount }
}

extension PersistentVector: @unchecked Sendable where Element: Sendable {}

// MARK: Reading

extension PersistentVector {
    /// The leaf holding `index` (unretained: valid while this vector is
    /// alive), the offset of `index` in it, and the leaf's first index.
    /// O(log32 n); O(1) in the tail.
    @inlinable
    func _leaf(containing index: Int) -> (leaf: _VectorLeaf<Element>, offset: Int, leafStart: Int) {
        _Node.leaf(containing: index, root: _root, tail: _tail, height: _height, treeCount: _treeCount)
    }

    /// The element at `index`. O(log32 n); O(1) in the tail.
    @inlinable
    public func element(at index: Int) -> Element {
        precondition(index >= 0 && index < _count, "PersistentVector index \(index) out of range 0..<\(_count)")
        // The tail holds at most 32 elements: below `count - 32`, the
        // index is in the tree, known without reading the tail's count.
        // (The descent is called on both paths rather than once after a
        // nested test: laid out this way it takes 3 instructions fewer.)
        if index < _count &- _Node.branching {
            return _Node.element(at: index, root: _root.unsafelyUnwrapped, height: _height)
        }
        let treeCount = _treeCount
        if index >= treeCount {
            return _tail.unsafelyUnwrapped._elements[index &- treeCount]
        }
        return _Node.element(at: index, root: _root.unsafelyUnwrapped, height: _height)
    }
}

// MARK: Writing

extension PersistentVector {
    /// Appends `element`. Amortized O(1): the tail absorbs 32 appends, then
    /// joins the tree as one leaf. In place when the vector is not shared.
    @inlinable
    public mutating func append(_ element: Element) {
        if _tail != nil && isKnownUniquelyReferenced(&_tail!) {
            if _tail.unsafelyUnwrapped.appendIfRoom(element) {
                _count &+= 1
                _checkAfterMutation(around: _count - 1, _count - 1)
                return
            }
        }
        _appendStartingTail(element)
    }

    /// The slow path of `append`: no tail yet, a full tail, or a shared one.
    @inlinable
    mutating func _appendStartingTail(_ element: Element) {
        if _tail == nil {
            _tail = _Node.allocateLeaf(capacity: _Node.branching)
        } else if _tail!.count == _Node.branching {
            _pushTail()
            _tail = _Node.allocateLeaf(capacity: _Node.branching)
        } else {
            _tail = _tail!.copy(capacity: _Node.branching)
        }
        let appended = _tail.unsafelyUnwrapped.appendIfRoom(element)
        precondition(appended, "a new or copied tail has room")
        _count += 1
        _checkAfterMutation(around: _treeCount - 1, _count - 1)
    }

    /// Moves the tail into the tree as its last leaf.
    @inlinable
    mutating func _pushTail() {
        guard let tail = _tail, tail.count > 0 else { return }
        _tail = nil
        _pushLeaf(tail)
    }

    /// Adds `leaf` after the tree's last element (the tail must be empty).
    @inlinable
    mutating func _pushLeaf(_ leaf: _Node) {
        guard _root != nil else {
            _root = leaf
            _height = 0
            return
        }
        if _height == 0 {
            _root = _Node.branch([_root!, leaf], height: 1)
            _height = 1
            return
        }
        let target = _root.unsafelyUnwrapped._deepestOpenSpineHeight(height: _height)
        if target > 0 {
            _Node.pushLeaf(&_root!, height: _height, target: target, leaf)
        } else {
            _root = _Node.branch([_root!, _Node.path(to: leaf, height: _height)], height: _height + 1)
            _height += 1
        }
    }

    /// Replaces the element at `index`, copying the shared nodes on its path.
    /// O(log32 n).
    @inlinable
    mutating func _set(_ index: Int, _ element: Element) {
        precondition(index >= 0 && index < _count, "PersistentVector index \(index) out of range 0..<\(_count)")
        let treeCount = _treeCount
        if index >= treeCount {
            if !isKnownUniquelyReferenced(&_tail!) { _tail = _tail!.copy() }
            _tail!.replaceElement(at: index - treeCount, with: element)
            _checkAfterMutation(around: index, index)
            return
        }
        _Node.set(&_root!, height: _height, index, element)
        _checkAfterMutation(around: index, index)
    }
}
