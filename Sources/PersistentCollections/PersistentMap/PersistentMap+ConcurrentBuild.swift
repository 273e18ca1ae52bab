import Dispatch

extension PersistentMap where Key: Sendable, Value: Sendable {
    /// Creates a map from parts of entries, as
    /// `init(checkingUniqueKeysWithValues: parts.joined())` does, on every
    /// core: the parts are taken in and hashed one part per task, then the
    /// root's subtries are built one per task. The result is the same map.
    ///
    /// For a million entries decoded in chunks (a snapshot's), this is about
    /// the sequential build's time divided by the number of cores.
    ///
    /// Pass parts the caller holds nowhere else (their last use) and their
    /// entries are moved into the map, not copied: no retain of each key
    /// and value on the way in, and no release when the parts are freed.
    ///
    /// - Returns: nil when a key repeats, within a part or across parts.
    /// - Complexity: O(n log32 n) work, where n is the total count.
    @inlinable
    public init?(checkingUniqueKeysWithValuesOf parts: consuming [[(Key, Value)]]) {
        // A local copy the tasks can pop from (the parameter is consumed here).
        var parts = parts
        var offsets: [Int] = []
        offsets.reserveCapacity(parts.count + 1)
        var total = 0
        for part in parts {
            offsets.append(total)
            total += part.count
        }
        // Below this the tasks cost more than they save.
        guard total >= Self._concurrentBuildMinimum else {
            self.init(checkingUniqueKeysWithValues: parts.joined())
            return
        }
        let items = UnsafeMutablePointer<_MapItem<Key, Value>>.allocate(capacity: total)
        defer { items.deallocate() }
        let starts = offsets
        var order = [_MapBuildEntry](unsafeUninitializedCapacity: total) { order, initialized in
            parts.withUnsafeMutableBufferPointer { parts in
                // Each task changes only its own part and writes only its
                // part's range of `items` and `order`.
                let shared = _Disjoint((items, order.baseAddress!, parts))
                DispatchQueue.concurrentPerform(iterations: parts.count) { k in
                    let (items, order, parts) = shared.value
                    // Taken from the end: `popLast` moves an entry out of an
                    // array no one else holds (one that is shared is copied
                    // first, as a plain read would copy each entry).
                    var position = starts[k] + parts[k].count
                    while let (key, value) = parts[k].popLast() {
                        position -= 1
                        // Hashed first, so that the key's last use moves it.
                        (order + position).initialize(to: _MapBuildEntry(hash: _hash(key), index: position))
                        (items + position).initialize(to: _MapItem(key: key, value: value))
                    }
                }
            }
            initialized = total
        }
        guard let root = order.withUnsafeMutableBufferPointer({ _Node.buildConcurrently(moving: items, $0) }) else {
            return nil
        }
        self.init(_root: root, count: total)
    }

    /// Entries from which ``init(checkingUniqueKeysWithValuesOf:)`` builds on
    /// every core.
    @inlinable static var _concurrentBuildMinimum: Int { 4_096 }
}

extension _MapNode where Key: Sendable, Value: Sendable {
    /// `build(moving:_:)` with the root's subtries built concurrently.
    ///
    /// `order` holds one `(hash, index)` per initialized item of `items`.
    /// On return every item is consumed, moved into the trie or, when the
    /// build fails, deinitialized; the caller deallocates `items`.
    ///
    /// The root's slots partition `order` into disjoint ranges, and
    /// `build(_:_:_:range:shift:unmoved:)` reads and writes only its range
    /// of `order`, `scratch` and the items they name, so the subtries share
    /// nothing while they are built. The root's own items are moved only
    /// once every subtrie is built, so a failure leaves each range's
    /// unmoved items to deinitialize: all of a single-item slot, and from
    /// its `unmoved` position on for a subtrie that failed.
    @inlinable
    static func buildConcurrently(
        moving items: UnsafeMutablePointer<Item>,
        _ order: UnsafeMutableBufferPointer<_MapBuildEntry>
    ) -> _MapNode? {
        let count = order.count
        var scratch = [_MapBuildEntry](repeating: _MapBuildEntry(hash: 0, index: 0), count: count)
        var bounds = [Int](repeating: 0, count: 33)
        scratch.withUnsafeMutableBufferPointer { scratch in
            bounds.withUnsafeMutableBufferPointer { bounds in
                sortBySlot(order, scratch, range: 0..<count, shift: 0, bounds: bounds)
            }
        }

        let slots = bounds
        let subtrieSlots = (0..<32).filter { slots[$0 + 1] - slots[$0] > 1 }
        var children = [_MapNode?](repeating: nil, count: 32)
        var unmoved = (0..<32).map { slots[$0 + 1] }
        children.withUnsafeMutableBufferPointer { children in
            unmoved.withUnsafeMutableBufferPointer { unmoved in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    // Each task writes only its slot of `children` and
                    // `unmoved`, and its range of the rest.
                    let shared = _Disjoint((items, order, scratch, children, unmoved))
                    DispatchQueue.concurrentPerform(iterations: subtrieSlots.count) { k in
                        let (items, order, scratch, children, unmoved) = shared.value
                        let slot = subtrieSlots[k]
                        children[slot] = build(
                            items,
                            order,
                            scratch,
                            range: slots[slot]..<slots[slot + 1],
                            shift: bitsPerLevel,
                            unmoved: &unmoved[slot]
                        )
                    }
                }
            }
        }

        guard subtrieSlots.allSatisfy({ children[$0] != nil }) else {
            for slot in 0..<32 {
                let range = bounds[slot]..<bounds[slot + 1]
                let from = range.count == 1 ? range.lowerBound : unmoved[slot]
                for position in from..<range.upperBound { (items + order[position].index).deinitialize(count: 1) }
            }
            return nil
        }
        var dataMap: UInt32 = 0
        var nodeMap: UInt32 = 0
        for slot in 0..<32 {
            let size = bounds[slot + 1] - bounds[slot]
            if size == 1 { dataMap |= 1 << UInt32(slot) } else if size > 1 { nodeMap |= 1 << UInt32(slot) }
        }
        let node = allocate(itemCapacity: dataMap.nonzeroBitCount, childCapacity: nodeMap.nonzeroBitCount)
        withExtendedLifetime(node) {
            var itemCount = 0
            var childCount = 0
            for slot in 0..<32 {
                if dataMap & (1 << UInt32(slot)) != 0 {
                    (node._items + itemCount).moveInitialize(from: items + order[bounds[slot]].index, count: 1)
                    itemCount += 1
                } else if let child = children[slot] {
                    (node._children + childCount).initialize(to: child)
                    childCount += 1
                }
            }
            node._header.pointee.dataMap = dataMap
            node._header.pointee.nodeMap = nodeMap
        }
        return node
    }
}

/// Memory that concurrent tasks share, each reading and writing only its
/// own part of it (a range or a slot no other task touches), so that no
/// two tasks ever access the same element.
@usableFromInline
struct _Disjoint<Value>: @unchecked Sendable {
    @usableFromInline let value: Value

    @inlinable
    init(_ value: Value) { self.value = value }
}
