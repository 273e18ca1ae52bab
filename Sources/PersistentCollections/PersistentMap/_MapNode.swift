/// The fixed part of every trie node.
@usableFromInline
struct _MapNodeHeader {
    /// Which of the 16 hash slots hold an item inline. In a collision node:
    /// the number of items instead.
    @usableFromInline var dataMap: UInt32
    /// Which of the 16 hash slots hold a child node.
    @usableFromInline var nodeMap: UInt32
    /// How many items fit before the node must be reallocated.
    @usableFromInline var itemCapacity: UInt32
    /// How many children fit before the node must be reallocated.
    @usableFromInline var childCapacity: UInt16
    /// Whether this node holds keys whose 64-bit hashes are all equal.
    @usableFromInline var isCollision: Bool
    /// Pads the header to 16 bytes so the tail starts 16-byte aligned.
    @usableFromInline var _padding: UInt8 = 0

    @inlinable
    init(dataMap: UInt32, nodeMap: UInt32, itemCapacity: UInt32, childCapacity: UInt16, isCollision: Bool) {
        self.dataMap = dataMap
        self.nodeMap = nodeMap
        self.itemCapacity = itemCapacity
        self.childCapacity = childCapacity
        self.isCollision = isCollision
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
struct _MapNodeWord {
    @usableFromInline var reference: AnyObject?
}

/// One key-value pair as stored inline in a node.
@usableFromInline
struct _MapItem<Key, Value> {
    @usableFromInline var key: Key
    @usableFromInline var value: Value

    @inlinable
    init(key: Key, value: Value) {
        self.key = key
        self.value = value
    }
}

/// A node of the CHAMP trie behind ``PersistentMap``: one allocation holding
/// the header, then the items, then the child references.
///
/// Layout of the tail allocation (bytes, from the start of the elements):
///
///     [ children: childCapacity × 8 ][ pad to align(Item) ][ items: itemCapacity × stride(Item) ]
///
/// Children come first so that a lookup descending through a node reads the
/// header and the child pointers from the same cache lines.
///
/// Invariants (checked by `_invariantCheck`):
/// - Items are ordered by the rank of their hash slot in `dataMap`, children
///   by the rank of their slot in `nodeMap`; the two maps are disjoint.
/// - Exactly `popcount(dataMap)` items and `popcount(nodeMap)` children are
///   initialized (collision nodes: `dataMap` items and no children).
/// - Canonical shape: no node except the root is empty or holds a single item
///   and no children; such a node is inlined into its parent. So two maps
///   with equal contents have equal shapes, and shared subtrees can be
///   skipped by identity.
/// - Collision nodes appear only below the last hash level and hold ≥ 2 items.
///
/// The tail is declared as 8-byte words so that it starts 8-byte aligned
/// (a byte-typed tail would start right after the 15 header bytes); with the
/// 16-byte object header and the padded 16-byte node header it starts at
/// offset 32, which also serves 16-byte-aligned items.
///
/// The element pointers below are derived from the node's own storage and are
/// only valid while the node is alive; every caller holds a reference to the
/// node for as long as it uses them.
@usableFromInline
final class _MapNode<Key: Hashable, Value>: ManagedBuffer<_MapNodeHeader, _MapNodeWord> {
    @usableFromInline typealias Item = _MapItem<Key, Value>

    @inlinable
    deinit {
        let count = itemCount
        let children = childCount
        if count > 0 && !(_isPOD(Key.self) && _isPOD(Value.self)) {
            // Through `_NestedRelease`: a value may hold maps nested in it
            // without bound, each freed inside the one before.
            let items = _itemBytes
            _prefetchReferents(of: items, byteCount: count &* Self._itemStride)
            _NestedRelease.destroying {
                Self._destroyItems(at: items, count: count)
            } orSettingAside: {
                Self._setAsideItems(at: items, count: count)
            }
        }
        _children._deinitializeReferences(count: children)
    }
}

// MARK: Layout

extension _MapNode {
    /// Bits of hash consumed per level.
    @inlinable static var bitsPerLevel: Int { _mapSlotBits }

    /// Slots per node: its possible items and children.
    @inlinable static var slotCount: Int { 1 << _mapSlotBits }

    /// The first shift at which no hash bits remain: nodes there are collision nodes.
    @inlinable static var maximumShift: Int { 64 }

    /// Where the items start, in bytes from the start of the tail.
    @inlinable
    static func itemOffset(childCapacity: Int) -> Int {
        let alignment = _itemAlignment
        return (childCapacity * MemoryLayout<_MapNode>.stride + alignment - 1) & ~(alignment - 1)
    }

    // The item's layout, computed from the key's and value's as the compiler
    // lays out a struct of two stored properties (each at the next offset
    // its alignment allows). In specialized code these fold to the
    // constants `MemoryLayout<Item>` gives; in a generic class's `deinit`,
    // which is never specialized, they read the key's and value's metadata,
    // which the node's own metadata carries, where `MemoryLayout<Item>`
    // would look `_MapItem<Key, Value>` up in the runtime's metadata cache
    // (hundreds of instructions, on every node freed). `_itemLayoutCheck`
    // in the invariant check holds them equal.

    /// The alignment of an item.
    @inlinable static var _itemAlignment: Int { Swift.max(MemoryLayout<Key>.alignment, MemoryLayout<Value>.alignment) }

    /// The offset of an item's value.
    @inlinable
    static var _itemValueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<Key>.size + alignment - 1) & ~(alignment - 1)
    }

    /// The distance between items.
    @inlinable
    static var _itemStride: Int {
        let alignment = _itemAlignment
        return Swift.max(1, (_itemValueOffset + MemoryLayout<Value>.size + alignment - 1) & ~(alignment - 1))
    }

    /// Destroys the first `count` items, one key and one value at a time,
    /// skipping trivial ones, with the layout above: `_items.deinitialize`
    /// would need `_MapItem<Key, Value>`'s metadata.
    @inlinable
    static func _destroyItems(at items: UnsafeMutableRawPointer, count: Int) {
        let stride = Self._itemStride
        let valueOffset = Self._itemValueOffset
        let (destroysKeys, destroysValues) = (!_isPOD(Key.self), !_isPOD(Value.self))
        for i in 0..<count {
            let item = items + i &* stride
            if destroysKeys { item.assumingMemoryBound(to: Key.self).deinitialize(count: 1) }
            if destroysValues { (item + valueOffset).assumingMemoryBound(to: Value.self).deinitialize(count: 1) }
        }
    }

    /// The `count` items at `items` moved (key by key, value by value)
    /// into a box that destroys them when freed: for ``_NestedRelease``.
    @usableFromInline
    static func _setAsideItems(at items: UnsafeMutableRawPointer, count: Int) -> AnyObject {
        let stride = Self._itemStride
        let valueOffset = Self._itemValueOffset
        let storage = UnsafeMutableRawPointer.allocate(byteCount: count * stride, alignment: Self._itemAlignment)
        for i in 0..<count {
            let (from, to) = (items + i &* stride, storage + i &* stride)
            to.bindMemory(to: Key.self, capacity: 1)
                .moveInitialize(from: from.assumingMemoryBound(to: Key.self), count: 1)
            (to + valueOffset).bindMemory(to: Value.self, capacity: 1)
                .moveInitialize(from: (from + valueOffset).assumingMemoryBound(to: Value.self), count: 1)
        }
        return _SetAsideElements(storage: storage) { _destroyItems(at: $0, count: count) }
    }

    /// Whether the layout above is the compiler's.
    @inlinable
    static var _itemLayoutCheck: Bool {
        _itemAlignment == MemoryLayout<Item>.alignment && _itemStride == MemoryLayout<Item>.stride
            && _itemValueOffset == MemoryLayout<Item>.offset(of: \.value)
    }

    /// Allocates a node with room for the given counts; its maps are empty.
    @inlinable
    static func allocate(itemCapacity: Int, childCapacity: Int, isCollision: Bool = false) -> _MapNode {
        precondition(MemoryLayout<Item>.alignment <= 16, "PersistentMap supports element alignment up to 16")
        let bytes = itemOffset(childCapacity: childCapacity) + itemCapacity * MemoryLayout<Item>.stride
        let words = (bytes + 7) / 8
        let buffer = _MapNode.create(minimumCapacity: max(words, 1)) { _ in
            _MapNodeHeader(
                dataMap: 0,
                nodeMap: 0,
                itemCapacity: UInt32(itemCapacity),
                childCapacity: UInt16(childCapacity),
                isCollision: isCollision
            )
        }
        let node = unsafeDowncast(buffer, to: _MapNode.self)
        node.withUnsafeMutablePointerToElements { base in
            let raw = UnsafeMutableRawPointer(base)
            raw.bindMemory(to: _MapNode.self, capacity: childCapacity)
            (raw + itemOffset(childCapacity: childCapacity)).bindMemory(to: Item.self, capacity: itemCapacity)
        }
        return node
    }

    /// The header, read and written through a pointer: the `header`
    /// property of `ManagedBuffer` is a class stored property, whose every
    /// access pays a dynamic exclusivity check.
    @inlinable
    var _header: UnsafeMutablePointer<_MapNodeHeader> {
        withUnsafeMutablePointerToHeader { $0 }
    }

    @inlinable
    var _children: UnsafeMutablePointer<_MapNode> {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0).assumingMemoryBound(to: _MapNode.self) }
    }

    @inlinable
    var _items: UnsafeMutablePointer<Item> { _itemBytes.assumingMemoryBound(to: Item.self) }

    /// Where the items start, untyped: what a generic `deinit` reads them
    /// through without `Item`'s metadata.
    @inlinable
    var _itemBytes: UnsafeMutableRawPointer {
        let offset = Self.itemOffset(childCapacity: Int(_header.pointee.childCapacity))
        return withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) + offset }
    }

    /// The child at `index` without retaining it; valid while `self` is alive.
    @inlinable
    func _unretainedChild(_ index: Int) -> Unmanaged<_MapNode> {
        UnsafeRawPointer(_children).assumingMemoryBound(to: Unmanaged<_MapNode>.self)[index]
    }

    /// Reads the first word of every child together, so that their cache
    /// misses overlap before a walk visits them one at a time.
    @inlinable
    func _prefetchChildren() {
        _prefetchObjects(UnsafeRawPointer(_children), count: childCount)
    }

    @inlinable var dataMap: UInt32 { _header.pointee.dataMap }
    @inlinable var nodeMap: UInt32 { _header.pointee.nodeMap }
    @inlinable var isCollision: Bool { _header.pointee.isCollision }

    @inlinable
    var itemCount: Int {
        let h = _header.pointee
        return h.isCollision ? Int(h.dataMap) : h.dataMap.nonzeroBitCount
    }

    /// The child of rank `rank`, retained. O(1).
    @inlinable func child(_ rank: Int) -> _MapNode { _children[rank] }

    /// The key of the item in `slot`. O(1).
    @inlinable func key(at slot: Int) -> Key { _items[slot].key }

    /// The value of the item in `slot`. O(1).
    @inlinable func value(at slot: Int) -> Value { _items[slot].value }

    @inlinable var childCount: Int { _header.pointee.nodeMap.nonzeroBitCount }
    @inlinable var itemCapacity: Int { Int(_header.pointee.itemCapacity) }
    @inlinable var childCapacity: Int { Int(_header.pointee.childCapacity) }
}

// MARK: Hash slots

// Nodes have 16 slots, not the 32 of most CHAMP and HAMT tries. A change
// to a shared map copies every node on its path, and each copy retains
// every child it shares: at 1M keys, 16-way paths are one level longer but
// copy and retain half as much per level (four inner nodes of 160 bytes
// and a leaf of at most 16 items, against three of 288 bytes and a leaf of
// up to 32), which is what a kept version costs in time and in memory. A
// lookup pays the extra level in the top of the trie, which stays cached.

/// Hash bits consumed per trie level.
@inlinable @inline(__always)
var _mapSlotBits: Int { 4 }

/// The slot of `hash` at `shift`, 0..<16.
@inlinable @inline(__always)
func _slotIndex(_ hash: UInt64, _ shift: Int) -> Int {
    Int(truncatingIfNeeded: (hash &>> UInt64(truncatingIfNeeded: shift)) & (UInt64(1) &<< UInt64(_mapSlotBits) &- 1))
}

@inlinable @inline(__always)
func _slotBit(_ hash: UInt64, _ shift: Int) -> UInt32 {
    UInt32(1) &<< UInt32(truncatingIfNeeded: _slotIndex(hash, shift))
}

@inlinable @inline(__always)
func _rank(_ map: UInt32, _ bit: UInt32) -> Int {
    (map & (bit &- 1)).nonzeroBitCount
}

// Keys of a fixed-width integer type are their own hash (sign- or
// zero-extended to 64 bits), as in immer and Rust's `im`: distinct keys
// then never share a full hash, so no collision node ever forms and the
// deepest path is 16 levels whatever the keys; and keys that are dense or
// in an arithmetic progression with odd step (row IDs, counters, times
// in a fixed unit) fill the trie's slots level by level, with no sparse
// nodes: at 1M such keys every key sits 5 levels down, in a trie of
// about half the bytes of a hashed one. Keys sharing low bits (multiples
// of 2^k) share the top nodes of their paths, which stay in cache. Other
// keys use the standard library's seeded hasher.
@inlinable @inline(__always)
func _hash<Key: Hashable>(_ key: Key) -> UInt64 {
    // Each test folds to a constant once the map is specialized.
    if Key.self == Int.self { return UInt64(bitPattern: Int64(unsafeBitCast(key, to: Int.self))) }
    if Key.self == Int64.self { return UInt64(bitPattern: unsafeBitCast(key, to: Int64.self)) }
    if Key.self == UInt64.self { return unsafeBitCast(key, to: UInt64.self) }
    if Key.self == UInt.self { return UInt64(unsafeBitCast(key, to: UInt.self)) }
    if Key.self == Int32.self { return UInt64(bitPattern: Int64(unsafeBitCast(key, to: Int32.self))) }
    if Key.self == UInt32.self { return UInt64(unsafeBitCast(key, to: UInt32.self)) }
    if Key.self == Int16.self { return UInt64(bitPattern: Int64(unsafeBitCast(key, to: Int16.self))) }
    if Key.self == UInt16.self { return UInt64(unsafeBitCast(key, to: UInt16.self)) }
    if Key.self == Int8.self { return UInt64(bitPattern: Int64(unsafeBitCast(key, to: Int8.self))) }
    if Key.self == UInt8.self { return UInt64(unsafeBitCast(key, to: UInt8.self)) }
    return UInt64(bitPattern: Int64(key.hashValue))
}

// MARK: Copies

extension _MapNode {
    /// An exact-size copy sharing every child (each gains a reference).
    @inlinable
    func copy(itemCapacity newItemCapacity: Int? = nil, childCapacity newChildCapacity: Int? = nil) -> _MapNode {
        let items = itemCount
        let children = childCount
        let node = _MapNode.allocate(
            itemCapacity: newItemCapacity ?? items,
            childCapacity: newChildCapacity ?? children,
            isCollision: isCollision
        )
        node._header.pointee.dataMap = dataMap
        node._header.pointee.nodeMap = nodeMap
        node._items._initialize(copying: _items, count: items)
        node._children._initialize(copying: _children, count: children)
        return node
    }

    /// A node holding exactly one item (used for the root of a one-entry map).
    @inlinable
    static func single(_ item: Item, hash: UInt64, shift: Int) -> _MapNode {
        let node = allocate(itemCapacity: 1, childCapacity: 0)
        node._header.pointee.dataMap = _slotBit(hash, shift)
        node._items.initialize(to: item)
        return node
    }

    /// The smallest subtree holding two items whose hashes agree below `shift`.
    @inlinable
    static func pair(_ a: Item, _ hashA: UInt64, _ b: Item, _ hashB: UInt64, shift: Int) -> _MapNode {
        if shift >= maximumShift {
            let node = allocate(itemCapacity: 2, childCapacity: 0, isCollision: true)
            node._header.pointee.dataMap = 2
            node._items.initialize(to: a)
            (node._items + 1).initialize(to: b)
            return node
        }
        let bitA = _slotBit(hashA, shift)
        let bitB = _slotBit(hashB, shift)
        if bitA == bitB {
            let node = allocate(itemCapacity: 0, childCapacity: 1)
            node._header.pointee.nodeMap = bitA
            node._children.initialize(to: pair(a, hashA, b, hashB, shift: shift + bitsPerLevel))
            return node
        }
        let node = allocate(itemCapacity: 2, childCapacity: 0)
        node._header.pointee.dataMap = bitA | bitB
        if bitA < bitB {
            node._items.initialize(to: a)
            (node._items + 1).initialize(to: b)
        } else {
            node._items.initialize(to: b)
            (node._items + 1).initialize(to: a)
        }
        return node
    }
}
