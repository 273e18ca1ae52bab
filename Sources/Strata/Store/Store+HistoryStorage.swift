import Foundation

/// The file store as a ``HistoryStorage``: peers in this process (a
/// ``Peer`` per task, say, each with its own value and as-of engine) share
/// the store's one history, and the same code runs on a file store and on
/// a server (StrataPostgres).
///
/// Only durable transactions are visible through it: a transaction being
/// synced holds its number (an append there is ``HistoryAppend/taken``)
/// but is not read until it is published. The store's own commits and its
/// peers' interleave in one order; each is checked against the value it
/// lands on, so a peer's stale commit is rebased or refused as on a server.
///
/// A peer that loses its number to the store's own writers gets a turn:
/// they wait (10 ms at most) while it catches up and tries again, so that
/// a busy store does not starve its peers.
///
/// A store serving peers should not be cut with ``truncate(after:)``: that
/// renumbers a history they hold. A following peer notices (its newest
/// transaction is gone) and refuses to go on with
/// ``PeerError/divergentHistory(t:reason:)``; open the peers again.
extension Store: HistoryStorage {
    /// Whether the store is closed. O(1).
    public func isClosed() async -> Bool { log == nil }

    /// True: ``truncate(after:)`` cuts the history, and later commits take
    /// the numbers it freed.
    public nonisolated var canCutHistory: Bool { true }

    /// The number of the newest durable transaction. O(1).
    /// - Throws: ``StoreError/closed``.
    public func latestT() throws -> Int64 {
        guard log != nil else { throw StoreError.closed }
        return current.basis
    }

    /// Commits `transaction` as number `transaction.t` when that is the next
    /// free number (compare-and-set), durably (per
    /// ``StoreOptions/durability``) before it returns ``HistoryAppend/appended``.
    /// O(changes · log n).
    /// - Returns: ``HistoryAppend/taken`` when a transaction (durable or
    ///   being synced) holds `t`.
    /// - Throws: ``HistoryStorageError/invalidTransaction(t:reason:)`` for a
    ///   `t` past the next free number or a basis other than `t - 1`;
    ///   ``StoreError/duplicateTransaction(id:)``, ``ApplyError`` when a
    ///   change does not fit the value at `t - 1`, and the errors of
    ///   ``commit(_:)``.
    public func append(_ transaction: Transaction) async throws -> HistoryAppend {
        try await append(transaction, checkingBasis: nil)
    }

    /// ``append(_:)``, refused with ``PeerError/divergentHistory(t:reason:)``
    /// unless this store's transaction at `transaction.basis` is `basisID`:
    /// a peer that built on a transaction ``truncate(after:)`` since cut
    /// (and later commits replaced) must not have its commit stored on
    /// another history. Checked in the same actor turn as the append.
    public func append(_ transaction: Transaction, basisID: UUID) async throws -> HistoryAppend {
        try await append(transaction, checkingBasis: basisID)
    }

    private func append(_ transaction: Transaction, checkingBasis basisID: UUID?) async throws -> HistoryAppend {
        // This peer's turn, if it lost its number last time, ends with this
        // try, unless it loses again.
        var keepTurn = false
        defer { if !keepTurn { endPeerTurn(of: transaction.id) } }
        while true {
            try await admitWriter(peer: true)
            if let basisID { try checkBasis(of: transaction, is: basisID) }
            let next = head.basis + 1
            try HistoryStorageError.checkPlacement(of: transaction, next: next)
            if transaction.t == next { break }
            // Another commit holds t. The store's own writers wait while
            // this peer catches up and tries again. A commit still being
            // synced is waited for: `taken` must name a transaction the
            // peer can read (it may yet be rolled back, freeing t).
            beginPeerTurn(transaction.id)
            guard transaction.t > current.basis else {
                keepTurn = true
                return .taken
            }
            await waitForPublication(of: transaction.t)
        }
        if history.t(of: transaction.id) != nil { throw StoreError.duplicateTransaction(id: transaction.id) }
        try transaction.checkNesting()
        let after = try apply(head, transaction)
        // Appended without a suspension from here: the store's writers
        // may go on (and share its sync).
        endPeerTurn(of: transaction.id)
        _ = try await append(transaction, producing: after)
        return .appended
    }

    /// Throws unless this store holds `basisID` at `transaction.basis`
    /// (appended, durable or being synced). O(1).
    private func checkBasis(of transaction: Transaction, is basisID: UUID) throws {
        let basis = transaction.basis
        let stored = basis <= head.basis ? history.id(of: basis) : nil
        guard stored != basisID else { return }
        throw PeerError.historyCut(at: basis, holding: stored)
    }

    /// At most `limit` durable transactions from number `t` on, ascending.
    /// O(their size): read from the log unless cached.
    /// - Throws: ``StoreError/closed``; ``StoreError/corruptLog(segment:offset:reason:)``
    ///   when a record read back no longer checks; ``StoreError/unsupportedVersion(file:found:supported:)``
    ///   when a newer build wrote it.
    public func transactions(from t: Int64, limit: Int) throws -> [Transaction] {
        guard let log else { throw StoreError.closed }
        let first = max(t, 1)
        let last = current.basis
        guard limit > 0, first <= last else { return [] }
        let end = first + min(Int64(limit) - 1, last - first)
        return try (first...end).map { try history.transaction($0, log: log) }
    }

    /// The ID of durable transaction `t`, from memory. O(1).
    /// - Throws: ``StoreError/closed``.
    public func transactionID(at t: Int64) async throws -> UUID? {
        guard log != nil else { throw StoreError.closed }
        guard t >= 1, t <= current.basis else { return nil }
        return history.summary(t).id
    }

    /// The newest durable number now, then after each group of commits is
    /// published; the stream ends when the store closes.
    public func newTransactions() -> AsyncStream<Int64> {
        let (stream, continuation) = AsyncStream<Int64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let key = UUID()
        continuation.yield(current.basis)
        guard log != nil else {
            continuation.finish()
            return stream
        }
        basisFeeds[key] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.removeBasisFeed(key) } }
        return stream
    }

    private func removeBasisFeed(_ key: UUID) { basisFeeds[key] = nil }

    /// Holds the store's own writers for the peer whose append has `id`
    /// until it tries again or a short while passes (a peer that went
    /// away must not hold the store).
    private func beginPeerTurn(_ id: UUID) {
        peerTurns += 1
        let serial = peerTurns
        peerTurn = (id, serial)
        Task {
            try? await Task.sleep(for: Self.peerTurnLength)
            self.endPeerTurn(serial)
            // Also when a later turn replaced this one: the writers held
            // since then check how long they have waited.
            self.releaseHeldWriters()
        }
    }

    private func endPeerTurn(_ serial: Int) {
        guard peerTurn?.serial == serial else { return }
        peerTurn = nil
        releaseHeldWriters()
    }

    private func endPeerTurn(of id: UUID) {
        if let turn = peerTurn, turn.id == id { endPeerTurn(turn.serial) }
    }

    /// How long the store's writers wait at most for a peer that lost its
    /// number to try again (and, in all, for peers' turns).
    static let peerTurnLength = Duration.milliseconds(10)

    /// Writes a snapshot of the store's own value at `value.basis` (the
    /// value a peer of this history holds there: only its basis is used),
    /// as ``snapshot()`` does, and prunes old ones. O(snapshot size), plus
    /// a rebuild when the basis is not the current one.
    /// - Throws: ``HistoryStorageError/invalidTransaction(t:reason:)`` for a
    ///   basis past the newest durable transaction; the errors of
    ///   ``snapshot()``.
    public func putSnapshot(_ value: Database) async throws {
        let basis = value.basis
        // One at or before the newest snapshot adds nothing open would use
        // (and one before the kept ones would be pruned at once).
        if basis >= 0, snapshotSizes[basis] != nil || basis < lastSnapshotBasis {
            try checkWritable()
            return
        }
        // The snapshot's basis is the peer's; what it reports is not needed.
        _ = try await writeSnapshot { store in
            let current = store.current
            guard basis >= 0, basis <= current.basis else {
                throw HistoryStorageError.invalidTransaction(
                    t: basis,
                    reason: "no snapshot past the newest transaction, \(current.basis)"
                )
            }
            return basis == current.basis ? current : try store.database(asOf: basis)
        }
    }

    /// The bases of the snapshot files, ascending. O(s log s).
    public func snapshotBases() -> [Int64] { snapshotSizes.keys.sorted() }

    /// The value in the snapshot file with basis `basis`, read and checked;
    /// nil when there is none. O(snapshot size).
    /// - Throws: ``StoreError/corruptSnapshot(file:reason:)`` when it is
    ///   damaged; ``StoreError/closed`` after ``close()``.
    public func snapshot(at basis: Int64) throws -> Database? {
        guard log != nil else { throw StoreError.closed }
        guard snapshotSizes[basis] != nil else { return nil }
        do {
            return try database(inSnapshot: basis)
        } catch StoreError.noSnapshot {
            return nil  // removed since it was listed
        }
    }
}
