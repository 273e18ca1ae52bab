import Dispatch
import Synchronization

/// An array of `total` results written in place on every core: task `k`
/// (one per element of `counts`) calls `yield` with exactly `counts[k]`
/// results, which land at `starts[k]...` in order. The body of
/// ``PersistentMap/concurrentMap(maximumParts:_:)``, whose name the
/// failures carry.
///
/// - Throws: the error of the lowest-numbered task that threw, after
///   every task has ended; the results written are released.
@inlinable
func _concurrentFill<T: Sendable>(
    starts: [Int],
    counts: [Int],
    total: Int,
    _ task: @Sendable (_ k: Int, _ yield: (consuming T) -> Void) throws -> Void
) throws -> [T] {
    // Per part: how many results it wrote, and the error that stopped it.
    let outcomes = Mutex([(written: Int, error: (any Error)?)](repeating: (0, nil), count: counts.count))
    return try [T](unsafeUninitializedCapacity: total) { buffer, initializedCount in
        // Invariants of the unsafe writes:
        // - part k writes only slots starts[k] ..< starts[k] + counts[k],
        //   in order, each once, so no two threads touch one slot and
        //   the slots it reports as written are exactly a prefix of its
        //   range;
        // - the array's count is set to `total` only when every part
        //   wrote its whole range; after a failure every written slot is
        //   deinitialized and the count stays 0, so nothing leaks and
        //   nothing uninitialized is ever read.
        let base = _Slots(base: buffer.baseAddress)
        DispatchQueue.concurrentPerform(iterations: counts.count) { k in
            let (start, count) = (starts[k], counts[k])
            var written = 0
            var failure: (any Error)?
            do {
                try task(k) { result in
                    // Checked in every build mode: a write past the
                    // part's range would land in another part's slots.
                    if written >= count { fatalError("concurrentMap: more results than the part's entries") }
                    base.initialize(start + written, to: result)
                    written += 1
                }
            } catch {
                failure = error
            }
            outcomes.withLock { $0[k] = (written, failure) }
        }
        let results = outcomes.withLock { $0 }
        let failed = results.firstIndex { $0.error != nil }
        let short = results.indices.first { results[$0].written != counts[$0] }
        guard failed != nil || short != nil else {
            initializedCount = total
            return
        }
        for k in counts.indices { base.deinitialize(starts[k], count: results[k].written) }
        if let failed { throw results[failed].error! }
        if let short {
            fatalError(
                "concurrentMap: part \(short) yielded \(results[short].written) results for \(counts[short]) entries"
            )
        }
    }
}

/// The uninitialized storage `concurrentMap` fills, handed to its parts'
/// threads: each writes only its own slots (see the invariants there).
@usableFromInline
struct _Slots<T>: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<T>?

    @inlinable
    init(base: UnsafeMutablePointer<T>?) { self.base = base }

    @inlinable
    func initialize(_ index: Int, to value: consuming T) {
        (base! + index).initialize(to: value)
    }

    @inlinable
    func deinitialize(_ start: Int, count: Int) {
        guard count > 0 else { return }
        (base! + start).deinitialize(count: count)
    }
}
