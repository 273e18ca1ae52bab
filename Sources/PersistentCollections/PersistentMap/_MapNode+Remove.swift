extension _MapNode {
    /// Removes `key`, which must be present, from the subtree at `slot`,
    /// restoring canonical shape on the way back up: a child left with a
    /// single item and no children is inlined into its parent.
    ///
    /// When `valueIsMoved` is true the caller has already moved the value
    /// out of its slot (the `_modify` accessor does), so only the key is
    /// destroyed.
    ///
    /// - Returns: the removed value (nil when `valueIsMoved`).
    @inlinable
    static func remove(
        _ slot: inout _MapNode,
        _ key: Key,
        _ hash: UInt64,
        _ shift: Int,
        valueIsMoved: Bool = false
    ) -> Value? {
        let isUnique = isKnownUniquelyReferenced(&slot)
        if slot.isCollision {
            var index = 0
            while slot._items[index].key != key { index += 1 }
            let (node, removed) = slot.removingItem(at: index, bit: 0, isUnique: isUnique, valueIsMoved)
            slot = node
            return removed
        }
        let bit = _slotBit(hash, shift)
        let header = slot._header.pointee
        if header.dataMap & bit != 0 {
            let (node, removed) = slot.removingItem(
                at: _rank(header.dataMap, bit),
                bit: bit,
                isUnique: isUnique,
                valueIsMoved
            )
            slot = node
            return removed
        }
        if !isUnique { slot = slot.copy() }
        let childIndex = _rank(header.nodeMap, bit)
        let childSlot = slot._children + childIndex
        let removed = remove(&childSlot.pointee, key, hash, shift + bitsPerLevel, valueIsMoved: valueIsMoved)
        let child = childSlot.pointee
        if child.childCount == 0 && child.itemCount == 1 {
            // Inline the child's last item here, in the slot `bit`.
            let item: Item
            if isKnownUniquelyReferenced(&childSlot.pointee) {
                item = child._items.move()
                child.header.dataMap = 0
            } else {
                item = child._items.pointee
            }
            slot = slot.replacingChild(at: childIndex, bit: bit, with: item)
        }
        return removed
    }

    /// This node without the item at `index` (slot `bit`; ignored in a
    /// collision node). Unique nodes shrink in place.
    @inlinable
    func removingItem(
        at index: Int,
        bit: UInt32,
        isUnique: Bool,
        _ valueIsMoved: Bool
    ) -> (_MapNode, Value?) {
        let count = itemCount
        let newDataMap = isCollision ? UInt32(count - 1) : dataMap ^ bit
        if isUnique {
            let removed = Self.take(_items + index, valueIsMoved)
            (_items + index).moveInitialize(from: _items + index + 1, count: count - index - 1)
            _header.pointee.dataMap = newDataMap
            return (self, removed)
        }
        precondition(!valueIsMoved, "a moved-out value implies a uniquely referenced path")
        let children = childCount
        let node = _MapNode.allocate(itemCapacity: count - 1, childCapacity: children, isCollision: isCollision)
        node._items.initialize(from: _items, count: index)
        (node._items + index).initialize(from: _items + index + 1, count: count - index - 1)
        node._children.initialize(from: _children, count: children)
        node._header.pointee.dataMap = newDataMap
        node._header.pointee.nodeMap = nodeMap
        return (node, _items[index].value)
    }

    /// Moves the item at `pointer` out, returning its value, or destroys only
    /// the key when the value was already moved out.
    @inlinable
    static func take(_ pointer: UnsafeMutablePointer<Item>, _ valueIsMoved: Bool) -> Value? {
        if valueIsMoved {
            let raw = UnsafeMutableRawPointer(pointer) + MemoryLayout<Item>.offset(of: \Item.key)!
            raw.assumingMemoryBound(to: Key.self).deinitialize(count: 1)
            return nil
        }
        return pointer.move().value
    }

    /// This uniquely referenced node with the child at `childIndex` (slot
    /// `bit`) replaced by `item`, moved inline. Reallocates only when the
    /// node has no spare item capacity.
    @inlinable
    func replacingChild(at childIndex: Int, bit: UInt32, with item: Item) -> _MapNode {
        let items = itemCount
        let children = childCount
        let index = _rank(dataMap, bit)
        let newDataMap = dataMap | bit
        let newNodeMap = nodeMap ^ bit
        (_children + childIndex).deinitialize(count: 1)
        (_children + childIndex).moveInitialize(from: _children + childIndex + 1, count: children - childIndex - 1)
        let node: _MapNode
        if itemCapacity > items {
            node = self
            (_items + index + 1).moveInitialize(from: _items + index, count: items - index)
        } else {
            node = _MapNode.allocate(itemCapacity: items + 1, childCapacity: children - 1)
            node._items.moveInitialize(from: _items, count: index)
            (node._items + index + 1).moveInitialize(from: _items + index, count: items - index)
            node._children.moveInitialize(from: _children, count: children - 1)
            _header.pointee.dataMap = 0
            _header.pointee.nodeMap = 0
        }
        (node._items + index).initialize(to: item)
        node._header.pointee.dataMap = newDataMap
        node._header.pointee.nodeMap = newNodeMap
        return node
    }
}
