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
        return try _concurrentFill(starts: starts, counts: parts.map(\.count), total: total) { k, yield in
            // An escaping view of `yield`: a non-escaping one cannot be
            // passed on from one non-escaping closure to another.
            try withoutActuallyEscaping(yield) { try body(parts[k], $0) }
        }
    }
}
