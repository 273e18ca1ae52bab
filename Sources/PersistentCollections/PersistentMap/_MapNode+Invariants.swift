extension _MapNode {
    /// Checks this subtree; returns its number of items.
    func _invariantCheck(shift: Int, prefix: UInt64, isRoot: Bool) -> Int {
        _checkNode(shift: shift, prefix: prefix, isRoot: isRoot, comparingKeys: true)
        guard !isCollision else { return itemCount }
        let prefixMask: UInt64 = shift >= 64 ? ~0 : (1 << UInt64(shift)) - 1
        var total = itemCount
        var remaining = nodeMap
        var index = 0
        while remaining != 0 {
            let bit = remaining & (0 &- remaining)
            remaining ^= bit
            let slot = UInt64(bit.trailingZeroBitCount)
            let childPrefix = (prefix & prefixMask) | (slot << UInt64(shift))
            total += _children[index]._invariantCheck(
                shift: shift + Self.bitsPerLevel,
                prefix: childPrefix,
                isRoot: false
            )
            index += 1
        }
        return total
    }

    /// Checks this node alone (not its children), `shift` bits below the
    /// root, on the path of hashes that agree with `prefix` in their low
    /// `shift` bits, and, below the root, that it is neither empty nor a
    /// single item. O(items); hashes every key. A collision node's keys
    /// are compared pairwise (O(items²): colliding keys have one hash)
    /// only when `comparingKeys`.
    @usableFromInline
    func _checkNode(shift: Int, prefix: UInt64, isRoot: Bool, comparingKeys: Bool) {
        precondition(
            Int(bitPattern: _items) % MemoryLayout<Item>.alignment == 0
                && Int(bitPattern: _children) % MemoryLayout<_MapNode>.alignment == 0,
            "node storage misaligned"
        )
        let prefixMask: UInt64 = shift >= 64 ? ~0 : (1 << UInt64(shift)) - 1
        if isCollision {
            precondition(shift >= Self.maximumShift, "collision node above the last hash level (shift \(shift))")
            precondition(itemCount >= 2, "collision node with \(itemCount) items")
            precondition(itemCount <= itemCapacity, "collision node over capacity")
            precondition(nodeMap == 0, "collision node with children")
            let hash = _hash(_items[0].key)
            for i in 0..<itemCount {
                precondition(_hash(_items[i].key) == hash, "collision node holds different hashes")
                for j in 0..<i where comparingKeys {
                    precondition(_items[i].key != _items[j].key, "duplicate key in a collision node")
                }
            }
            precondition(hash & prefixMask == prefix & prefixMask, "collision node in the wrong subtree")
            return
        }
        precondition(shift < Self.maximumShift, "regular node below the last hash level")
        precondition((dataMap | nodeMap) >> UInt32(Self.slotCount) == 0, "a bitmap names a slot past the node's last")
        precondition(dataMap & nodeMap == 0, "a slot holds both an item and a child")
        precondition(itemCount <= itemCapacity, "items over capacity")
        precondition(childCount <= childCapacity, "children over capacity")
        if !isRoot {
            precondition(itemCount + childCount > 0, "empty node below the root")
            precondition(!(itemCount == 1 && childCount == 0), "single-item leaf below the root (not canonical)")
        }
        for i in 0..<itemCount {
            let hash = _hash(_items[i].key)
            precondition(hash & prefixMask == prefix & prefixMask, "item in the wrong subtree")
            let bit = _slotBit(hash, shift)
            precondition(dataMap & bit != 0 && _rank(dataMap, bit) == i, "item out of its slot")
        }
        // Each child's canonical shape is that child's own check (`!isRoot`
        // above): the whole check runs it on every node, a path check on
        // every node of the path (the only children a mutation changed).
    }

    /// Checks every node on the path of `hash` from this root (duplicate
    /// keys only in a collision node of at most 32). O(path length × items
    /// per node).
    @usableFromInline
    func _checkPath(of hash: UInt64) {
        var node = self
        var shift = 0
        while true {
            // Pairwise only in a small collision node: keys built to collide
            // (the tests') make nodes of thousands.
            node._checkNode(shift: shift, prefix: hash, isRoot: shift == 0, comparingKeys: node.itemCount <= 32)
            let bit = _slotBit(hash, shift)
            guard !node.isCollision, node.nodeMap & bit != 0 else { return }
            node = node._children[_rank(node.nodeMap, bit)]
            shift += Self.bitsPerLevel
        }
    }
}
