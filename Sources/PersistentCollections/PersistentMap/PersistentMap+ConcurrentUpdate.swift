extension PersistentMap where Key: Sendable, Value: Sendable {
    /// Changes the entries that `changes` names, on every core: for each
    /// entry of `changes`, `body` is called with its key, its change and
    /// the value stored for that key (nil when absent), which it may
    /// replace, set (an insert) or set to nil (a removal). Returns the
    /// results of `body` in the iteration order of `changes`.
    ///
    /// The result is the map that calling `body` on each entry in turn
    /// (through the subscript by key) gives. Both maps hash a key alike, so
    /// the entries of `changes` under one of the root's subtries change
    /// only the same subtrie of this map: those subtries are changed on
    /// several threads at once, between 1 and `maximumParts` of them (a
    /// batch of fewer than 1,024 changes, or a map whose root has fewer
    /// than two subtries, is changed on the calling thread). A large batch
    /// into a map whose nodes are shared with another version (an import
    /// into a published value) spends most of its time copying the nodes
    /// on its paths; this spreads that work.
    ///
    ///     let updates = try library.update(with: edits, maximumParts: 8) { id, edit, song in
    ///         try edit.apply(to: &song)
    ///     }
    ///
    /// - Parameters:
    ///   - changes: The keys to change, each with what `body` needs.
    ///   - maximumParts: At most this many tasks run.
    ///   - body: Called once per entry of `changes`, on any thread; it must
    ///     not read or change this map.
    /// - Throws: the error of the first entry of `changes`, in its
    ///   iteration order, for which `body` threw. The map is then valid but
    ///   holds an unspecified part of the changes (a caller that needs the
    ///   map as it was keeps a copy, as for any failed batch).
    /// - Complexity: O(k log16 n) work for k changes, spread over the
    ///   tasks, except for the entries under root slots that hold no
    ///   subtrie (in a map of a few entries, most of them), which the
    ///   calling thread changes; plus O(16) there.
    @inlinable
    public mutating func update<Change: Sendable, Result: Sendable>(
        with changes: PersistentMap<Key, Change>,
        maximumParts: Int,
        _ body: @Sendable (Key, Change, inout Value?) throws -> Result
    ) throws -> [Result] {
        // No binding of the root here: a second reference would make it
        // look shared and force a copy of every path changed.
        guard maximumParts >= 2, changes.count >= Self._concurrentUpdateMinimum,
            _root != nil, _root!.childCount >= 2
        else {
            var results: [Result] = []
            results.reserveCapacity(changes.count)
            // Each change through the subscript, which checks its own path.
            for (key, change) in changes { results.append(try body(key, change, &self[key])) }
            return results
        }
        // The tasks change the root's child slots in place: the root is this
        // map's alone from here on, and keeps its shape until they end.
        if !isKnownUniquelyReferenced(&_root!) { _root = _root!.copy() }
        let outcomes = _Node.updateSubtries(of: _root!, with: changes.parts(maximumCount: maximumParts), body)
        _count += outcomes.reduce(0) { $0 + $1.insertedMinusRemoved }
        _Node._restoreCanonicalChildren(&_root!)
        if _count == 0 { _root = nil }
        // The deferred entries below go through the subscript, which checks
        // their own paths.
        _checkAfterMutation(ofKeysIn: changes)

        // Entries no subtrie of this root could take, in order; then the
        // first error, wherever it was thrown.
        let failure = outcomes.lazy.compactMap(\.failure).first
        var results: [Result?] = []
        results.reserveCapacity(changes.count)
        for outcome in outcomes { results.append(contentsOf: outcome.results) }
        for outcome in outcomes {
            for entry in outcome.deferred {
                if let failure, failure.position < entry.position { break }
                results[entry.position] = try body(entry.key, entry.change, &self[entry.key])
            }
        }
        if let failure { throw failure.error }
        return results.map { $0! }
    }

    /// Changes below which ``update(with:maximumParts:_:)`` stays on the
    /// calling thread: the tasks cost more than they save.
    @inlinable static var _concurrentUpdateMinimum: Int { 1_024 }
}
