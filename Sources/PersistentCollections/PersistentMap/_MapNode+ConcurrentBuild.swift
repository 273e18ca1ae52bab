import Dispatch

extension _MapNode where Key: Sendable, Value: Sendable {
    /// The root of the trie of every entry of `parts` (`count` of them, the
    /// part `k` starting at `offsets[k]`), built on every core; nil when a
    /// key repeats. The entries are moved out of `parts`, which are left
    /// empty. The body of ``PersistentMap/init(checkingUniqueKeysWithValuesOf:)``.
    @inlinable
    static func buildConcurrently(
        moving parts: inout [[(Key, Value)]],
        offsets: [Int],
        count total: Int
    ) -> _MapNode? {
        // The entries are moved in joined, then sorted into the trie's
        // order by their first four levels (an LSD radix sort of two
        // passes over 8-bit digits: levels 2-3, then levels 0-1), so that
        // the build reads them in order. Gathered in a random order
        // instead, each item was a cache miss (32 MB for a million
        // `RecordID`s and records).
        //
        // Invariant of the moves: every item is initialized in exactly one
        // buffer at a time: `joined` after the parts are taken in, `items`
        // (in the spare buffer) after the first pass, `joined` again after
        // the second (each pass moves every position of its source once, to
        // a distinct target position). Both are deallocated without
        // deinitializing: the build moves every item out of `joined`, or
        // deinitializes those it did not move when it fails.
        let joined = UnsafeMutablePointer<Item>.allocate(capacity: total)
        defer { joined.deallocate() }
        let joinedHashes = UnsafeMutablePointer<UInt64>.allocate(capacity: total)
        defer { joinedHashes.deallocate() }
        let starts = offsets
        parts.withUnsafeMutableBufferPointer { parts in
            // Each task changes only its own part and writes only its
            // part's range of `joined` and `joinedHashes`.
            let shared = _Disjoint((joined, joinedHashes, parts))
            DispatchQueue.concurrentPerform(iterations: parts.count) { k in
                let (joined, hashes, parts) = shared.value
                // Taken from the end: `popLast` moves an entry out of an
                // array no one else holds (one that is shared is copied
                // first, as a plain read would copy each entry).
                var position = starts[k] + parts[k].count
                while let (key, value) = parts[k].popLast() {
                    position -= 1
                    // Hashed first, so that the key's last use moves it.
                    let hash = _hash(key)
                    (hashes + position).initialize(to: hash)
                    (joined + position).initialize(to: _MapItem(key: key, value: value))
                }
                // Freed now, not when the build ends: its pages can serve
                // the buffers the sort allocates next.
                parts[k] = []
            }
        }
        return _buildJoined(joined, joinedHashes, count: total)
    }

    /// The root of the trie holding the `count` items of `joined`, whose
    /// hashes are in `joinedHashes` (its content is overwritten), built on
    /// every core; nil when a key repeats. Every item of `joined` is moved
    /// out (into the trie, or deinitialized when the build fails); the
    /// caller deallocates both buffers.
    @inlinable
    static func _buildJoined(
        _ joined: UnsafeMutablePointer<Item>,
        _ joinedHashes: UnsafeMutablePointer<UInt64>,
        count total: Int
    ) -> _MapNode? {
        // One spare buffer serves every later step, so that the kernel
        // faults in its pages once (a fresh page costs more than the
        // moves that fill it): the first pass's target (items, then their
        // hashes), then, once the second pass has moved every item back
        // out of it, the build's entries and their sort's scratch.
        let spare = _BuildSpare<Key, Value>(count: total)
        defer { spare.deallocate() }
        // Ranges for every core, whatever the parts (16 is several per
        // core on most machines).
        let rangeCount = 16
        let ranges = (0..<rangeCount).map { (total * $0 / rangeCount)..<(total * ($0 + 1) / rangeCount) }
        let (items, hashes) = spare.items
        Self._scatter(
            _Disjoint((joined, UnsafePointer(joinedHashes), items, hashes)),
            ranges: ranges,
            counts: Self._countDigits(UnsafePointer(joinedHashes), ranges: ranges, level: 2),
            level: 2
        )
        Self._scatter(
            _Disjoint((items, UnsafePointer(hashes), joined, joinedHashes)),
            ranges: ranges,
            counts: Self._countDigits(UnsafePointer(hashes), ranges: ranges, level: 0),
            level: 0
        )
        let (order, scratch) = spare.entries
        let shared = _Disjoint((UnsafePointer(joinedHashes), order.baseAddress!))
        DispatchQueue.concurrentPerform(iterations: rangeCount) { k in
            let (hashes, order) = shared.value
            for position in ranges[k] {
                (order + position).initialize(to: _MapBuildEntry(hash: hashes[position], index: position))
            }
        }
        return buildConcurrently(moving: joined, order, scratch: scratch)
    }

    /// Moves every item of `buffers`' source (its first element, with its
    /// hashes second) in `ranges` to the target (third, and its hashes to
    /// the fourth), stably sorted by its digit at `level` (`counts`: per
    /// range, how many items have each digit). One task per range: each
    /// reads only its range and writes only the positions its digits were
    /// given.
    @inlinable
    static func _scatter(
        _ buffers: _Disjoint<
            (
                UnsafeMutablePointer<Item>, UnsafePointer<UInt64>,
                UnsafeMutablePointer<Item>, UnsafeMutablePointer<UInt64>
            )
        >,
        ranges: [Range<Int>],
        counts: [Int],
        level: Int
    ) {
        // Where each range's items of each digit start: digit by digit,
        // range by range within a digit. Both loops walk the counts in
        // memory order (a walk by digit first strides across the ranges'
        // counts, a cache miss each for hundreds of ranges).
        var next = [Int](repeating: 0, count: Self._digits)
        for k in ranges.indices {
            for digit in 0..<Self._digits { next[digit] += counts[k * Self._digits + digit] }
        }
        var reached = 0
        for digit in 0..<Self._digits {
            let count = next[digit]
            next[digit] = reached
            reached += count
        }
        var firsts = [Int](repeating: 0, count: counts.count)
        for k in ranges.indices {
            for digit in 0..<Self._digits {
                firsts[k * Self._digits + digit] = next[digit]
                next[digit] += counts[k * Self._digits + digit]
            }
        }
        let starts = firsts
        DispatchQueue.concurrentPerform(iterations: ranges.count) { k in
            let (source, sourceHashes, target, targetHashes) = buffers.value
            var cursors = Array(starts[(k * Self._digits)..<((k + 1) * Self._digits)])
            for position in ranges[k] {
                let hash = sourceHashes[position]
                let digit = Self._digit(hash, level: level)
                let destination = cursors[digit]
                cursors[digit] += 1
                (target + destination).moveInitialize(from: source + position, count: 1)
                (targetHashes + destination).initialize(to: hash)
            }
        }
    }

    /// Per range of `hashes`, how many have each digit at `level`, one
    /// task per range.
    @inlinable
    static func _countDigits(_ hashes: UnsafePointer<UInt64>, ranges: [Range<Int>], level: Int) -> [Int] {
        var counts = [Int](repeating: 0, count: ranges.count * Self._digits)
        counts.withUnsafeMutableBufferPointer { counts in
            let shared = _Disjoint((hashes, counts))
            DispatchQueue.concurrentPerform(iterations: ranges.count) { k in
                let (hashes, counts) = shared.value
                for position in ranges[k] {
                    counts[k * Self._digits + Self._digit(hashes[position], level: level)] += 1
                }
            }
        }
        return counts
    }

    /// The values of a digit of the concurrent build's radix sort.
    @inlinable static var _digits: Int { 1 << (2 * _mapSlotBits) }

    /// The digit of a hash at `level` (0 or 2): its slots at that level
    /// and the next, the first in the high bits, so that digits sort as
    /// the trie orders the entries.
    @inlinable
    static func _digit(_ hash: UInt64, level: Int) -> Int {
        let shift = level * _mapSlotBits
        return _slotIndex(hash, shift) << _mapSlotBits | _slotIndex(hash, shift + _mapSlotBits)
    }
}

extension _MapNode where Key: Sendable, Value: Sendable {
    /// `build(moving:_:)` with the root's subtries built concurrently.
    ///
    /// `order` holds one `(hash, index)` per initialized item of `items`;
    /// `scratch`, as many uninitialized entries, is the sort's (a sort
    /// writes each position of its range before it reads it, and entries
    /// already in order never touch it, nor make the kernel zero its pages).
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
        _ order: UnsafeMutableBufferPointer<_MapBuildEntry>,
        scratch: UnsafeMutableBufferPointer<_MapBuildEntry>
    ) -> _MapNode? {
        let count = order.count
        var bounds = [Int](repeating: 0, count: slotCount + 1)
        bounds.withUnsafeMutableBufferPointer { bounds in
            sortBySlot(order, scratch, range: 0..<count, shift: 0, bounds: bounds)
        }

        let slots = bounds
        let subtrieSlots = (0..<slotCount).filter { slots[$0 + 1] - slots[$0] > 1 }
        var children = [_MapNode?](repeating: nil, count: slotCount)
        var unmoved = (0..<slotCount).map { slots[$0 + 1] }
        children.withUnsafeMutableBufferPointer { children in
            unmoved.withUnsafeMutableBufferPointer { unmoved in
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

        guard subtrieSlots.allSatisfy({ children[$0] != nil }) else {
            for slot in 0..<slotCount {
                let range = bounds[slot]..<bounds[slot + 1]
                let from = range.count == 1 ? range.lowerBound : unmoved[slot]
                for position in from..<range.upperBound { (items + order[position].index).deinitialize(count: 1) }
            }
            return nil
        }
        var dataMap: UInt32 = 0
        var nodeMap: UInt32 = 0
        for slot in 0..<slotCount {
            let size = bounds[slot + 1] - bounds[slot]
            if size == 1 { dataMap |= 1 << UInt32(slot) } else if size > 1 { nodeMap |= 1 << UInt32(slot) }
        }
        let node = allocate(itemCapacity: dataMap.nonzeroBitCount, childCapacity: nodeMap.nonzeroBitCount)
        withExtendedLifetime(node) {
            var itemCount = 0
            var childCount = 0
            for slot in 0..<slotCount {
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

/// The concurrent build's spare memory, used twice: first as items with
/// their hashes (the first radix pass's target), then, once every item has
/// been moved out again, as the build's entries and their sort's scratch.
///
/// Invariant: the memory is bound to one use at a time; `entries` may be
/// taken only when no item is initialized in `items` (the second pass
/// moves each one out), and nothing of `items` is read after. Nothing is
/// deinitialized here: items are moved out, hashes and entries are trivial.
@usableFromInline
struct _BuildSpare<Key: Hashable, Value> {
    @usableFromInline let base: UnsafeMutableRawPointer
    @usableFromInline let count: Int

    /// Where the hashes start: after the items, at an 8-byte boundary.
    @inlinable
    static func hashesOffset(count: Int) -> Int {
        (count * MemoryLayout<_MapItem<Key, Value>>.stride + 7) & ~7
    }

    @inlinable
    init(count: Int) {
        self.count = count
        let itemsAndHashes = Self.hashesOffset(count: count) + count * MemoryLayout<UInt64>.stride
        let entries = 2 * count * MemoryLayout<_MapBuildEntry>.stride
        base = .allocate(
            byteCount: Swift.max(itemsAndHashes, entries, 1),
            alignment: Swift.max(
                MemoryLayout<_MapItem<Key, Value>>.alignment,
                MemoryLayout<UInt64>.alignment,
                MemoryLayout<_MapBuildEntry>.alignment
            )
        )
    }

    /// `count` uninitialized items and `count` uninitialized hashes.
    @inlinable
    var items: (UnsafeMutablePointer<_MapItem<Key, Value>>, UnsafeMutablePointer<UInt64>) {
        (
            base.bindMemory(to: _MapItem<Key, Value>.self, capacity: count),
            (base + Self.hashesOffset(count: count)).bindMemory(to: UInt64.self, capacity: count)
        )
    }

    /// `count` uninitialized entries, and as many more for scratch.
    @inlinable
    var entries: (UnsafeMutableBufferPointer<_MapBuildEntry>, UnsafeMutableBufferPointer<_MapBuildEntry>) {
        let all = base.bindMemory(to: _MapBuildEntry.self, capacity: 2 * count)
        return (.init(start: all, count: count), .init(start: all + count, count: count))
    }

    @inlinable
    func deallocate() { base.deallocate() }
}
