extension _MapNode {
    /// Removes `key` from the subtree at `slot`, restoring canonical shape
    /// on the way back up: a child left with a single item and no children
    /// is inlined into its parent.
    ///
    /// One descent: uniquely referenced nodes are changed in place as it
    /// goes, and an absent key leaves them as they were. The first shared
    /// node on the path is copied only once the key is known to be below it
    /// (one lookup from there; `isKnownPresent` skips it for the levels
    /// under a copy).
    ///
    /// When `valueIsMoved` is true the caller has already moved the value
    /// out of its slot (the `_modify` accessor does), so only the key is
    /// destroyed; the key is then present.
    ///
    /// - Returns: whether `key` was present, and the removed value (nil when
    ///   absent or `valueIsMoved`).
    @inlinable
    static func remove(
        _ slot: inout _MapNode,
        _ key: Key,
        _ hash: UInt64,
        _ shift: Int,
        isKnownPresent: Bool,
        valueIsMoved: Bool = false
    ) -> (found: Bool, value: Value?) {
        let isUnique = isKnownUniquelyReferenced(&slot)
        // A shared node is copied along the path only for a key it holds.
        if !isUnique && !isKnownPresent && !slot.contains(key, hash, shift: shift) { return (false, nil) }
        if slot.isCollision {
            let count = slot.itemCount
            var index = 0
            while index < count && slot._items[index].key != key { index += 1 }
            guard index < count else { return (false, nil) }
            let (node, removed) = slot.removingItem(at: index, bit: 0, isUnique: isUnique, valueIsMoved)
            slot = node
            return (true, removed)
        }
        let bit = _slotBit(hash, shift)
        let header = slot._header.pointee
        if header.dataMap & bit != 0 {
            let index = _rank(header.dataMap, bit)
            guard slot._items[index].key == key else { return (false, nil) }
            let (node, removed) = slot.removingItem(at: index, bit: bit, isUnique: isUnique, valueIsMoved)
            slot = node
            return (true, removed)
        }
        guard header.nodeMap & bit != 0 else { return (false, nil) }
        // Shared: the key is below (checked above), so the copy is needed.
        if !isUnique { slot = slot.copy() }
        let childIndex = _rank(header.nodeMap, bit)
        let childSlot = slot._children + childIndex
        let (found, removed) = remove(
            &childSlot.pointee,
            key,
            hash,
            shift + bitsPerLevel,
            isKnownPresent: isKnownPresent || !isUnique,
            valueIsMoved: valueIsMoved
        )
        // Absent: only unique nodes were visited, and none changed.
        guard found else { return (false, nil) }
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
        return (true, removed)
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
        node._items._initialize(copying: _items, count: index)
        (node._items + index)._initialize(copying: _items + index + 1, count: count - index - 1)
        node._children._initialize(copying: _children, count: children)
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
