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
    ///     to another writer's commit, or failed; after the second loss,
    ///     the peer waits a random while, up to 32 ms, before it tries
    ///     again; after a failure, 10 ms and longer, up to a second).
    ///   - body: Edits the newest value through a builder.
    /// - Returns: the stored transaction (numbered) and the values before
    ///   and after it.
    /// - Throws: what `body` throws and ``ApplyError`` (nothing stored);
    ///   what the storage throws while checking that the history was not
    ///   cut (a peer that is not following checks before every commit on a
    ///   storage that can be cut, one more request; a following one after
    ///   lost notifications; nothing sent), and
    ///   ``PeerError/divergentHistory(t:reason:)`` when it was (also from
    ///   the append: on such a storage the peer sends the ID of the
    ///   transaction it built on, and the storage refuses the commit when
    ///   it holds another there);
    ///   an append's refusal (``HistoryStorageError``, a ``StoreError``
    ///   other than a failed write: a read-only or closed file store, say;
    ///   nothing stored);
    ///   ``ApplyError`` too when the transaction conflicts with one another
    ///   writer stored first; ``PeerError/tooManyAttempts(t:attempts:)``;
    ///   ``PeerError/closed``; ``PeerError/outcomeUnknown(id:t:reason:)``
    ///   when appends failed and the history could not tell whether the
    ///   transaction is or will be stored (it could not be read, or the
    ///   transaction's number was still free after the last attempt). A
    ///   failed append whose number another transaction took is rebased
    ///   and tried again; one whose number is still free is sent again as
    ///   it was (same number, same ID), which the storage stores once at
    ///   most.
    @discardableResult
    public func transact(
        message: String = "",
        significance: Significance = .normal,
        metadata: [Key: Value] = [:],
        maximumAttempts: Int = 32,
        _ body: sending (inout TransactionBuilder) throws -> Void
    ) async throws -> CommitReport {
        if let divergence { throw divergence }
        guard !closed else { throw PeerError.closed }
        try await checkContinuityIfListeningLost()
        // Closed (by its follow task, say) while checking.
        guard !closed else { throw PeerError.closed }
        var builder = TransactionBuilder(on: head)
        try body(&builder)
        var transaction = builder.transaction(message: message, significance: significance, metadata: metadata)
        var before = head
        // The builder's value is the base with the edits; numbered as the
        // transaction that makes it.
        var after = builder.database
        after.basis = transaction.t
        let attempts = max(1, maximumAttempts)
        // A failed append at the transaction's current number that may yet
        // be stored: a later refusal does not settle it.
        var unsettled: (any Error)?
        for attempt in 0..<attempts {
            var outcome: HistoryAppend
            do {
                // With the ID of the transaction it was built on, where the
                // history can be cut: stored only on that history.
                if storage.canCutHistory, let basisID = id(at: transaction.basis) {
                    outcome = try await storage.append(transaction, basisID: basisID)
                } else {
                    outcome = try await storage.append(transaction)
                }
            } catch let error as PeerError {
                if case .divergentHistory = error { diverged(error) }
                throw error
            } catch let refusal where Self.refusedAppend(refusal) {
                guard let unsettled else { throw refusal }
                throw PeerError.outcomeUnknown(
                    id: transaction.id,
                    t: transaction.t,
                    reason: "\(unsettled); then \(refusal)"
                )
            } catch {
                // The storage may have stored it before failing (a lost
                // acknowledgement), or may store it still (a request given
                // up on that the server goes on running). Only another
                // transaction at its t settles that it never will be.
                do {
                    try await catchUp()
                } catch let lookup {
                    throw PeerError.outcomeUnknown(
                        id: transaction.id,
                        t: transaction.t,
                        reason: "\(error); then \(lookup)"
                    )
                }
                if summary(at: transaction.t)?.id == transaction.id {
                    return CommitReport(transaction: transaction, before: before, after: after)
                }
                if head.basis >= transaction.t {
                    // Another transaction holds t: rebased as when taken.
                    unsettled = nil
                    outcome = .taken
                } else {
                    unsettled = error
                    // t is still free: the same transaction (same number,
                    // same ID) goes again; the storage stores it once at
                    // most, whichever request lands.
                    guard attempt + 1 < attempts else {
                        throw PeerError.outcomeUnknown(
                            id: transaction.id,
                            t: transaction.t,
                            reason: "\(error); transaction \(transaction.t) is still free, and a request "
                                + "given up on may yet store it"
                        )
                    }
                    try? await Task.sleep(for: .milliseconds(min(1_000, 10 << min(attempt, 7))))
                    continue
                }
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
                do {
                    try await catchUp()
                } catch let lookup where unsettled != nil && !(lookup is PeerError) {
                    // `taken` after a failed attempt at this number: the
                    // holder of t may be that attempt, landed late.
                    throw PeerError.outcomeUnknown(
                        id: transaction.id,
                        t: transaction.t,
                        reason: "\(unsettled!); then taken; then \(lookup)"
                    )
                }
                // A storage that stored it and still answered `taken`
                // (a retried request): it is committed.
                if summary(at: transaction.t)?.id == transaction.id {
                    return CommitReport(transaction: transaction, before: before, after: after)
                }
                guard !closed else { throw PeerError.closed }
                // Another transaction holds t: earlier attempts at t are settled.
                unsettled = nil
                before = head
                transaction.t = head.basis + 1
                transaction.basis = head.basis
                after = try apply(head, transaction)
            }
        }
        throw PeerError.tooManyAttempts(t: transaction.t, attempts: max(1, maximumAttempts))
    }

    /// Whether `error` from an append says the transaction was not stored
    /// and never will be (see ``HistoryStorage/append(_:)``).
    static func refusedAppend(_ error: any Error) -> Bool {
        switch error {
        case is HistoryStorageError, is ApplyError: return true
        case let refusal as any HistoryStorageRefusal: return refusal.refusesAppend
        // A failed write may be on disk after all (a cut back that failed
        // on a failing disk). Every other store error refuses before
        // writing (one after a failed write is made unknown by `unsettled`).
        case StoreError.writeFailed: return false
        case is StoreError: return true
        default: return false
        }
    }

    /// The ID of transaction `t` as this peer knows it: the zero UUID at
    /// 0, a transaction applied since open, or the one it started after;
    /// nil otherwise. O(1).
    func id(at t: Int64) -> UUID? {
        if t == 0 { return UUID(uuid: UUID.zero) }
        return summary(at: t)?.id ?? (start.basis == t ? start.id : nil)
    }

    /// The summary of transaction `t` when this peer applied it since
    /// open. O(1).
    func summary(at t: Int64) -> TransactionSummary? {
        guard let first = summaries.first?.t, t >= first, t - first < Int64(summaries.count) else { return nil }
        return summaries[Int(t - first)]
    }
}
