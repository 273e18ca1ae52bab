// The binary searches of the B+tree's nodes: a separator array or a
// leaf's elements, read through pointers the node keeps alive.
//
// A node's elements span several cache lines (a leaf of 31 index entries,
// 16), and a binary search reads them one after another, each read
// waiting for the one before to decide where to look: on a tree larger
// than the caches, several memory latencies per node. Touching every line
// first, with loads that depend on nothing, has them fetched at once.

/// The lines of `count` elements at `base`, for ``_touchLines(_:_:)``:
/// the first element's address, the offset of the last one's first byte
/// and a step between element starts of as many elements as fit in 64
/// bytes (one, for larger elements). Element starts 64 bytes apart land in
/// consecutive lines, so every line an element starts in is read (an
/// element over 64 bytes has its first line read). Only first bytes of
/// elements are read, and an element's first byte is written with it (its
/// first field's, or its second's when the first has no size); a type of
/// no size has no bytes, and no lines to read. Inlined, so that the step
/// is a constant of the element type.
@inlinable @inline(__always)
func _lines<Element>(_ base: UnsafePointer<Element>?, count: Int) -> _Lines {
    let stride = MemoryLayout<Element>.stride
    let step = Swift.max(1, 64 / stride) * stride
    let readable = count > 0 && MemoryLayout<Element>.size > 0
    return _Lines(base: readable ? UnsafeRawPointer(base) : nil, last: (count - 1) * stride, step: step)
}

/// A region whose cache lines a search is about to read: nil `base`, or
/// `last` (≥ 0) the offset of an element's first byte in it.
@usableFromInline
struct _Lines {
    @usableFromInline let base: UnsafeRawPointer?
    @usableFromInline let last: Int
    @usableFromInline let step: Int

    @inlinable
    init(base: UnsafeRawPointer?, last: Int, step: Int) {
        self.base = base
        self.last = last
        self.step = step
    }

    /// The sum of one byte per line (a value for the caller's branch).
    func sum() -> UInt8 {
        guard let base else { return 0 }
        var mix = base.load(fromByteOffset: last, as: UInt8.self)
        var offset = 0
        while offset < last {
            mix &+= base.load(fromByteOffset: offset, as: UInt8.self)
            offset &+= step
        }
        return mix
    }
}

/// Reads one byte of every cache line of one region, or two (the paired
/// descents'), before a search among them. Not inlined: it keeps the
/// descents small (they are inlined where their comparisons are known).
@usableFromInline @inline(never)
func _touchLines(_ a: _Lines, _ b: _Lines? = nil) {
    var mix = a.sum()
    if let b { mix &+= b.sum() }
    // Keeps the reads: the compiler cannot drop loads whose sum a branch
    // tests. Calling the empty function when it happens to hold is harmless.
    if mix == 0x5A { _prefetchNeverCalled() }
}

/// `low` plus the number of leading elements of `base[low..<high]` for
/// which `test` returns `expected` (they come first): a binary search.
/// `expected` spares callers a closure that negates theirs, which the
/// optimizer would no longer inline (a comparison called out of line per
/// probe).
/// - Precondition: `base` addresses the elements `low..<high` (or is nil
///   when the range is empty).
@inlinable
func _partitionPoint<Element>(
    _ base: UnsafePointer<Element>?,
    from low: Int,
    to high: Int,
    _ test: (Element) -> Bool,
    is expected: Bool
) -> Int {
    var (low, high) = (low, high)
    while low < high {
        let middle = (low + high) >> 1
        if test(base.unsafelyUnwrapped[middle]) == expected { low = middle + 1 } else { high = middle }
    }
    return low
}

/// Two binary searches taken in step: the number of leading elements of
/// `a` for which `testA` returns `expected`, and of `b` for which `testB`
/// does (each a partition: those elements come first). Each round reads one
/// element of each before either comparison decides where to go next, so
/// that their memory reads overlap.
/// - Precondition: each pointer addresses `count` elements (or is nil for 0).
@inlinable
func _partitionPoints<Element>(
    _ a: UnsafePointer<Element>?,
    count countA: Int,
    _ testA: (Element) -> Bool,
    _ b: UnsafePointer<Element>?,
    count countB: Int,
    _ testB: (Element) -> Bool,
    is expected: Bool
) -> (Int, Int) {
    var (lowA, highA) = (0, countA)
    var (lowB, highB) = (0, countB)
    while lowA < highA, lowB < highB {
        let middleA = (lowA + highA) >> 1
        let middleB = (lowB + highB) >> 1
        if testA(a.unsafelyUnwrapped[middleA]) == expected { lowA = middleA + 1 } else { highA = middleA }
        if testB(b.unsafelyUnwrapped[middleB]) == expected { lowB = middleB + 1 } else { highB = middleB }
    }
    // One search may take a round or two more than the other.
    return (
        _partitionPoint(a, from: lowA, to: highA, testA, is: expected),
        _partitionPoint(b, from: lowB, to: highB, testB, is: expected)
    )
}
