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
    ///   failed and catching up did not find it stored;
    ///   ``PeerError/outcomeUnknown(id:t:reason:)`` when the append failed
    ///   and the history could not be read to tell.
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
                // acknowledgement): it is then in the history, at its t.
                let stored: Bool
                do {
                    try await catchUp()
                    stored = summary(at: transaction.t)?.id == transaction.id
                } catch let lookup {
                    throw PeerError.outcomeUnknown(
                        id: transaction.id,
                        t: transaction.t,
                        reason: "\(error); then \(lookup)"
                    )
                }
                if stored { return CommitReport(transaction: transaction, before: before, after: after) }
                throw error
            }
            switch outcome {
            case .appended:
                if head.basis == transaction.t - 1 {
                    head = after
                    summaries.append(transaction.summary)
                    publish()
                    refreshCacheIfBehind()
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
                // A storage that stored it and still answered `taken`
                // (a retried request): it is committed.
                if summary(at: transaction.t)?.id == transaction.id {
                    return CommitReport(transaction: transaction, before: before, after: after)
                }
                guard !closed else { throw PeerError.closed }
                before = head
                transaction.t = head.basis + 1
                transaction.basis = head.basis
                after = try apply(head, transaction)
            }
        }
        throw PeerError.tooManyAttempts(t: transaction.t, attempts: max(1, maximumAttempts))
    }

    /// The summary of transaction `t` when this peer applied it since
    /// open. O(1).
    func summary(at t: Int64) -> TransactionSummary? {
        guard let first = summaries.first?.t, t >= first, t - first < Int64(summaries.count) else { return nil }
        return summaries[Int(t - first)]
    }
}
