import Foundation

/// A store's history read from its log alone, without building any value:
/// what a tool needs to list, show or copy transactions of a large store in
/// milliseconds (opening the ``Store`` reads a snapshot and replays the log
/// after it).
///
/// Opens read-only, like ``StoreOptions/readOnly``: no lock is taken and
/// nothing on disk changes, so it reads a store another process has open
/// for writing, and sees every transaction on disk when it opened. Sealed
/// segments are known by their summaries; the last one is read.
///
///     let log = try await StoreLog.open(at: "/path/to/library.strata")
///     for transaction in try log.transactions(limit: 20) {
///         print(transaction.t, transaction.message)
///     }
///
/// Not thread-safe: use one from one task at a time.
public final class StoreLog {
    /// The store's directory.
    public let path: String
    /// What reading recovered from (a torn tail, damage kept out under
    /// ``Recovery/truncateAtDamage``); nothing on disk was changed.
    public let warnings: [StoreWarning]
    let log: TransactionLog
    var history: TransactionHistory
    /// The files underneath, read-only.
    let fileSystem: any FileSystem

    private init(
        path: String,
        log: TransactionLog,
        history: TransactionHistory,
        warnings: [StoreWarning],
        fileSystem: any FileSystem
    ) {
        self.path = path
        self.log = log
        self.history = history
        self.warnings = warnings
        self.fileSystem = fileSystem
    }

    deinit { log.close() }

    /// Reads the history of the store at `path`. O(transactions in the last
    /// segment + segments): no value is built, no transaction decoded whole.
    ///
    /// - Parameters:
    ///   - path: the store's directory.
    ///   - recovery: `.strict` (the default) refuses damage before the log's
    ///     last record; `.truncateAtDamage` keeps the history before it.
    ///   - fileSystem: the files underneath.
    /// - Throws: the errors opening a ``Store`` throws for a missing
    ///   path, a directory that is not a store, damage, missing history or
    ///   a newer format; never ``StoreError/locked(path:)``.
    public static func open(
        at path: String,
        recovery: Recovery = .strict,
        fileSystem: any FileSystem = PosixFileSystem()
    ) async throws -> StoreLog {
        var options = StoreOptions()
        options.readOnly = true
        options.recovery = recovery
        options.fileSystem = ReadOnlyFileSystem(base: fileSystem)
        _ = try StoreDirectory.check(path, fileSystem: options.fileSystem, create: false)
        let read = try await Store.readingWhileWritten(path: path, options: options) {
            try StoreError.mappingFormat {
                try Store.readLog(path: path, options: options, historyOnly: true)
            }
        }
        return StoreLog(
            path: path,
            log: read.log,
            history: read.history,
            warnings: read.warnings,
            fileSystem: options.fileSystem
        )
    }

    /// The number of the last transaction (0 for an empty history). O(1).
    public var count: Int64 { Int64(history.count) }

    /// The bytes of every log segment. O(segments).
    public var byteCount: Int { log.byteCount }

    /// The log's segment files, oldest first, with their sizes in bytes.
    /// O(segments).
    public var segments: [(name: String, bytes: Int)] { log.segments.map { ($0.name, $0.size) } }

    /// The summary (ID, t, time, message, significance) of transaction `t`.
    /// O(1).
    /// - Precondition: `1 <= t <= count`.
    public func summary(at t: Int64) -> TransactionSummary {
        precondition(t >= 1 && t <= count, "t \(t) is outside the history (1...\(count))")
        return history.summary(t)
    }

    /// The encoded size in bytes of transaction `t`'s log record. O(1).
    /// - Precondition: `1 <= t <= count`.
    public func recordSize(at t: Int64) -> Int {
        precondition(t >= 1 && t <= count, "t \(t) is outside the history (1...\(count))")
        return history.position(t).size
    }

    /// The number of the transaction with `id`, if the history has it. O(log n).
    public func t(of id: UUID) -> Int64? { history.t(of: id) }

    /// Transaction `t`, read from the log (recently read ones are cached).
    /// O(its size).
    /// - Throws: ``StoreError/outOfRange(t:current:)`` outside `1...count`;
    ///   ``StoreError/corruptLog(segment:offset:reason:)`` when its record
    ///   does not read back or decode; ``StoreError/unsupportedVersion(file:found:supported:)``
    ///   when a newer build wrote it.
    public func transaction(at t: Int64) throws -> Transaction {
        guard t >= 1, t <= count else { throw StoreError.outOfRange(t: t, current: count) }
        return try history.transaction(t, log: log)
    }

    /// Transactions matching `filter`, newest first, skipping `offset`
    /// matches and returning at most `limit` (what ``Store/history(_:offset:limit:)``
    /// returns). Reads only the transactions it returns, unless the filter
    /// names a table or record. O(transactions read).
    public func transactions(_ filter: HistoryFilter = HistoryFilter(), offset: Int = 0, limit: Int = 100) throws
        -> [Transaction]
    {
        try filter.select(through: count, offset: offset, limit: limit) {
            history.summary($0)
        } read: {
            try history.transaction($0, log: log)
        }
    }

    /// Every version of record `id` of `table`, newest first, each with the
    /// transaction that made it (as ``Store/versions(of:in:)``). O(history):
    /// reads every transaction.
    public func versions(of id: RecordID, in table: Key) throws -> [RecordVersion] {
        try RecordVersion.versions(of: id, in: table, through: count) { try history.transaction($0, log: log) }
    }
}
