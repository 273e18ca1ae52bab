/// A ``HistoryStorage`` in memory: one process's shared history, for tests
/// and for peers that never need a server. Appends are serialized by the
/// actor; snapshots are kept as values.
public actor MemoryHistoryStorage: HistoryStorage {
    private var log: [Transaction] = []
    private var snapshots: [Int64: Database] = [:]
    private var listeners: [Int: AsyncStream<Int64>.Continuation] = [:]
    private var nextListener = 0

    /// An empty history.
    public init() {}

    /// The newest t; 0 when empty. O(1).
    public func latestT() -> Int64 { Int64(log.count) }

    /// Appends when `transaction.t` is the next number. O(1) amortized.
    /// - Throws: ``HistoryStorageError/invalidTransaction(t:reason:)`` for a
    ///   `t` past the next free one or a basis other than `t - 1`.
    public func append(_ transaction: Transaction) throws -> HistoryAppend {
        let next = Int64(log.count) + 1
        try HistoryStorageError.checkPlacement(of: transaction, next: next)
        guard transaction.t == next else { return .taken }
        log.append(transaction)
        for listener in listeners.values { listener.yield(next) }
        return .appended
    }

    /// At most `limit` transactions from `t` on. O(limit).
    public func transactions(from t: Int64, limit: Int) -> [Transaction] {
        let start = Int(clamping: max(t, 1)) - 1
        guard start < log.count, limit > 0 else { return [] }
        return Array(log[start..<(start + min(limit, log.count - start))])
    }

    /// The newest t now, then after every append.
    public func newTransactions() -> AsyncStream<Int64> {
        let (stream, continuation) = AsyncStream<Int64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let key = nextListener
        nextListener += 1
        listeners[key] = continuation
        continuation.yield(Int64(log.count))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeListener(key) }
        }
        return stream
    }

    private func removeListener(_ key: Int) { listeners[key] = nil }

    /// Keeps `value` as the snapshot at its basis. O(1).
    public func putSnapshot(_ value: Database) { snapshots[value.basis] = value }

    /// The snapshots' bases, ascending. O(s log s).
    public func snapshotBases() -> [Int64] { snapshots.keys.sorted() }

    /// The snapshot at `basis`. O(1).
    public func snapshot(at basis: Int64) -> Database? { snapshots[basis] }
}

/// Why a ``HistoryStorage`` refused a request.
public enum HistoryStorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A transaction that cannot be stored where it says it goes.
    case invalidTransaction(t: Int64, reason: String)

    /// Refuses `transaction` unless its number is in `1...next` (`next`:
    /// the next free one) and its basis is the number before it.
    static func checkPlacement(of transaction: Transaction, next: Int64) throws {
        guard transaction.t >= 1, transaction.t <= next else {
            throw invalidTransaction(t: transaction.t, reason: "the next free number is \(next)")
        }
        guard transaction.basis == transaction.t - 1 else {
            throw invalidTransaction(
                t: transaction.t,
                reason: "its basis is \(transaction.basis), not \(transaction.t - 1)"
            )
        }
    }

    /// One line naming the transaction and why.
    public var description: String {
        switch self {
        case let .invalidTransaction(t, reason): return "transaction \(t) cannot be stored: \(reason)"
        }
    }
}
