import Dispatch
import Synchronization

extension _MapNode where Key: Sendable, Value: Sendable {
    /// The concurrent phase of `PersistentMap.update(with:maximumParts:_:)`: one task per
    /// part of the changes, each changing the root's subtries that its keys
    /// fall under. The root must be uniquely referenced.
    @inlinable
    static func updateSubtries<Change: Sendable, Result: Sendable>(
        of root: _MapNode,
        with parts: [PersistentMap<Key, Change>.Part],
        _ body: @Sendable (Key, Change, inout Value?) throws -> Result
    ) -> [_SubtrieUpdate<Key, Change, Result>] {
        var total = 0
        let starts = parts.map { part in
            defer { total += part.count }
            return total
        }
        let outcomes = Mutex([_SubtrieUpdate<Key, Change, Result>?](repeating: nil, count: parts.count))
        // Invariants of the shared root: no task changes its header or its
        // items, and each task writes only the child slots of the hash
        // slots its part's keys fall under, which no other part's keys do
        // (each part holds whole subtries and root entries of `changes`,
        // and equal keys hash to equal slots in both maps). The caller's
        // map keeps the root alive until every task has returned.
        let shared = _Disjoint((root._children, root.nodeMap))
        DispatchQueue.concurrentPerform(iterations: parts.count) { k in
            let (children, nodeMap) = shared.value
            var outcome = _SubtrieUpdate<Key, Change, Result>(count: parts[k].count)
            var position = starts[k]
            // The child slot of the root that holds the keys of hash slot `bit`, if any.
            func subtrie(_ bit: UInt32) -> UnsafeMutablePointer<_MapNode>? {
                nodeMap & bit == 0 ? nil : children + _rank(nodeMap, bit)
            }
            func apply(_ key: Key, _ change: Change, _ hash: UInt64, in slot: UnsafeMutablePointer<_MapNode>?) -> Bool {
                defer { position += 1 }
                guard let slot else {
                    outcome.deferred.append((position, key, change))
                    return true
                }
                // Counted even when `body` throws after changing the value.
                var delta = 0
                defer { outcome.insertedMinusRemoved += delta }
                do {
                    outcome.results[position - starts[k]] = try _MapNode.modify(
                        &slot.pointee,
                        key,
                        hash,
                        _MapNode.bitsPerLevel,
                        delta: &delta
                    ) { try body(key, change, &$0) }
                    return true
                } catch {
                    outcome.failure = (position, error)
                    return false
                }
            }
            parts[k]._forEachSubtrie { items, itemCount, bit in
                let slot = subtrie(bit)
                for i in 0..<itemCount {
                    let item = items[i]
                    guard apply(item.key, item.value, _hash(item.key), in: slot) else { return false }
                }
                return true
            }
            outcomes.withLock { $0[k] = outcome }
        }
        return outcomes.withLock { $0.map { $0! } }
    }
}

/// What one task of ``PersistentMap/update(with:maximumParts:_:)`` did.
@usableFromInline
struct _SubtrieUpdate<Key, Change, Result>: @unchecked Sendable {
    /// Its part's results, nil where not computed (deferred, or after a failure).
    @usableFromInline var results: [Result?]
    /// Entries under a hash slot where the root holds no subtrie: they
    /// change the root itself, on the calling thread, in order.
    @usableFromInline var deferred: [(position: Int, key: Key, change: Change)] = []
    @usableFromInline var insertedMinusRemoved = 0
    /// The first entry whose change threw, and the error; the part stopped there.
    @usableFromInline var failure: (position: Int, error: any Error)?

    @inlinable
    init(count: Int) { results = Array(repeating: nil, count: count) }
}

extension PersistentMap.Part {
    /// Calls `body` with the entries of the part grouped by the root's hash
    /// slot, in iteration order: for each root entry, that one entry; for
    /// each subtrie, its entries, node by node (`body` may be called more
    /// than once for a slot). Stops when `body` returns false.
    @inlinable
    func _forEachSubtrie(
        _ body: (_ items: UnsafeMutablePointer<_MapItem<Key, Value>>, _ count: Int, _ bit: UInt32) -> Bool
    ) {
        guard let root = _root else { return }
        var itemBits = root.dataMap
        var childBits = root.nodeMap
        // The slot bits of the root's entries and subtries, in rank order.
        for _ in 0..<_rootItems.lowerBound { itemBits &= itemBits &- 1 }
        for _ in 0..<_children.lowerBound { childBits &= childBits &- 1 }
        for i in _rootItems {
            let bit = itemBits & (0 &- itemBits)
            itemBits ^= bit
            guard body(root._items + i, 1, bit) else { return }
        }
        for i in _children {
            let bit = childBits & (0 &- childBits)
            childBits ^= bit
            guard root._children[i]._forEachItemRun({ body($0, $1, bit) }) else { return }
        }
    }
}

extension _MapNode {
    /// Calls `body` with each node's items in the subtree, in iteration
    /// order, until it returns false; returns false then.
    @inlinable
    func _forEachItemRun(_ body: (UnsafeMutablePointer<Item>, Int) -> Bool) -> Bool {
        if itemCount > 0 && !body(_items, itemCount) { return false }
        let children = _children
        for i in 0..<childCount where !children[i]._forEachItemRun(body) { return false }
        return true
    }

    /// Lets `body` change the value for `key` in the subtree at `slot`
    /// (nil: absent), copying the shared nodes on the path when the key is
    /// present or `body` sets a value. What `body` left in the value is
    /// stored even when it throws, as through the map's subscript. The
    /// subtree's top node may be left empty or with a single item: its
    /// parent restores the canonical shape
    /// (``_restoreCanonicalChildren(_:)``).
    ///
    /// - Parameter delta: Set to 1 for an insert, -1 for a removal, 0
    ///   otherwise, also when `body` throws.
    /// - Returns: `body`'s result.
    @inlinable
    static func modify<R>(
        _ slot: inout _MapNode,
        _ key: Key,
        _ hash: UInt64,
        _ shift: Int,
        delta: inout Int,
        _ body: (inout Value?) throws -> R
    ) rethrows -> R {
        guard slot.contains(key, hash, shift: shift) else {
            var value: Value?
            defer {
                if let value {
                    _ = update(&slot, key, value, hash, shift)
                    delta = 1
                }
            }
            return try body(&value)
        }
        let pointer = uniqueValuePointerOfPresentKey(&slot, key, hash, shift)
        var value: Value? = pointer.move()
        // Whether or not `body` throws, the slot gets a value or loses its key.
        defer {
            if let value {
                pointer.initialize(to: value)
            } else {
                _ = remove(&slot, key, hash, shift, isKnownPresent: true, valueIsMoved: true)
                delta = -1
            }
        }
        return try body(&value)
    }

    /// Restores the canonical shape of the uniquely referenced node at
    /// `node` whose children were changed on their own
    /// (``modify(_:_:_:_:delta:_:)``): a child left empty is dropped, and one left
    /// with a single item and no children is replaced by that item (the
    /// node is reallocated when it has no room for it). O(children).
    @inlinable
    static func _restoreCanonicalChildren(_ node: inout _MapNode) {
        // From the last child, so that the ranks of those still to visit hold.
        var bits = node.nodeMap
        var index = node.childCount
        while bits != 0 {
            index -= 1
            let bit = UInt32(1) &<< UInt32(31 - bits.leadingZeroBitCount)
            bits ^= bit
            let child = node._children[index]
            guard child.childCount == 0 && child.itemCount <= 1 else { continue }
            if child.itemCount == 0 {
                node._removeEmptyChild(at: index, bit: bit)
                continue
            }
            let item: Item
            if isKnownUniquelyReferenced(&node._children[index]) {
                item = child._items.move()
                child._header.pointee.dataMap = 0
            } else {
                item = child._items.pointee
            }
            node = node.replacingChild(at: index, bit: bit, with: item)
        }
    }

    /// Drops the child at `index` (slot `bit`) of this uniquely referenced node.
    @inlinable
    func _removeEmptyChild(at index: Int, bit: UInt32) {
        let children = childCount
        (_children + index).deinitialize(count: 1)
        (_children + index).moveInitialize(from: _children + index + 1, count: children - index - 1)
        _header.pointee.nodeMap ^= bit
    }
}
