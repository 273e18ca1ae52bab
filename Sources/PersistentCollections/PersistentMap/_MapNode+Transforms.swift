extension _MapNode {
    @inlinable
    func mapValues<T>(_ transform: (Value) throws -> T) rethrows -> _MapNode<Key, T> {
        let items = itemCount
        let children = childCount
        let node = _MapNode<Key, T>.allocate(itemCapacity: items, childCapacity: children, isCollision: isCollision)
        // Fill in order, recording progress in the header so that a throwing
        // transform leaves a node its deinit can destroy correctly.
        var done = 0
        defer {
            if isCollision {
                node._header.pointee.dataMap = UInt32(done)
            } else {
                node._header.pointee.dataMap = Self.firstBits(dataMap, done)
            }
        }
        for i in 0..<items {
            let item = _items[i]
            (node._items + i).initialize(to: _MapItem(key: item.key, value: try transform(item.value)))
            done += 1
        }
        var childrenDone = 0
        defer { node._header.pointee.nodeMap = Self.firstBits(nodeMap, childrenDone) }
        for i in 0..<children {
            (node._children + i).initialize(to: try _children[i].mapValues(transform))
            childrenDone += 1
        }
        return node
    }

    /// The lowest `count` set bits of `map`.
    @inlinable
    static func firstBits(_ map: UInt32, _ count: Int) -> UInt32 {
        var remaining = map
        var result: UInt32 = 0
        for _ in 0..<count {
            let lowest = remaining & (0 &- remaining)
            result |= lowest
            remaining ^= lowest
        }
        return result
    }
}
