extension _MapNode {
    /// Bytes of this node's allocation: object header, node header, tail.
    @inlinable
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

extension _MapNode {
    @inlinable
    func _allocatedBytes(elementBytes: (Value) throws -> Int) rethrows -> Int {
        var bytes = _allocatedBytes
        for index in 0..<itemCount { bytes += try elementBytes(_items[index].value) }
        for index in 0..<childCount { bytes += try _children[index]._allocatedBytes(elementBytes: elementBytes) }
        return bytes
    }

    /// The value of `key` among `other`'s own items when it sits where it
    /// would sit in this node (the same slot; anywhere in a collision node).
    @inlinable
    func _counterpart(of index: Int, bit: UInt32, in other: _MapNode?) -> Value? {
        guard let other else { return nil }
        let key = _items[index].key
        if other.isCollision {
            for candidate in 0..<other.itemCount where other._items[candidate].key == key {
                return other._items[candidate].value
            }
            return nil
        }
        guard bit != 0, other.dataMap & bit != 0 else { return nil }
        let item = other._items[_rank(other.dataMap, bit)]
        return item.key == key ? item.value : nil
    }

    @inlinable
    func _nodeBytes(notSharedWith other: _MapNode?, elementBytes: (Value, Value?) -> Int) -> Int {
        if let other, other === self { return 0 }
        var bytes = _allocatedBytes
        if isCollision {
            for index in 0..<itemCount {
                bytes += elementBytes(_items[index].value, _counterpart(of: index, bit: 0, in: other))
            }
            return bytes
        }
        var items = dataMap
        while items != 0 {
            let bit = items & (~items &+ 1)
            items &= items &- 1
            let index = _rank(dataMap, bit)
            bytes += elementBytes(_items[index].value, _counterpart(of: index, bit: bit, in: other))
        }
        var remaining = nodeMap
        while remaining != 0 {
            let bit = remaining & (~remaining &+ 1)
            remaining &= remaining &- 1
            let child = _children[_rank(nodeMap, bit)]
            let counterpart = other.flatMap {
                !$0.isCollision && $0.nodeMap & bit != 0 ? $0._children[_rank($0.nodeMap, bit)] : nil
            }
            bytes += child._nodeBytes(notSharedWith: counterpart, elementBytes: elementBytes)
        }
        return bytes
    }

}
