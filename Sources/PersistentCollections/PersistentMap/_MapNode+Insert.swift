extension _MapNode {
    /// Sets `key` to `value` in the subtree at `slot`, copying each node on
    /// the path that is shared and mutating uniquely referenced ones in place.
    ///
    /// - Returns: the value replaced, or nil when the key was inserted.
    @inlinable
    static func update(
        _ slot: inout _MapNode,
        _ key: Key,
        _ value: Value,
        _ hash: UInt64,
        _ shift: Int
    ) -> Value? {
        let isUnique = isKnownUniquelyReferenced(&slot)
        if slot.isCollision {
            return updateCollision(&slot, isUnique, key, value)
        }
        let bit = _slotBit(hash, shift)
        let header = slot._header.pointee
        if header.dataMap & bit != 0 {
            let index = _rank(header.dataMap, bit)
            if slot._items[index].key == key {
                if !isUnique { slot = slot.copy() }
                return swap(&slot._items[index].value, value)
            }
            // Two keys share this slot: push both into a new child.
            let existing = slot._items[index]
            let child = pair(
                existing,
                _hash(existing.key),
                Item(key: key, value: value),
                hash,
                shift: shift + bitsPerLevel
            )
            slot = slot.replacingItem(at: index, bit: bit, with: child, isUnique: isUnique)
            return nil
        }
        if header.nodeMap & bit != 0 {
            if !isUnique { slot = slot.copy() }
            let children = slot._children
            return update(&children[_rank(header.nodeMap, bit)], key, value, hash, shift + bitsPerLevel)
        }
        slot = slot.inserting(Item(key: key, value: value), bit: bit, isUnique: isUnique)
        return nil
    }

    @inlinable
    static func swap(_ stored: inout Value, _ value: Value) -> Value {
        let old = stored
        stored = value
        return old
    }

    @inlinable
    static func updateCollision(_ slot: inout _MapNode, _ isUnique: Bool, _ key: Key, _ value: Value) -> Value? {
        let count = slot.itemCount
        for i in 0..<count where slot._items[i].key == key {
            if !isUnique { slot = slot.copy() }
            return swap(&slot._items[i].value, value)
        }
        if !isUnique || slot.itemCapacity == count {
            slot = slot.copy(itemCapacity: isUnique ? max(2 * count, 4) : count + 1)
        }
        (slot._items + count).initialize(to: Item(key: key, value: value))
        slot._header.pointee.dataMap = UInt32(count + 1)
        return nil
    }

    /// Growth for uniquely owned nodes: room for a few more, so a batch of
    /// inserts reallocates a node O(log) times, not once per insert.
    @inlinable
    static func grownCapacity(_ needed: Int) -> Int {
        needed <= 2 ? needed : min(needed + (needed >> 1), slotCount)
    }

    /// This node with `item` added at the slot `bit`.
    @inlinable
    func inserting(_ item: Item, bit: UInt32, isUnique: Bool) -> _MapNode {
        let oldDataMap = dataMap
        let index = _rank(oldDataMap, bit)
        let count = itemCount
        let node: _MapNode
        if isUnique && itemCapacity > count {
            node = self
            (node._items + index + 1).moveInitialize(from: node._items + index, count: count - index)
        } else {
            let capacity = isUnique ? Self.grownCapacity(count + 1) : count + 1
            node = _MapNode.allocate(itemCapacity: capacity, childCapacity: isUnique ? childCapacity : childCount)
            node._header.pointee.nodeMap = nodeMap
            if isUnique {
                // Move everything out of self, leaving it empty for its deinit.
                node._items.moveInitialize(from: _items, count: index)
                (node._items + index + 1).moveInitialize(from: _items + index, count: count - index)
                node._children.moveInitialize(from: _children, count: childCount)
                _header.pointee.dataMap = 0
                _header.pointee.nodeMap = 0
            } else {
                node._items._initialize(copying: _items, count: index)
                (node._items + index + 1)._initialize(copying: _items + index, count: count - index)
                node._children._initialize(copying: _children, count: childCount)
            }
        }
        (node._items + index).initialize(to: item)
        node._header.pointee.dataMap = oldDataMap | bit
        return node
    }

    /// This node with the item at `index` (slot `bit`) replaced by `child`.
    @inlinable
    func replacingItem(at index: Int, bit: UInt32, with child: _MapNode, isUnique: Bool) -> _MapNode {
        let items = itemCount
        let children = childCount
        let childIndex = _rank(nodeMap, bit)
        let oldDataMap = dataMap
        let oldNodeMap = nodeMap
        if isUnique && childCapacity > children {
            (_items + index).deinitialize(count: 1)
            (_items + index).moveInitialize(from: _items + index + 1, count: items - index - 1)
            (_children + childIndex + 1).moveInitialize(from: _children + childIndex, count: children - childIndex)
            (_children + childIndex).initialize(to: child)
            _header.pointee.dataMap = oldDataMap ^ bit
            _header.pointee.nodeMap = oldNodeMap | bit
            return self
        }
        let node = _MapNode.allocate(
            itemCapacity: isUnique ? itemCapacity : items - 1,
            childCapacity: isUnique ? Self.grownCapacity(children + 1) : children + 1
        )
        if isUnique {
            (_items + index).deinitialize(count: 1)
            node._items.moveInitialize(from: _items, count: index)
            (node._items + index).moveInitialize(from: _items + index + 1, count: items - index - 1)
            node._children.moveInitialize(from: _children, count: childIndex)
            (node._children + childIndex + 1).moveInitialize(from: _children + childIndex, count: children - childIndex)
            _header.pointee.dataMap = 0
            _header.pointee.nodeMap = 0
        } else {
            node._items._initialize(copying: _items, count: index)
            (node._items + index)._initialize(copying: _items + index + 1, count: items - index - 1)
            node._children._initialize(copying: _children, count: childIndex)
            (node._children + childIndex + 1)._initialize(copying: _children + childIndex, count: children - childIndex)
        }
        (node._children + childIndex).initialize(to: child)
        node._header.pointee.dataMap = oldDataMap ^ bit
        node._header.pointee.nodeMap = oldNodeMap | bit
        return node
    }
}
