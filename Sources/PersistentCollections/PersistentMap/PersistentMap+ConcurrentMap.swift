import Dispatch
import Synchronization

extension PersistentMap {
    /// One result per entry, in the map's iteration order, computed on
    /// every core: the entries are cut into between 1 and `maximumParts`
    /// parts (``parts(maximumCount:)``: a map whose root has a single
    /// subtrie is one part) and `body` runs once per part, on several
    /// threads at once, calling `yield` with the result of each entry of
    /// its part in order. The results are written in place into
    /// the array returned, not gathered per part and then copied. Per-part
    /// state (a decoder's buffers, say) lives in `body`.
    ///
    ///     let titles: [String] = try songs.concurrentMap(maximumParts: 8) { part, yield in
    ///         part.forEach { entry in yield(entry.value.title) }
    ///     }
    ///
    /// `body` is handed a ``Part`` rather than each entry so that the
    /// caller's loop over it is compiled for its concrete types.
    ///
    /// - Precondition: `body` yields exactly one result per entry of its
    ///   part unless it throws.
    /// - Throws: the error of the earliest part (in iteration order) whose
    ///   `body` threw; nothing is returned then. The other parts run to
    ///   their end (or their own error) first.
    /// - Complexity: O(n) calls of `yield`, spread over the parts, after
    ///   one pass over the map's nodes on the calling thread to size them.
    @inlinable
    public func concurrentMap<T: Sendable>(
        maximumParts: Int,
        _ body: @Sendable (Part, _ yield: (consuming T) -> Void) throws -> Void
    ) throws -> [T] where Key: Sendable, Value: Sendable {
        let parts = parts(maximumCount: maximumParts)
        var total = 0
        let starts = parts.map { part in
            defer { total += part.count }
            return total
        }
        // Per part: how many results it wrote, and the error that stopped it.
        let outcomes = Mutex([(written: Int, error: (any Error)?)](repeating: (0, nil), count: parts.count))
        return try [T](unsafeUninitializedCapacity: total) { buffer, initializedCount in
            // Invariants of the unsafe writes:
            // - part k writes only slots starts[k] ..< starts[k] + parts[k].count,
            //   in order, each once, so no two threads touch one slot and
            //   the slots it reports as written are exactly a prefix of its
            //   range;
            // - the array's count is set to `total` only when every part
            //   wrote its whole range; after a failure every written slot is
            //   deinitialized and the count stays 0, so nothing leaks and
            //   nothing uninitialized is ever read.
            let base = _Slots(base: buffer.baseAddress)
            DispatchQueue.concurrentPerform(iterations: parts.count) { k in
                let (start, count) = (starts[k], parts[k].count)
                var written = 0
                var failure: (any Error)?
                do {
                    try body(parts[k]) { result in
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
            let short = results.indices.first { results[$0].written != parts[$0].count }
            guard failed != nil || short != nil else {
                initializedCount = total
                return
            }
            for k in parts.indices { base.deinitialize(starts[k], count: results[k].written) }
            if let failed { throw results[failed].error! }
            if let short {
                fatalError(
                    "concurrentMap: part \(short) yielded \(results[short].written) results for \(parts[short].count) entries"
                )
            }
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
