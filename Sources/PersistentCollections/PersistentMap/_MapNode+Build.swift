extension _MapNode {
    /// The trie of `entries` and its count, built by
    /// `build(moving:_:)`; nil when a key repeats, a nil root when there
    /// are no entries. O(n log16 n).
    @inlinable
    static func build(_ entries: some Sequence<(Key, Value)>) -> (root: _MapNode?, count: Int)? {
        // The items live in memory of their own, from which the build moves
        // them into the nodes (see `build(moving:_:)`).
        var capacity = Swift.max(entries.underestimatedCount, 16)
        var items = UnsafeMutablePointer<Item>.allocate(capacity: capacity)
        var hashes: [UInt64] = []
        hashes.reserveCapacity(capacity)
        for (key, value) in entries {
            if hashes.count == capacity {
                capacity *= 2
                let larger = UnsafeMutablePointer<Item>.allocate(capacity: capacity)
                larger.moveInitialize(from: items, count: hashes.count)
                items.deallocate()
                items = larger
            }
            (items + hashes.count).initialize(to: _MapItem(key: key, value: value))
            hashes.append(_hash(key))
        }
        defer { items.deallocate() }
        guard !hashes.isEmpty else { return (nil, 0) }
        guard let root = build(moving: items, hashes) else { return nil }
        return (root, hashes.count)
    }

    /// Builds a canonical trie from entries with distinct keys, allocating
    /// each node once at its exact size: at each level a counting sort on
    /// the 4 hash bits of that level groups the entries into slots.
    ///
    /// The items are *moved* from `items` into the nodes, never copied: a
    /// copy would retain each key and value in hash order, which at a
    /// million entries is a cache miss per entry on objects the caller is
    /// about to release anyway. `items` must hold `hashes.count` initialized
    /// items; on return every one of them is consumed (moved into the trie,
    /// or deinitialized when the build fails), and the caller deallocates
    /// the memory.
    ///
    /// - Returns: nil when two entries have equal keys (the caller decides
    ///   whether that is an error).
    @inlinable
    static func build(moving items: UnsafeMutablePointer<Item>, _ hashes: [UInt64]) -> _MapNode? {
        let count = hashes.count
        guard count > 0 else { return nil }
        // The sort permutes (hash, index) pairs, read and written in
        // sequence, so each level's passes stay in cache; the items are
        // touched once, when moved into their node.
        var order = [_MapBuildEntry](unsafeUninitializedCapacity: count) { buffer, initialized in
            for i in 0..<buffer.count { buffer[i] = _MapBuildEntry(hash: hashes[i], index: i) }
            initialized = buffer.count
        }
        var scratch = [_MapBuildEntry](repeating: _MapBuildEntry(hash: 0, index: 0), count: count)
        // Where a failed build stopped: the entries at order positions from
        // here on were not moved.
        var unmoved = count
        let root = order.withUnsafeMutableBufferPointer { order in
            scratch.withUnsafeMutableBufferPointer { scratch in
                build(items, order, scratch, range: 0..<count, shift: 0, unmoved: &unmoved)
            }
        }
        if root == nil {
            for position in unmoved..<count { (items + order[position].index).deinitialize(count: 1) }
        }
        return root
    }

    /// Builds the subtrie of the entries at `order[range]`, moving them.
    ///
    /// Ranges are built left to right and a range's entries are all moved
    /// before the next range starts, so when a collision node finds two
    /// equal keys (before moving any of its own), the entries moved are
    /// exactly those at order positions before `range`: it reports that
    /// position in `unmoved` and returns nil.
    @inlinable
    static func build(
        _ items: UnsafeMutablePointer<Item>,
        _ order: UnsafeMutableBufferPointer<_MapBuildEntry>,
        _ scratch: UnsafeMutableBufferPointer<_MapBuildEntry>,
        range: Range<Int>,
        shift: Int,
        unmoved: inout Int
    ) -> _MapNode? {
        if shift >= maximumShift {
            // Every hash in the range is equal: a collision node, keys distinct.
            for i in range {
                for j in range.lowerBound..<i where items[order[j].index].key == items[order[i].index].key {
                    unmoved = range.lowerBound
                    return nil
                }
            }
            let node = allocate(itemCapacity: range.count, childCapacity: 0, isCollision: true)
            withExtendedLifetime(node) {
                for (offset, position) in range.enumerated() {
                    (node._items + offset).moveInitialize(from: items + order[position].index, count: 1)
                }
                node._header.pointee.dataMap = UInt32(range.count)
            }
            return node
        }
        // The bounds live on the stack: a node built here is otherwise one
        // allocation.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: slotCount + 1) { bounds in
            sortBySlot(order, scratch, range: range, shift: shift, bounds: bounds)
            return node(
                moving: items,
                order,
                scratch,
                range: range,
                slotStarts: UnsafeBufferPointer(bounds),
                shift: shift,
                unmoved: &unmoved
            )
        }
    }

    /// Sorts `order[range]` by each entry's slot at `shift`, a stable
    /// counting sort through `scratch[range]`, and initializes `bounds`
    /// (`slotCount + 1` elements) with where each slot starts, relative to the range,
    /// and where the last ends. Allocates nothing.
    @inlinable
    static func sortBySlot(
        _ order: UnsafeMutableBufferPointer<_MapBuildEntry>,
        _ scratch: UnsafeMutableBufferPointer<_MapBuildEntry>,
        range: Range<Int>,
        shift: Int,
        bounds: UnsafeMutableBufferPointer<Int>
    ) {
        bounds.initialize(repeating: 0)
        // Entries already in slot order (the concurrent build sorts its
        // items by their first levels) are left where they are.
        var isSorted = true
        var previous = 0
        for position in range {
            let slot = _slotIndex(order[position].hash, shift)
            bounds[slot + 1] += 1
            isSorted = isSorted && slot >= previous
            previous = slot
        }
        for slot in 0..<slotCount { bounds[slot + 1] += bounds[slot] }
        guard !isSorted else { return }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: slotCount) { cursor in
            _ = cursor.initialize(fromContentsOf: bounds[0..<slotCount])
            for position in range {
                let entry = order[position]
                let slot = _slotIndex(entry.hash, shift)
                scratch[range.lowerBound + cursor[slot]] = entry
                cursor[slot] += 1
            }
        }
        for position in range { order[position] = scratch[position] }
    }

    /// Builds the node of `order[range]`, whose entries are sorted by their
    /// slot at `shift` and whose slot `s` starts at `slotStarts[s]` (`slotCount + 1`
    /// bounds, relative to the range), moving its items in and building
    /// its children.
    @inlinable
    static func node(
        moving items: UnsafeMutablePointer<Item>,
        _ order: UnsafeMutableBufferPointer<_MapBuildEntry>,
        _ scratch: UnsafeMutableBufferPointer<_MapBuildEntry>,
        range: Range<Int>,
        slotStarts counts: UnsafeBufferPointer<Int>,
        shift: Int,
        unmoved: inout Int
    ) -> _MapNode? {
        var dataMap: UInt32 = 0
        var nodeMap: UInt32 = 0
        for slot in 0..<slotCount {
            let size = counts[slot + 1] - counts[slot]
            if size == 1 { dataMap |= 1 << UInt32(slot) } else if size > 1 { nodeMap |= 1 << UInt32(slot) }
        }
        let node = allocate(itemCapacity: dataMap.nonzeroBitCount, childCapacity: nodeMap.nonzeroBitCount)
        // The maps count each item and child as soon as it is placed, so a
        // failure leaves the node's deinit exactly what to release; the node
        // outlives every pointer taken from it.
        let isComplete = withExtendedLifetime(node) { () -> Bool in
            var itemCount = 0
            var childCount = 0
            for slot in 0..<slotCount {
                let start = range.lowerBound + counts[slot]
                let end = range.lowerBound + counts[slot + 1]
                if end - start == 1 {
                    (node._items + itemCount).moveInitialize(from: items + order[start].index, count: 1)
                    itemCount += 1
                    node._header.pointee.dataMap |= 1 << UInt32(slot)
                } else if end - start > 1 {
                    guard
                        let child = build(
                            items,
                            order,
                            scratch,
                            range: start..<end,
                            shift: shift + bitsPerLevel,
                            unmoved: &unmoved
                        )
                    else {
                        return false
                    }
                    (node._children + childCount).initialize(to: child)
                    childCount += 1
                    node._header.pointee.nodeMap |= 1 << UInt32(slot)
                }
            }
            return true
        }
        return isComplete ? node : nil
    }
}

/// A key's hash and where its item is, sorted in place of the item.
@usableFromInline
struct _MapBuildEntry {
    @usableFromInline var hash: UInt64
    @usableFromInline var index: Int

    @inlinable
    init(hash: UInt64, index: Int) {
        self.hash = hash
        self.index = index
    }
}
