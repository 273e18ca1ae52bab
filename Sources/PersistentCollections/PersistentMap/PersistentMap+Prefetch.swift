// A lookup in a large map waits at each level for its node to arrive from
// memory before it can read the next one: five waits at a million keys,
// when the nodes below the top levels are not in cache. Lookups of
// different keys do not depend on one another, but one after another they
// still wait in turn (a descent is too long for the processor to start the
// next one while it waits). Descending for many keys a level at a time
// issues their reads together, so their waits overlap: a batch of keys
// costs about one wait per level instead of one per key and level.

extension PersistentMap {
    /// Brings the nodes on the lookup paths of `keys` into the processor's
    /// cache, descending for up to 16 keys at a time, a level at a time,
    /// so that their memory reads overlap, and passes each present key's
    /// value to `touch` (which may read the value's own storage to the same
    /// end, returning any word of it). Reads only: the map is unchanged.
    ///
    /// Lookups, updates and removals of those keys that follow soon, with
    /// nothing else filling the cache in between, then find their nodes
    /// there instead of waiting for memory at each level. Worth it for
    /// batches of keys known ahead in a map too large for the cache; it
    /// costs a lookup of each key when the nodes are cached already.
    /// O(k log16 n) for k keys.
    @inlinable
    public func prefetch<Keys: Sequence>(
        _ keys: Keys,
        touching touch: (borrowing Value) -> UInt = { _ in 0 }
    ) where Keys.Element == Key {
        guard let root = _root else { return }
        let width = 16
        var mix: UInt = 0
        withExtendedLifetime(root) {
            withUnsafeTemporaryAllocation(of: _PrefetchLane<Key, Value>.self, capacity: width) { lanes in
                var keys = keys.makeIterator()
                var exhausted = false
                while !exhausted {
                    var count = 0
                    while count < width, let key = keys.next() {
                        (lanes.baseAddress! + count).initialize(
                            to: _PrefetchLane(node: Unmanaged.passUnretained(root), hash: _hash(key), key: key)
                        )
                        count += 1
                    }
                    exhausted = count < width
                    mix ^= Self._descend(lanes.baseAddress!, count: count, touch)
                    (lanes.baseAddress!).deinitialize(count: count)
                }
            }
        }
        // A value's word may be anything, so the test cannot be dropped.
        if mix == 1 { _prefetchNeverCalled() }
    }

    /// Descends for the first `count` lanes together, one level per round,
    /// until each has found its key or its absence; returns the exclusive
    /// or of what `touch` returned for the values found.
    @inlinable
    static func _descend(
        _ lanes: UnsafeMutablePointer<_PrefetchLane<Key, Value>>,
        count: Int,
        _ touch: (borrowing Value) -> UInt
    ) -> UInt {
        var mix: UInt = 0
        var active = count
        var shift = 0
        while active > 0 {
            var i = 0
            while i < active {
                let lane = lanes + i
                let step = lane.pointee.node._withUnsafeGuaranteedRef {
                    $0._step(lane.pointee.key, lane.pointee.hash, shift)
                }
                switch step {
                case .descend(let child):
                    lane.pointee.node = child
                    i += 1
                case .found(let item):
                    mix ^= touch(item.pointee.value)
                    fallthrough
                case .absent:
                    // Done: the last active lane takes its place.
                    active -= 1
                    if i != active { swap(&lane.pointee, &lanes[active]) }
                }
            }
            shift &+= _Node.bitsPerLevel
        }
        return mix
    }
}

/// One key's descent in ``PersistentMap/prefetch(_:touching:)``: the node
/// it has reached, unretained (the map's root keeps it alive).
@usableFromInline
struct _PrefetchLane<Key: Hashable, Value> {
    @usableFromInline var node: Unmanaged<_MapNode<Key, Value>>
    @usableFromInline let hash: UInt64
    @usableFromInline let key: Key

    @inlinable
    init(node: Unmanaged<_MapNode<Key, Value>>, hash: UInt64, key: Key) {
        self.node = node
        self.hash = hash
        self.key = key
    }
}
