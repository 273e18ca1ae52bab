/// The fixed part of every vector node (16 bytes, so the tail that follows
/// the 16-byte object header starts 16-byte aligned).
@usableFromInline
struct _VectorNodeHeader {
    /// Slots in use: elements in a leaf, children in a branch.
    @usableFromInline var count: UInt32
    /// Slots allocated.
    @usableFromInline var capacity: UInt32
    @usableFromInline var isLeaf: Bool
    /// Whether this branch carries a size table (its children are not all
    /// complete except the last, so radix indexing does not apply).
    @usableFromInline var isRelaxed: Bool
    @usableFromInline var _padding1: UInt16 = 0
    @usableFromInline var _padding2: UInt32 = 0

    @inlinable
    init(count: UInt32, capacity: UInt32, isLeaf: Bool, isRelaxed: Bool) {
        self.count = count
        self.capacity = capacity
        self.isLeaf = isLeaf
        self.isRelaxed = isRelaxed
    }
}

/// The unit of the node's tail allocation: 8 bytes, 8-aligned.
///
/// It is declared as holding a reference on purpose: the tail stores
/// elements and child references through typed pointers, and a tail typed
/// as trivial words lets the optimizer conclude that nothing stored there
/// escapes — it then promotes stored class instances to the stack
/// (observed under AddressSanitizer as frees of stack addresses).
@usableFromInline
struct _VectorNodeWord {
    @usableFromInline var reference: AnyObject?
}

/// A node of the relaxed radix balanced tree behind ``PersistentVector``.
///
/// Leaves hold up to 32 elements; branches hold up to 32 children and, when
/// relaxed, a size table right after the children:
///
///     leaf:    [ elements: capacity × stride(Element) ]
///     branch:  [ children: capacity × 8 ][ 0 ][ sizes: capacity × 8 ]  (the last two relaxed only)
///
/// `sizes[i]` is the number of elements in children 0...i (cumulative),
/// and `sizes[-1]` is 0, so that the elements before child i are always
/// `sizes[i - 1]`, without a test for the first child. A
/// relaxed branch has capacity 32, and its size slots past `count` hold
/// `Int.max` (a branch's count only grows in place), so that a lookup
/// reads the table at a fixed offset and past the last child without
/// reading the header.
///
/// Invariants (checked by `PersistentVector._invariantCheck`):
/// - Exactly `count` slots are initialized; 1 ≤ count ≤ capacity ≤ 32,
///   except an empty leaf used as a fresh tail.
/// - A node at height 0 is a leaf, above that a branch.
/// - A regular (non-relaxed) branch: every child but the last is complete
///   (holds 32^height elements), so the child of index i is i >> (5·height).
/// - A relaxed branch's size table is strictly increasing and equals the
///   children's sizes; its capacity is 32, its slots past `count` hold
///   `Int.max`, and the word before it holds 0.
///
/// Element and child pointers derive from the node's own storage and are
/// valid only while the node is alive. A local variable does not guarantee
/// that past its last use, so a node held only by a local is read through
/// `child(at:)`, which loads inside the storage closure.
@usableFromInline
final class _VectorNode<Element>: ManagedBuffer<_VectorNodeHeader, _VectorNodeWord> {
    @inlinable
    deinit {
        let h = _header.pointee
        if h.isLeaf {
            // Through `_NestedRelease`: an element may hold vectors nested
            // in it without bound, each freed inside the one before.
            _elements._destroyElementsOfNode(count: Int(h.count))
        } else {
            _children._deinitializeReferences(count: Int(h.count))
        }
    }
}

extension _VectorNode {
    @inlinable static var bits: Int { 5 }
    @inlinable static var branching: Int { 32 }

    @inlinable
    static func allocateLeaf(capacity: Int) -> _VectorNode {
        precondition(MemoryLayout<Element>.alignment <= 16, "PersistentVector supports alignment up to 16")
        let words = (capacity * MemoryLayout<Element>.stride + 7) / 8
        let node = unsafeDowncast(
            _VectorNode.create(minimumCapacity: max(words, 1)) { _ in
                _VectorNodeHeader(count: 0, capacity: UInt32(capacity), isLeaf: true, isRelaxed: false)
            },
            to: _VectorNode.self
        )
        _ = node.withUnsafeMutablePointerToElements {
            UnsafeMutableRawPointer($0).bindMemory(to: Element.self, capacity: capacity)
        }
        return node
    }

    @inlinable
    static func allocateBranch(capacity requested: Int, relaxed: Bool) -> _VectorNode {
        // A relaxed branch always has room for 32 children, so that its
        // size table starts at a fixed offset, and the table's unused slots
        // hold Int.max: a lookup reads the table without first reading the
        // node's capacity or count (two dependent loads fewer a level).
        let capacity = relaxed ? branching : requested
        let words = relaxed ? 2 &* capacity &+ 1 : capacity
        let node = unsafeDowncast(
            _VectorNode.create(minimumCapacity: max(words, 1)) { _ in
                _VectorNodeHeader(count: 0, capacity: UInt32(capacity), isLeaf: false, isRelaxed: relaxed)
            },
            to: _VectorNode.self
        )
        node.withUnsafeMutablePointerToElements {
            let raw = UnsafeMutableRawPointer($0)
            raw.bindMemory(to: _VectorNode.self, capacity: capacity)
            if relaxed {
                let table = (raw + capacity * 8).bindMemory(to: Int.self, capacity: capacity &+ 1)
                table.initialize(to: 0)
                (table + 1).initialize(repeating: .max, count: capacity)
            }
        }
        return node
    }

    /// The header through a pointer (no exclusivity check, unlike `header`).
    @inlinable
    var _header: UnsafeMutablePointer<_VectorNodeHeader> { withUnsafeMutablePointerToHeader { $0 } }

    @inlinable
    var _elements: UnsafeMutablePointer<Element> {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0).assumingMemoryBound(to: Element.self) }
    }

    @inlinable
    var _children: UnsafeMutablePointer<_VectorNode> {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0).assumingMemoryBound(to: _VectorNode.self) }
    }

    /// A relaxed branch's size table (after its 32 child slots and the
    /// 0 that `_sizes[-1]` reads).
    @inlinable
    var _sizes: UnsafeMutablePointer<Int> {
        withUnsafeMutablePointerToElements {
            (UnsafeMutableRawPointer($0) + (Self.branching &+ 1) &* 8).assumingMemoryBound(to: Int.self)
        }
    }

    @inlinable var count: Int { Int(_header.pointee.count) }
    @inlinable var slotCapacity: Int { Int(_header.pointee.capacity) }
    @inlinable var isRelaxed: Bool { _header.pointee.isRelaxed }
    @inlinable var isLeaf: Bool { _header.pointee.isLeaf }

    /// The child at `index` without retaining it; valid while `self` is alive.
    @inlinable
    func _unretainedChild(_ index: Int) -> Unmanaged<_VectorNode> {
        UnsafeRawPointer(_children).assumingMemoryBound(to: Unmanaged<_VectorNode>.self)[index]
    }

    /// Walks the right edge of this subtree (a node at `height`) down until
    /// `visit`, given each node and its height, returns a result; `visit`
    /// must return one at a leaf. O(height), no reference counting: the
    /// children are read unretained while `self` keeps them alive.
    @inlinable
    func _walkRightEdge<Result>(height: Int, _ visit: (_VectorNode, Int) -> Result?) -> Result {
        var node = Unmanaged.passUnretained(self)
        var level = height
        while true {
            let (result, last): (Result?, Unmanaged<_VectorNode>?) = node._withUnsafeGuaranteedRef { node in
                if let result = visit(node, level) { return (result, nil) }
                return (nil, node._unretainedChild(node.count &- 1))
            }
            if let result { return result }
            node = last.unsafelyUnwrapped
            level &-= 1
        }
    }

    /// Elements in the subtree rooted here, a node at `height`. O(log n) for
    /// a regular node (it follows the last child), O(1) otherwise.
    @inlinable
    func size(height: Int) -> Int {
        var before = 0
        return _walkRightEdge(height: height) { node, level in
            let count = node.count
            if node.isLeaf { return before &+ count }
            if node.isRelaxed { return before &+ node._sizes[count &- 1] }
            before &+= (count &- 1) << (Self.bits &* level)
            return nil
        }
    }

    /// Elements a complete subtree at `height` holds.
    @inlinable
    static func capacity(height: Int) -> Int { 1 << (bits * (height + 1)) }

    // MARK: Copies

    /// A copy sharing every child or copying every element; `capacity`
    /// defaults to the current one.
    @inlinable
    func copy(capacity newCapacity: Int? = nil) -> _VectorNode {
        let n = count
        let cap = newCapacity ?? slotCapacity
        if isLeaf {
            let node = _VectorNode.allocateLeaf(capacity: cap)
            node._elements._initialize(copying: _elements, count: n)
            node._header.pointee.count = UInt32(n)
            return node
        }
        let node = _VectorNode.allocateBranch(capacity: cap, relaxed: isRelaxed)
        node._children._initialize(copying: _children, count: n)
        if isRelaxed { node._sizes._initialize(copying: _sizes, count: n) }
        node._header.pointee.count = UInt32(n)
        return node
    }

    /// A leaf holding `elements`.
    @inlinable
    static func leaf(_ elements: UnsafeBufferPointer<Element>, capacity: Int? = nil) -> _VectorNode {
        let node = allocateLeaf(capacity: capacity ?? elements.count)
        if let base = elements.baseAddress {
            node._elements._initialize(copying: base, count: elements.count)
        }
        node._header.pointee.count = UInt32(elements.count)
        return node
    }

    /// A branch at `height` over `children`, regular when every child but the
    /// last is complete, relaxed (with a size table) otherwise.
    @inlinable
    static func branch(_ children: [_VectorNode], height: Int) -> _VectorNode {
        precondition(!children.isEmpty && children.count <= branching)
        let complete = capacity(height: height - 1)
        var regular = true
        var sizes: [Int] = []
        sizes.reserveCapacity(children.count)
        var total = 0
        for (i, child) in children.enumerated() {
            let size = child.size(height: height - 1)
            if i < children.count - 1 && size != complete { regular = false }
            total += size
            sizes.append(total)
        }
        let node = allocateBranch(capacity: children.count, relaxed: !regular)
        children.withUnsafeBufferPointer { node._children._initialize(copying: $0.baseAddress!, count: children.count) }
        if !regular {
            sizes.withUnsafeBufferPointer { node._sizes._initialize(copying: $0.baseAddress!, count: children.count) }
        }
        node._header.pointee.count = UInt32(children.count)
        return node
    }

    /// The child at `index`, retained, read while `self` is guaranteed alive:
    /// `node = node.child(at: 0)` is safe even when `node` held the last
    /// reference to the parent (`node._children[0]` is not: the optimizer
    /// may free the parent before the load).
    @inlinable
    func child(at index: Int) -> _VectorNode {
        withUnsafeMutablePointerToElements { UnsafeRawPointer($0).assumingMemoryBound(to: _VectorNode.self)[index] }
    }
}
