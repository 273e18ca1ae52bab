extension _MapNode {
    /// The value for `key`, descending one level per 5 hash bits. O(log32 n).
    @inlinable
    func find(_ key: Key, _ hash: UInt64) -> Value? {
        var node = self
        var shift = 0
        while true {
            if node.isCollision {
                let items = node._items
                for i in 0..<node.itemCount where items[i].key == key {
                    return items[i].value
                }
                return nil
            }
            let bit = _slotBit(hash, shift)
            let header = node.header
            if header.dataMap & bit != 0 {
                let item = node._items + _rank(header.dataMap, bit)
                return item.pointee.key == key ? item.pointee.value : nil
            }
            guard header.nodeMap & bit != 0 else { return nil }
            node = node._children[_rank(header.nodeMap, bit)]
            shift &+= Self.bitsPerLevel
        }
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

    /// Whether `key` is in the subtree whose top consumes hash bits from `shift`.
    @inlinable
    func contains(_ key: Key, _ hash: UInt64, shift: Int) -> Bool {
        var node = self
        var shift = shift
        while true {
            if node.isCollision {
                for i in 0..<node.itemCount where node._items[i].key == key { return true }
                return false
            }
            let bit = _slotBit(hash, shift)
            if node.dataMap & bit != 0 { return node._items[_rank(node.dataMap, bit)].key == key }
            guard node.nodeMap & bit != 0 else { return false }
            node = node._children[_rank(node.nodeMap, bit)]
            shift &+= Self.bitsPerLevel
        }
    }
}
