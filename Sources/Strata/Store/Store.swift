import Foundation
import PersistentCollections
import Synchronization

/// A durable database: a directory holding the transaction log and
/// snapshots, the current ``Database`` value, and every transaction ever
/// committed.
///
/// Writers are serialized by the actor (strictly serializable: each commit
/// applies to the value the previous one produced). Readers call
/// ``current`` from any thread without awaiting and are never blocked. Only
/// durable values are published: a commit's value becomes ``current`` once
/// its log record is synced (per ``StoreOptions/durability``).
///
///     var options = StoreOptions()
///     options.createIfMissing = true
///     let store = try await Store.open(at: "/path/to/library.strata", options: options)
///     let report = try await store.transact(message: "Import") { builder in
///         try builder.insert(["title": "Blue River"], id: 7, into: "songs")
///     }
///     store.current.record(7, in: "songs")?["title"]      // "Blue River"
///     try await store.revert(transaction: report.transaction.id)   // undo, recorded
public actor Store {
    /// The store's directory.
    public nonisolated let path: String
    /// The options it was opened with.
    public nonisolated let options: StoreOptions
    /// What opening recovered from (a torn tail cut, a damaged snapshot
    /// skipped); empty after a clean shutdown.
    public nonisolated let warnings: [StoreWarning]

    private nonisolated let published: Mutex<Database>

    /// The latest durable value. Synchronous, from any thread. O(1).
    public nonisolated var current: Database { published.withLock { $0 } }

    var log: TransactionLog?
    var lockFile: (any StorageFile)?
    /// Every transaction, durable or being synced, by number.
    var history: TransactionHistory
    /// Pre-combined runs of the history (the compaction engine).
    var runIndex: RunIndex
    /// Past values kept as rebuild starts.
    var checkpoints: Checkpoints
    /// Snapshot files on disk: basis → size in bytes.
    var snapshotSizes: [Int64: Int]
    /// The value after the last appended transaction (ahead of `current`
    /// while a group sync runs).
    var head: Database
    /// Commits appended but not yet published, oldest first.
    var unpublished: [CommitReport] = []
    /// Bumped when a failed write rolls back, failing every commit appended before.
    var epoch = 0
    var lastWriteError: FileSystemError?
    var syncTask: Task<Void, Never>?
    /// Log syncs since open (commits per sync measures group commit).
    var syncCount = 0
    /// An unrecoverable write failure: every write refuses until reopened.
    var failure: FileSystemError?
    /// The basis of the newest snapshot on disk that belongs to the history
    /// (0: none): what open would start from.
    var lastSnapshotBasis: Int64
    /// Measured rates of snapshot reads and log replay, for the snapshot
    /// policy and the rebuild planner.
    var rebuildCosts: RebuildCosts
    var snapshotTask: Task<Void, Never>?
    /// Building the compaction blocks the latest commits completed.
    var compactionTask: Task<Void, Never>?
    var valueFeeds: [UUID: AsyncStream<Database>.Continuation] = [:]
    var reportFeeds: [UUID: AsyncStream<CommitReport>.Continuation] = [:]

    init(
        path: String,
        options: StoreOptions,
        warnings: [StoreWarning],
        loaded: Loaded
    ) {
        self.path = path
        self.options = options
        self.warnings = warnings
        self.published = Mutex(loaded.current)
        self.log = loaded.log
        self.lockFile = loaded.lockFile
        self.history = loaded.history
        self.checkpoints = Checkpoints(
            interval: options.checkpointInterval,
            limit: options.checkpointsKept,
            byteLimit: options.checkpointMemory
        )
        self.snapshotSizes = loaded.snapshotSizes
        self.head = loaded.current
        self.lastSnapshotBasis = loaded.snapshotBasis
        self.rebuildCosts = loaded.costs
        self.runIndex = RunIndex(
            changeLimit: options.compactionChangesInMemory,
            files: BlockFiles(directory: path + "/" + Self.blockDirectoryName, fileSystem: options.fileSystem)
        )
        // Blocks past a log tail cut at open are of a history that is gone.
        runIndex.removeAll(after: Int64(loaded.history.count))
    }

    var snapshotDirectory: String { path + "/snapshots" }
    /// Where the compaction engine keeps its block files, under the store.
    static let blockDirectoryName = "blocks"

    // MARK: Writing

    /// Builds a transaction on the latest value with `body` and commits it.
    ///
    /// - Returns: the report: the numbered transaction and the values
    ///   before and after.
    /// - Throws: what `body` throws (nothing is committed), or
    ///   ``StoreError`` when the write fails (nothing is committed and
    ///   ``current`` is unchanged).
    @discardableResult
    public func transact(
        message: String = "",
        significance: Significance = .normal,
        metadata: [String: Value] = [:],
        _ body: sending (inout TransactionBuilder) throws -> Void
    ) async throws -> CommitReport {
        try checkWritable()
        var builder = TransactionBuilder(on: head)
        try body(&builder)
        let transaction = builder.transaction(message: message, significance: significance, metadata: metadata)
        var next = builder.database
        next.basis = transaction.t
        return try await append(transaction, producing: next)
    }

    /// Commits a prepared transaction, renumbered to follow the latest
    /// value. Its changes are checked against that value (``ApplyError``
    /// when something it replaced has changed).
    @discardableResult
    public func commit(_ prepared: Transaction) async throws -> CommitReport {
        try checkWritable()
        var transaction = prepared
        transaction.basis = head.basis
        transaction.t = head.basis + 1
        let next = try apply(head, transaction)
        return try await append(transaction, producing: next)
    }

    /// The value `transaction` would produce on ``current``, without
    /// committing it. O(changes · log32 n).
    public nonisolated func with(_ transaction: Transaction) throws -> Database {
        let base = current
        var renumbered = transaction
        renumbered.basis = base.basis
        renumbered.t = base.basis + 1
        return try apply(base, renumbered)
    }

    func checkWritable() throws {
        guard log != nil else { throw StoreError.closed }
        if let failure { throw StoreError.needsReopen(failure) }
    }

    /// Appends, waits for durability per the policy, publishes.
    private func append(_ transaction: Transaction, producing next: Database) async throws -> CommitReport {
        guard let log else { throw StoreError.closed }
        let payload = BinaryCodec.encode(transaction)
        let position: TransactionLog.Position
        do {
            position = try log.append(payload)
        } catch let error as FileSystemError {
            throw StoreError.writeFailed(error)
        }
        let report = CommitReport(transaction: transaction, before: head, after: next)
        history.append(transaction, at: position)
        head = next
        unpublished.append(report)
        switch options.durability {
        case .none:
            publish(through: transaction.t)
        case .everyCommit:
            do {
                syncCount += 1
                try log.sync()
            } catch let error as FileSystemError {
                rollBack(after: current.basis, error)
                throw StoreError.writeFailed(error)
            }
            publish(through: transaction.t)
        case .grouped:
            try await waitUntilDurable(transaction.t, epoch: epoch)
        }
        considerSnapshot()
        return report
    }

    /// Group commit: one sync covers every record appended before it
    /// started; commits arriving meanwhile wait for the next one.
    private func waitUntilDurable(_ t: Int64, epoch myEpoch: Int) async throws {
        while true {
            guard epoch == myEpoch, let log else {
                throw lastWriteError.map { StoreError.writeFailed($0) } ?? StoreError.closed
            }
            if current.basis >= t { return }
            if let syncTask {
                await syncTask.value
                continue
            }
            let target = head.basis
            let file = _UncheckedFile(log.activeFile)
            syncCount += 1
            syncTask = Task {
                let result = await Self.syncOffPool(file)
                self.finishSync(result, target: target)
            }
        }
    }

    /// One serial thread for group syncs: `fdatasync` blocks, and blocking
    /// one of the cooperative pool's few threads would stall the writers
    /// whose appends the next sync should gather.
    private static let syncQueue = DispatchQueue(label: "strata.store.sync", qos: .userInitiated)

    private static func syncOffPool(_ file: _UncheckedFile) async -> Result<Void, any Error> {
        await withCheckedContinuation { continuation in
            syncQueue.async { continuation.resume(returning: Result { try file.value?.sync() }) }
        }
    }

    private func finishSync(_ result: Result<Void, any Error>, target: Int64) {
        syncTask = nil
        switch result {
        case .success: publish(through: target)
        case .failure(let error):
            let error =
                error as? FileSystemError ?? FileSystemError(operation: "sync", path: path, code: 5 /* EIO */)
            rollBack(after: current.basis, error)
        }
    }

    /// Drops every appended transaction after `t` (the durable value):
    /// the log is cut back and the head returns to `current`.
    func rollBack(after t: Int64, _ error: FileSystemError) {
        lastWriteError = error
        epoch += 1
        let keep = Int(t)
        if keep < history.count, let log {
            do {
                try log.truncate(from: history.positions[keep], sequence: t + 1, sync: false)
            } catch {
                failure = error as? FileSystemError ?? FileSystemError(operation: "truncate", path: path, code: 5)
            }
        }
        history.removeAll(after: t)
        runIndex.removeAll(after: t)
        unpublished.removeAll { $0.transaction.t > t }
        head = current
    }

    /// Publishes every appended commit up to `t`, in order.
    func publish(through t: Int64) {
        let previous = current.basis
        while let first = unpublished.first, first.transaction.t <= t {
            unpublished.removeFirst()
            setCurrent(first.after)
            checkpoints.consider(first.after)
            for feed in valueFeeds.values { feed.yield(first.after) }
            for feed in reportFeeds.values { feed.yield(first) }
        }
        scheduleCompaction(from: previous, to: current.basis)
    }

    func setCurrent(_ value: Database) {
        published.withLock { $0 = value }
    }

    // MARK: Closing

    /// Waits for pending syncs and snapshots, syncs the log and releases
    /// the lock. Later writes throw ``StoreError/closed``; reads of
    /// ``current`` keep working.
    public func close() async throws {
        while let task = syncTask { await task.value }
        while let task = snapshotTask { await task.value }
        while let task = compactionTask { await task.value }
        guard let log else { return }
        defer {
            log.close()
            self.log = nil
            lockFile?.close()
            lockFile = nil
            for feed in valueFeeds.values { feed.finish() }
            for feed in reportFeeds.values { feed.finish() }
            valueFeeds = [:]
            reportFeeds = [:]
        }
        if failure == nil {
            do {
                try log.sync()
                // A later open then knows every transaction through here
                // must be in the log (a deleted segment is not a clean end).
                let t = Int64(history.count)
                try log.updateManifest { $0.durableThrough = max($0.durableThrough, t) }
            } catch let error as FileSystemError {
                throw StoreError.writeFailed(error)
            }
        }
    }
}

/// Hands a file to the detached sync task: `fdatasync` may run while the
/// actor appends to the same descriptor (the kernel orders them).
struct _UncheckedFile: @unchecked Sendable {
    let value: (any StorageFile)?
    init(_ value: (any StorageFile)?) { self.value = value }
}
