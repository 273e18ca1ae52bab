extension _MapNode {
    /// The value for `key`, descending one level per 4 hash bits. O(log16 n).
    ///
    /// Walks with unretained references: the caller holds the root, which
    /// keeps every node below it alive, so no retain/release per level.
    @inlinable
    func find(_ key: Key, _ hash: UInt64) -> Value? {
        var node = Unmanaged.passUnretained(self)
        var shift = 0
        while true {
            let step = node._withUnsafeGuaranteedRef { $0._step(key, hash, shift) }
            switch step {
            case .found(let item): return item.pointee.value
            case .absent: return nil
            case .descend(let child):
                node = child
                shift &+= Self.bitsPerLevel
            }
        }
    }

    /// Whether `key` is in the subtree whose top consumes hash bits from `shift`.
    @inlinable
    func contains(_ key: Key, _ hash: UInt64, shift: Int) -> Bool {
        var node = Unmanaged.passUnretained(self)
        var shift = shift
        while true {
            let step = node._withUnsafeGuaranteedRef { $0._step(key, hash, shift) }
            switch step {
            case .found: return true
            case .absent: return false
            case .descend(let child):
                node = child
                shift &+= Self.bitsPerLevel
            }
        }
    }

    /// One level of a lookup.
    @usableFromInline
    enum _Step {
        case found(UnsafeMutablePointer<Item>)
        case absent
        case descend(Unmanaged<_MapNode>)
    }

    @inlinable @inline(__always)
    func _step(_ key: Key, _ hash: UInt64, _ shift: Int) -> _Step {
        if isCollision {
            let items = _items
            for i in 0..<itemCount where items[i].key == key { return .found(items + i) }
            return .absent
        }
        let bit = _slotBit(hash, shift)
        let header = _header.pointee
        if header.dataMap & bit != 0 {
            let item = _items + _rank(header.dataMap, bit)
            return item.pointee.key == key ? .found(item) : .absent
        }
        guard header.nodeMap & bit != 0 else { return .absent }
        let children = UnsafeRawPointer(_children).assumingMemoryBound(to: Unmanaged<_MapNode>.self)
        return .descend(children[_rank(header.nodeMap, bit)])
    }
}

extension _MapNode {
    /// A pointer to the stored value for `key` after making every node on
    /// its path uniquely referenced (copying shared ones), or nil when the
    /// key is absent (then nothing is copied beyond what was already
    /// unique). The pointer is valid until the map is next mutated.
    @inlinable
    static func uniqueValuePointer(
        _ slot: inout _MapNode,
        _ key: Key,
        _ hash: UInt64,
        _ shift: Int
    ) -> UnsafeMutablePointer<Value>? {
        guard slot.contains(key, hash, shift: shift) else { return nil }
        return uniqueValuePointerOfPresentKey(&slot, key, hash, shift)
    }

    @inlinable
    static func uniqueValuePointerOfPresentKey(
        _ slot: inout _MapNode,
        _ key: Key,
        _ hash: UInt64,
        _ shift: Int
    ) -> UnsafeMutablePointer<Value> {
        if !isKnownUniquelyReferenced(&slot) { slot = slot.copy() }
        if slot.isCollision {
            var index = 0
            while slot._items[index].key != key { index += 1 }
            return valuePointer(slot._items + index)
        }
        let bit = _slotBit(hash, shift)
        if slot.dataMap & bit != 0 {
            return valuePointer(slot._items + _rank(slot.dataMap, bit))
        }
        let children = slot._children
        return uniqueValuePointerOfPresentKey(&children[_rank(slot.nodeMap, bit)], key, hash, shift + bitsPerLevel)
    }

    @inlinable
    static func valuePointer(_ item: UnsafeMutablePointer<Item>) -> UnsafeMutablePointer<Value> {
        (UnsafeMutableRawPointer(item) + MemoryLayout<Item>.offset(of: \Item.value)!)
            .assumingMemoryBound(to: Value.self)
    }
}

/// A value inside a node the caller has made unique, which a `_modify`
/// accessor yields in place: valid until the trie changes again.
@usableFromInline
@frozen
struct _MapValueSlot<Value> {
    @usableFromInline let _pointer: UnsafeMutablePointer<Value>

    @inlinable
    init(_ pointer: UnsafeMutablePointer<Value>) { self._pointer = pointer }

    /// The value, read and written in place.
    @inlinable
    var value: Value {
        unsafeAddress { UnsafePointer(_pointer) }
        nonmutating unsafeMutableAddress { _pointer }
    }

    /// Moves the value out, leaving the slot uninitialized until `put(_:)`
    /// fills it again (or the caller removes its item without reading it).
    @inlinable
    func take() -> Value { _pointer.move() }

    /// Fills the slot `take()` emptied.
    @inlinable
    func put(_ value: Value) { _pointer.initialize(to: value) }
}

extension _MapNode {
    /// The slot of `key`'s value under `slot`, copying every shared node on
    /// its path first; nil when the key is absent (nothing is copied then).
    @inlinable
    static func uniqueValueSlot(_ slot: inout _MapNode, _ key: Key, _ hash: UInt64) -> _MapValueSlot<Value>? {
        uniqueValuePointer(&slot, key, hash, 0).map(_MapValueSlot.init)
    }

    /// The slot of `key`'s value (which must be present) under `slot`,
    /// copying every shared node on its path first.
    @inlinable
    static func uniqueValueSlotOfPresentKey(_ slot: inout _MapNode, _ key: Key, _ hash: UInt64) -> _MapValueSlot<Value>
    {
        _MapValueSlot(uniqueValuePointerOfPresentKey(&slot, key, hash, 0))
    }
}
