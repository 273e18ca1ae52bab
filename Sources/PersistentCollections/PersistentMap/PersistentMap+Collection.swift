extension PersistentMap: Collection {
    /// A position in a map: the path of child ranks from the root to a node
    /// and the item's slot in that node.
    ///
    /// An index is valid for the map value it came from until that map is
    /// mutated. Moving between indices re-walks the path: O(log16 n).
    @frozen
    public struct Index: Comparable, Hashable, Sendable {
        /// Child ranks from the root, 4 bits each, the first at the top. At
        /// most 16 steps (hash bits run out after that).
        @usableFromInline var _path: UInt128
        /// Steps in `_path`; `UInt8.max` for the end index.
        @usableFromInline var _depth: UInt8
        @usableFromInline var _item: UInt32

        @inlinable
        init(_path: UInt128, depth: UInt8, item: UInt32) {
            self._path = _path
            self._depth = depth
            self._item = item
        }

        @inlinable static var _end: Index { Index(_path: 0, depth: .max, item: 0) }

        @inlinable
        static func _step(_ rank: Int, at depth: Int) -> UInt128 {
            UInt128(rank) << UInt128(128 - _mapSlotBits * (depth + 1))
        }

        @inlinable
        func _rank(at depth: Int) -> Int {
            Int(truncatingIfNeeded: (_path >> UInt128(128 - _mapSlotBits * (depth + 1))) & UInt128(_Node.slotCount - 1))
        }

        /// Orders indices as iteration visits them: a node's items before
        /// its children, children by rank.
        @inlinable
        public static func < (lhs: Index, rhs: Index) -> Bool {
            if lhs._depth == .max { return false }
            if rhs._depth == .max { return true }
            let common = Int(Swift.min(lhs._depth, rhs._depth))
            if common > 0 {
                let mask = ~UInt128(0) << UInt128(128 - _mapSlotBits * common)
                let a = lhs._path & mask
                let b = rhs._path & mask
                if a != b { return a < b }
            }
            if lhs._depth != rhs._depth { return lhs._depth < rhs._depth }
            return lhs._item < rhs._item
        }
    }

    /// The position of the first entry in iteration order. O(log16 n).
    @inlinable
    public var startIndex: Index {
        guard let root = _root else { return .end }
        return Self._firstIndex(in: root, path: 0, depth: 0)
    }

    /// The position past the last entry. O(1).
    @inlinable
    public var endIndex: Index { .end }

    /// The entry at `position`. O(log16 n).
    @inlinable
    public subscript(position: Index) -> Element {
        let (node, slot) = _node(at: position)
        return (node.key(at: slot), node.value(at: slot))
    }

    /// The position after `i` in iteration order. O(log16 n).
    @inlinable
    public func index(after i: Index) -> Index {
        precondition(i._depth != .max, "cannot advance past endIndex")
        guard let root = _root else { preconditionFailure("index out of bounds") }
        var nodes: [_Node] = [root]
        nodes.reserveCapacity(Int(i._depth) + 1)
        for level in 0..<Int(i._depth) {
            let node = nodes[level]
            let rank = i._rank(at: level)
            precondition(rank < node.childCount, "invalid index for this map")
            nodes.append(node.child(rank))
        }
        let target = nodes[Int(i._depth)]
        precondition(Int(i._item) < target.itemCount, "invalid index for this map")
        if Int(i._item) + 1 < target.itemCount {
            return Index(_path: i._path, depth: i._depth, item: i._item + 1)
        }
        // Next: the first child of the target, else the next sibling of the
        // nearest ancestor that has one.
        var depth = Int(i._depth)
        var nextRank = 0
        while true {
            let node = nodes[depth]
            if nextRank < node.childCount {
                let path = (i._path & Self._prefixMask(depth)) | Index._step(nextRank, at: depth)
                return Self._firstIndex(in: node.child(nextRank), path: path, depth: depth + 1)
            }
            if depth == 0 { return .end }
            nextRank = i._rank(at: depth - 1) + 1
            depth -= 1
        }
    }

    @inlinable
    static func _prefixMask(_ depth: Int) -> UInt128 {
        depth == 0 ? 0 : ~UInt128(0) << UInt128(128 - _mapSlotBits * depth)
    }

    /// The first item in pre-order within `node`, whose path is `path`.
    @inlinable
    static func _firstIndex(in node: _Node, path: UInt128, depth: Int) -> Index {
        var node = node
        var path = path
        var depth = depth
        while node.itemCount == 0 {
            path |= Index._step(0, at: depth)
            node = node.child(0)
            depth += 1
        }
        return Index(_path: path, depth: UInt8(depth), item: 0)
    }

    /// The node holding the entry at `position` and its slot there.
    @inlinable
    func _node(at position: Index) -> (node: _Node, slot: Int) {
        precondition(position._depth != .max, "cannot subscript endIndex")
        guard var node = _root else { preconditionFailure("index out of bounds") }
        for level in 0..<Int(position._depth) {
            let rank = position._rank(at: level)
            precondition(rank < node.childCount, "invalid index for this map")
            node = node.child(rank)
        }
        precondition(Int(position._item) < node.itemCount, "invalid index for this map")
        return (node, Int(position._item))
    }

    /// The key at `position`. O(log16 n).
    @inlinable
    func _key(at position: Index) -> Key {
        let (node, slot) = _node(at: position)
        return node.key(at: slot)
    }

    /// The value at `position`. O(log16 n).
    @inlinable
    func _value(at position: Index) -> Value {
        let (node, slot) = _node(at: position)
        return node.value(at: slot)
    }

    /// The position of `key`, or nil. O(log16 n).
    @inlinable
    public func index(forKey key: Key) -> Index? {
        guard var node = _root else { return nil }
        let hash = _hash(key)
        var path: UInt128 = 0
        var depth = 0
        while true {
            if node.isCollision {
                for i in 0..<node.itemCount where node.key(at: i) == key {
                    return Index(_path: path, depth: UInt8(depth), item: UInt32(i))
                }
                return nil
            }
            let bit = _slotBit(hash, depth * _Node.bitsPerLevel)
            if node.dataMap & bit != 0 {
                let slot = _rank(node.dataMap, bit)
                guard node.key(at: slot) == key else { return nil }
                return Index(_path: path, depth: UInt8(depth), item: UInt32(slot))
            }
            guard node.nodeMap & bit != 0 else { return nil }
            let rank = _rank(node.nodeMap, bit)
            path |= Index._step(rank, at: depth)
            node = node.child(rank)
            depth += 1
        }
    }
}

extension PersistentMap.Index {
    @inlinable static var end: Self { ._end }
}
