extension PersistentMap {
    /// Counts this map's memory in `counter`: its trie nodes, plus what
    /// `element` reports for each item of a node not seen before (the
    /// elements' out-of-line storage; an item's inline bytes are part of its
    /// node). A node seen before — shared with a map counted earlier — is
    /// counted as shared with its whole subtree, without walking it.
    ///
    /// - Complexity: O(nodes and items not shared with maps counted before).
    public func footprint(
        in counter: FootprintCounter,
        element: (Key, Value) -> Footprint = { _, _ in Footprint() }
    ) -> Footprint {
        guard let root = _root else { return Footprint() }
        return root._footprint(in: counter, element: element)
    }
}

extension _MapNode {
    /// Bytes of this node's allocation: object header, node header, tail.
    var _allocatedBytes: Int {
        32 + Self.itemOffset(childCapacity: Int(_header.pointee.childCapacity))
            + Int(_header.pointee.itemCapacity) * MemoryLayout<Item>.stride
    }

    func _footprint(in counter: FootprintCounter, element: (Key, Value) -> Footprint) -> Footprint {
        if let seen = counter.seenSubtree(self) { return Footprint(shared: seen) }
        var result = Footprint(unique: _allocatedBytes)
        for index in 0..<itemCount {
            result += element(_items[index].key, _items[index].value)
        }
        for index in 0..<childCount {
            result += _children[index]._footprint(in: counter, element: element)
        }
        counter.recordSubtree(self, bytes: result.total)
        return result
    }
}
