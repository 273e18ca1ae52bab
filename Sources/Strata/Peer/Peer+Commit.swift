import Foundation

extension Peer {
    /// Builds a transaction on the newest value with `body` and stores it
    /// at the next number. When another writer took that number, reads
    /// what is new and applies the same changes on the newer value; every
    /// change checks what it replaced, so a real conflict throws instead.
    /// O(changes · log n) per attempt, plus what catching up applies.
    ///
    ///     try await peer.transact(message: "Rate") { try $0.update(7, in: "songs", [.set("rating", 5)]) }
    ///
    /// - Parameters:
    ///   - message: The transaction's message.
    ///   - significance: How much the transaction matters in the history.
    ///   - metadata: The transaction's metadata.
    ///   - maximumAttempts: Appends tried before giving up (each one lost
    ///     to another writer's commit; after the second, the peer waits a
    ///     random while, up to 32 ms, before it tries again).
    ///   - body: Edits the newest value through a builder.
    /// - Returns: the stored transaction (numbered) and the values before
    ///   and after it.
    /// - Throws: what `body` throws and ``ApplyError`` (nothing stored);
    ///   ``ApplyError`` too when the transaction conflicts with one another
    ///   writer stored first; ``PeerError/tooManyAttempts(t:attempts:)``;
    ///   ``PeerError/closed``; what the storage throws, when the append
    ///   failed and catching up did not find it stored.
    @discardableResult
    public func transact(
        message: String = "",
        significance: Significance = .normal,
        metadata: [Key: Value] = [:],
        maximumAttempts: Int = 32,
        _ body: sending (inout TransactionBuilder) throws -> Void
    ) async throws -> CommitReport {
        guard !closed else { throw PeerError.closed }
        var builder = TransactionBuilder(on: head)
        try body(&builder)
        var transaction = builder.transaction(message: message, significance: significance, metadata: metadata)
        var before = head
        // The builder's value is the base with the edits; numbered as the
        // transaction that makes it.
        var after = builder.database
        after.basis = transaction.t
        for attempt in 0..<max(1, maximumAttempts) {
            let outcome: HistoryAppend
            do {
                outcome = try await storage.append(transaction)
            } catch {
                // The storage may have stored it before failing (a lost
                // acknowledgement): it is then in the history.
                if let report = try? await committed(transaction) { return report }
                throw error
            }
            switch outcome {
            case .appended:
                if head.basis == transaction.t - 1 {
                    head = after
                    summaries.append(transaction.summary)
                    publish()
                }
                // Else a catch-up that ran meanwhile applied it already.
                return CommitReport(transaction: transaction, before: before, after: after)
            case .taken:
                // A writer that keeps losing to faster ones waits a random
                // while, longer each time, so that it gets a turn.
                if attempt >= 1 {
                    let ceiling = 250 << min(attempt, 7)
                    try? await Task.sleep(for: .microseconds(Int.random(in: 0...ceiling)))
                }
                try await catchUp()
                guard !closed else { throw PeerError.closed }
                before = head
                transaction.t = head.basis + 1
                transaction.basis = head.basis
                after = try apply(head, transaction)
            }
        }
        throw PeerError.tooManyAttempts(t: transaction.t, attempts: max(1, maximumAttempts))
    }

    /// The commit report of `transaction` when the storage holds it (found
    /// by ID at or after its number, once caught up); nil when it does not.
    func committed(_ transaction: Transaction) async throws -> CommitReport? {
        try await catchUp()
        guard let stored = summaries.last(where: { $0.id == transaction.id }), stored.t >= transaction.t else {
            return nil
        }
        // The stored copy is this transaction, perhaps at a later number
        // than `transaction` says if it was rebased; the values around it
        // are rebuilt from the history only for the report.
        var numbered = transaction
        numbered.t = stored.t
        numbered.basis = stored.t - 1
        let after = try await value(at: stored.t)
        let before = try await value(at: stored.t - 1)
        return CommitReport(transaction: numbered, before: before, after: after)
    }

    /// The value at `t` (≤ the newest), replayed from the newest snapshot at
    /// or before it. O(snapshot + transactions between).
    func value(at t: Int64) async throws -> Database {
        if t == head.basis { return head }
        var value = Database()
        if let base = try await storage.snapshotBases().last(where: { $0 <= t }),
            let snapshot = try await storage.snapshot(at: base), snapshot.basis == base
        {
            value = snapshot
        }
        while value.basis < t {
            let batch = try await storage.transactions(
                from: value.basis + 1,
                limit: Int(min(Int64(Self.catchUpBatch), t - value.basis))
            )
            guard !batch.isEmpty else { throw PeerError.divergentHistory(t: value.basis + 1, reason: "it is missing") }
            for transaction in batch { value = try apply(value, transaction) }
        }
        return value
    }
}
