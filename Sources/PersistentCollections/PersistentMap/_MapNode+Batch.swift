extension _MapNode {
    /// Looks `keys` (`count` of them) up under `root`, the lookups
    /// descending together one level a round, then calls `body` with each
    /// key's position and its item (nil when absent), in the keys' order:
    /// the body of ``PersistentMap/values(forKeys:)`` and
    /// ``PersistentMap/forEachValue(forKeys:_:)``. The items stay valid
    /// while `root` is alive.
    @inlinable
    static func forEachItem(
        forKeys keys: some Collection<Key>,
        count: Int,
        from root: _MapNode,
        _ body: (Int, UnsafeMutablePointer<Item>?) throws -> Void
    ) rethrows {
        try withUnsafeTemporaryAllocation(of: _BatchProbe<Key, Value>.self, capacity: count) { probes in
            // Invariant: probes[0..<initialized] are initialized; the first
            // `pending` still descend, and `node` is alive while `root` is.
            var pending = 0
            for key in keys where pending < count {
                probes.initializeElement(
                    at: pending,
                    to: _BatchProbe(key: key, hash: _hash(key), position: pending, node: .passUnretained(root))
                )
                pending += 1
            }
            let initialized = pending
            defer { _ = probes.baseAddress!.deinitialize(count: initialized) }
            // Where each answer lies, on the stack: an array of these
            // pointers fetched its generic metadata at run time on every
            // call (some 800 instructions, more than a lookup).
            try withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<Item>?.self, capacity: count) { found in
                found.initialize(repeating: nil)
                descend(probes, pending: pending, into: found)
                for position in 0..<initialized { try body(position, found[position]) }
            }
        }
    }

    /// Descends `pending` probes one level a round from where each stands,
    /// storing each found item's place at its position in `found`.
    @inlinable
    static func descend(
        _ probes: UnsafeMutableBufferPointer<_BatchProbe<Key, Value>>,
        pending: Int,
        into found: UnsafeMutableBufferPointer<UnsafeMutablePointer<Item>?>
    ) {
        var pending = pending
        var shift = 0
        // Every probe starts at the root and descends one level per
        // round, so all pending probes share `shift`.
        while pending > 0 {
            var kept = 0
            for i in 0..<pending {
                // Through the pointer: a copy of the probe would copy its key.
                let probe = probes.baseAddress! + i
                let step = probe.pointee.node._withUnsafeGuaranteedRef {
                    $0._step(probe.pointee.key, probe.pointee.hash, shift)
                }
                switch step {
                case .found(let item):
                    found[probe.pointee.position] = item
                case .absent:
                    break
                case .descend(let child):
                    if kept != i { probes.swapAt(kept, i) }
                    probes[kept].node = child
                    kept += 1
                }
            }
            pending = kept
            shift &+= bitsPerLevel
        }
    }
}

/// One lookup of ``PersistentMap/values(forKeys:)`` in flight:
/// its key, the key's hash, where its answer goes, and the node it has
/// reached (unretained: the map's root keeps it alive).
@usableFromInline
struct _BatchProbe<Key: Hashable, Value> {
    @usableFromInline var key: Key
    @usableFromInline var hash: UInt64
    @usableFromInline var position: Int
    @usableFromInline var node: Unmanaged<_MapNode<Key, Value>>

    @inlinable
    init(key: Key, hash: UInt64, position: Int, node: Unmanaged<_MapNode<Key, Value>>) {
        self.key = key
        self.hash = hash
        self.position = position
        self.node = node
    }
}
