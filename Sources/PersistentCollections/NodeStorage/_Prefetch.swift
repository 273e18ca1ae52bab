import CPrefetch

// Node copies and frees retain or release every child, and each atomic
// count update on a child not in cache waits for its own memory read
// before the next begins. Reading the children first, with plain loads
// that do not depend on one another, lets the processor overlap those
// misses: a 16-child node then costs about one memory latency instead
// of one per child.

/// Reads the first word of each of the `count` native Swift objects whose
/// references are stored contiguously at `references`, before the caller retains or
/// releases them. The word read is the object's type pointer: no thread
/// writes it once the object exists (so the read races with nothing), and
/// it shares a cache line with the reference counts.
@inlinable
func _prefetchObjects(_ references: UnsafeRawPointer, count: Int) {
    let stride = MemoryLayout<UnsafeRawPointer>.stride
    var mix: UInt = 0
    for i in 0..<count {
        // Raw loads: the references' memory stays bound to its own type.
        let object = references.load(fromByteOffset: i * stride, as: UnsafeRawPointer.self)
        mix ^= object.load(as: UInt.self)
    }
    // Type pointers are aligned, so their exclusive or is never 1; the test
    // keeps the compiler from dropping the reads.
    if mix == 1 { _prefetchNeverCalled() }
}

/// What the prefetches call when a condition the compiler cannot rule
/// out holds (for some, it never does; for others, rarely), so that it
/// keeps the reads the condition tests. It does nothing.
@usableFromInline @inline(never)
func _prefetchNeverCalled() {}

/// Prefetches, for each word of the `byteCount` bytes at `start` that may
/// be the address of a heap object, the cache line it points at: before a
/// copy retains, or a free releases, the references among elements whose
/// layout generic code does not know (a map's items: a record ID beside a
/// record's storage). A prefetch never faults, whatever the word holds;
/// words below 4 GiB (integers, on 64-bit systems) or with bits above the
/// 47 bits of a user address (a string's tags) are skipped, for the
/// processor wastes a page walk and a fill buffer on each.
@inlinable @inline(__always)
func _prefetchReferents(of start: UnsafeRawPointer, byteCount: Int) {
    let stride = MemoryLayout<UInt>.stride
    let (lowest, span): (UInt, UInt) = stride == 8 ? (1 &<< 32, (1 &<< 47) &- (1 &<< 32)) : (4096, UInt.max &- 4096)
    for offset in Swift.stride(from: 0, to: byteCount &- stride &+ 1, by: stride) {
        let word = start.load(fromByteOffset: offset, as: UInt.self)
        if word &- lowest < span { strata_prefetch(UnsafeRawPointer(bitPattern: word)) }
    }
}
