import Foundation

/// Where a shared history lives: the numbered transactions of one store,
/// appended by compare-and-set, and snapshots of its values.
///
/// A ``Peer`` keeps its values in memory and talks to its storage only
/// through this protocol, so that a history can live anywhere that can order
/// appends: a server several hosts reach (PostgreSQL), or memory
/// (``MemoryHistoryStorage``, for tests and single-process use).
///
/// What an implementation promises:
/// - transactions are numbered 1, 2, 3… with no gap; ``append(_:)`` stores a
///   transaction only at the next free number and never overwrites one, so
///   writers anywhere are serialized by the storage alone;
/// - what ``append(_:)`` acknowledged is durable, and every later read sees it;
/// - ``transactions(from:limit:)`` returns the stored transactions exactly as
///   appended.
public protocol HistoryStorage: Sendable {
    /// The number of the newest transaction stored; 0 when there is none.
    func latestT() async throws -> Int64

    /// Stores `transaction` as number `transaction.t` when that is the next
    /// free number (compare-and-set). Its `basis` is `t - 1`.
    /// - Returns: ``HistoryAppend/appended``, or ``HistoryAppend/taken``
    ///   when another writer stored a transaction at `t` first (this one is
    ///   not stored).
    /// - Throws: ``HistoryStorageError``, ``ApplyError``, a ``StoreError``
    ///   (but ``StoreError/writeFailed(_:)``) or a ``HistoryStorageRefusal``
    ///   whose `refusesAppend` is true
    ///   when the storage refuses it: it is not stored. Any other error
    ///   (the storage could not be reached): the append may or may not
    ///   have happened, or may happen still (a caller that must know looks
    ///   for the transaction's ID).
    func append(_ transaction: Transaction) async throws -> HistoryAppend

    /// ``append(_:)``, checking in the same step that the transaction the
    /// storage holds at `transaction.basis` is `basisID` (the zero UUID at
    /// basis 0): the one the writer built on. A storage whose history can
    /// be cut (``canCutHistory``) should check it in the same step, since
    /// it may hold another transaction at that number, and a storage that
    /// wraps another should pass this call on. The default checks with
    /// ``transactionID(at:)`` before ``append(_:)`` and again after it (a
    /// cut between them is then reported, though the transaction was
    /// stored), and for a storage whose numbers are never reused is
    /// ``append(_:)``.
    /// - Throws: ``PeerError/divergentHistory(t:reason:)`` when the
    ///   storage holds another transaction at the basis, or none: nothing
    ///   is stored, but when the default's second check finds it (the
    ///   transaction is then stored on the other history); otherwise as
    ///   ``append(_:)``.
    func append(_ transaction: Transaction, basisID: UUID) async throws -> HistoryAppend

    /// The stored transactions numbered `t` and above, ascending, at most
    /// `limit` of them; fewer (or none) when the history ends sooner.
    func transactions(from t: Int64, limit: Int) async throws -> [Transaction]

    /// The ID of transaction `t`, or nil when none is stored at `t`. A
    /// storage that can answer without reading the whole transaction (a
    /// large import, say) should; the default reads it.
    func transactionID(at t: Int64) async throws -> UUID?

    /// The newest number each time transactions are stored, starting with
    /// the current one: a hint to read them. Numbers may be skipped or
    /// repeated; a stream may end when the storage loses its notifications
    /// (a caller then reads what is new and asks again).
    func newTransactions() async -> AsyncStream<Int64>

    /// Stores a snapshot of `value` under its basis (replacing one with the
    /// same basis).
    func putSnapshot(_ value: Database) async throws

    /// The bases of the stored snapshots, ascending.
    func snapshotBases() async throws -> [Int64]

    /// The snapshot with basis `basis`, or nil when there is none.
    func snapshot(at basis: Int64) async throws -> Database?

    /// Whether the storage was closed (every call refuses from then on):
    /// a following peer stops. The default says no.
    func isClosed() async -> Bool

    /// Whether stored transactions can be removed and their numbers taken
    /// by others (a file ``Store``'s ``Store/truncate(after:)`` does): a
    /// ``Peer`` that is not following then asks, before each catch-up and
    /// commit, whether its newest transaction is still stored. The
    /// default says no.
    var canCutHistory: Bool { get }
}

// A conformer's own versions of these must be `async`, as the protocol
// declares them: async code calling a synchronous one on the concrete type
// gets the default below instead (Swift prefers the async overload there).
extension HistoryStorage {
    /// Never closed.
    public func isClosed() async -> Bool { false }

    /// Never cut.
    public var canCutHistory: Bool { false }

    /// ``append(_:)``, where the history can be cut with the basis checked
    /// by ``transactionID(at:)`` before and after it (a number once stored
    /// elsewhere keeps its transaction).
    public func append(_ transaction: Transaction, basisID: UUID) async throws -> HistoryAppend {
        guard canCutHistory else { return try await append(transaction) }
        let basis = transaction.basis
        func checkBasis() async throws {
            let stored = basis == 0 ? UUID(uuid: UUID.zero) : try await transactionID(at: basis)
            if stored != basisID { throw PeerError.historyCut(at: basis, holding: stored) }
        }
        try await checkBasis()
        let outcome = try await append(transaction)
        // Stored on another history, if a cut came between the check and
        // the append: the writer must not go on as if on its own.
        if outcome == .appended { try await checkBasis() }
        return outcome
    }

    /// Reads transaction `t` whole for its ID. O(its size).
    public func transactionID(at t: Int64) async throws -> UUID? {
        guard t >= 1, let found = try await transactions(from: t, limit: 1).first, found.t == t else { return nil }
        return found.id
    }
}

/// What a compare-and-set ``HistoryStorage/append(_:)`` did.
public enum HistoryAppend: Sendable, Equatable {
    /// The transaction is stored at its `t`.
    case appended
    /// Another transaction holds that `t`: nothing was stored.
    case taken
}

/// An error of a storage's own that may say an append was refused: not
/// stored, and never to be (a server's refusal of the statement, say).
/// A ``Peer`` throws such a refusal at once, as it does a
/// ``HistoryStorageError``, instead of settling the outcome by reading.
public protocol HistoryStorageRefusal: Error {
    /// Whether the append that threw this was not stored and never will be.
    var refusesAppend: Bool { get }
}
