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
/// Task cancellation is not observed by the store's operations: an open,
/// a commit or an as-of in a cancelled task does what it would have done
/// (a commit that returned is durable as any other); a feed or an
/// observation ends when the task iterating it is cancelled. Close the
/// store with ``close()``: a store let go of without it ends its feeds
/// and observations, skips the final sync (commits made under
/// ``Durability/none`` are left to the system to write). Its lock is
/// held until its background work (a snapshot or a compaction round being
/// written) ends; an open of the store in this process waits for that
/// instead of reporting it locked.
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
    /// The store's directory: the path it was opened with, made absolute
    /// against the working directory of that moment.
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
    /// What the store holds while open: its lock file and directory,
    /// locked, and the directories it writes into. Nil when read-only.
    /// Background work holds it too (see ``StoreLock``).
    let directoryLock: StoreLock?
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
    /// Commits appended but not yet published, oldest first, each with its
    /// append serial.
    var unpublished: [(report: CommitReport, serial: Int)] = []
    /// Records appended since open (each commit's serial is the count
    /// after it), and the serial of the last one published: a commit has
    /// returned or will once its serial is published, whatever later
    /// truncates or rollbacks do to numbers `t`.
    var appendedCount = 0
    var publishedCount = 0
    /// Bumped when a failed write rolls back, failing every commit appended
    /// before it and not yet published.
    var epoch = 0
    /// `publishedAtRollback[e]`: ``publishedCount`` when epoch `e` ended.
    /// A commit of epoch `e` with a higher serial was rolled back; one at
    /// or below it was published before the rollback (its waiter may not
    /// have resumed yet).
    var publishedAtRollback: [Int] = []
    var lastWriteError: FileSystemError?
    var syncTask: Task<Void, Never>?
    /// Log syncs since open (commits per sync measures group commit).
    var syncCount = 0
    /// How many writers took part in the last group sync's round: the
    /// next sync waits for that many commits (see `gatherWriters`).
    var expectedWriters = 1
    /// An unrecoverable write failure: every write refuses until reopened.
    var failure: FileSystemError?
    /// Set by ``close()``: new commits refuse while the appended ones finish.
    var closing = false
    /// A peer's turn (see `Store+HistoryStorage`): the store's own writers
    /// wait while a peer that lost its number to them catches up and
    /// tries again, so that a busy store does not starve its peers.
    var peerTurn: (id: UUID, serial: Int)?
    var peerTurns = 0
    /// Truncates holding new writers, and the writers held.
    var truncations = 0
    var heldWriters: [CheckedContinuation<Void, Never>] = []
    /// The basis of the newest snapshot on disk that belongs to the history
    /// (0: none): what open would start from.
    var lastSnapshotBasis: Int64
    /// Measured rates of snapshot reads and log replay, for the snapshot
    /// policy and the rebuild planner.
    var rebuildCosts: RebuildCosts
    var snapshotTask: Task<Void, Never>?
    /// Whether a compaction round runs: building, off the actor, the
    /// blocks the latest commits completed; and who waits for none to run.
    var compacting = false
    var compactionSettledWaiters: [CheckedContinuation<Void, Never>] = []
    /// Whether the upkeep thread is measuring what the newest checkpoints cost.
    var measuringCheckpoints = false
    /// The current value's size, for the memory budget.
    var valueSize = ValueSize()
    /// Whether the upkeep thread is measuring the current value's size.
    var measuringValueSize = false
    /// Set by ``close()``: a measurement running off the actor then stops.
    nonisolated let measurementsStopped = Mutex(false)
    /// The store's own queues for what blocks on the disk: its group syncs
    /// (one at a time, never behind another store's) and its snapshot
    /// writes (long; never in front of a sync).
    nonisolated let syncQueue = BlockingQueue(label: "strata.store.sync", qos: .userInitiated)
    nonisolated let snapshotQueue = BlockingQueue(label: "strata.store.snapshot", qos: .utility)
    /// The budget in bytes last divided among the engine's parts.
    var appliedMemoryBudget = Int.max
    /// Whether commits completed blocks since the running round began.
    var compactionDue = false
    /// Every block completed by transactions up to this t has been planned
    /// by a round (blocks completed before open are built when needed).
    var compactedThrough: Int64
    var valueFeeds: [UUID: AsyncStream<Database>.Continuation] = [:]
    var reportFeeds: [UUID: AsyncStream<CommitReport>.Continuation] = [:]
    /// The streams of ``newTransactions()`` (the store as a ``HistoryStorage``).
    var basisFeeds: [UUID: AsyncStream<Int64>.Continuation] = [:]
    /// The running observations, indexed by what each read.
    var observerRegistry = ObserverRegistry()

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
        self.directoryLock = loaded.lock
        self.snapshotDirectoryIdentity = options.fileSystem.identity(of: path + "/snapshots")
        self.history = loaded.history
        self.checkpoints = Checkpoints(
            interval: options.checkpointInterval,
            limit: options.checkpointsKept
        )
        self.snapshotSizes = loaded.snapshotSizes
        self.head = loaded.current
        self.lastSnapshotBasis = loaded.snapshotBasis
        self.rebuildCosts = loaded.costs
        self.compactedThrough = loaded.current.basis
        self.runIndex = RunIndex(
            changeLimit: options.compactionChangesInMemory,
            files: BlockFiles(directory: path + "/" + Self.blockDirectoryName, fileSystem: options.fileSystem)
        )
        // Blocks past a log tail cut at open are of a history that is gone.
        runIndex.removeAll(after: Int64(loaded.history.count))
    }

    /// A store let go of without ``close()``: its feeds and observations
    /// end (their consumers' loops return) instead of waiting for values
    /// that will never come. Its files close as their handles are freed.
    deinit {
        for feed in valueFeeds.values { feed.finish() }
        for feed in reportFeeds.values { feed.finish() }
        for feed in basisFeeds.values { feed.finish() }
        for observer in observerRegistry.observers.values { observer.finish() }
        // Background work still running keeps the lock; an open of this
        // store waits for it to end.
        directoryLock?.storeDropped()
    }

    var snapshotDirectory: String { path + "/snapshots" }
    /// Which directory ``snapshotDirectory`` named at open (see
    /// ``FileSystem/identity(of:)``): snapshots are written only into it.
    let snapshotDirectoryIdentity: FileIdentity?
    /// Transactions of at least this many changes, evicted from the cache,
    /// are freed on the upkeep thread (about 100 µs per 1,000 changes).
    static let releasedOffActor = 64
    /// Where the compaction engine keeps its block files, under the store.
    static let blockDirectoryName = "blocks"

    // MARK: Writing

    /// Builds a transaction on the latest value with `body` and commits it.
    ///
    /// A commit ends in exactly one of two ways: it returns, and it is
    /// durable (per ``StoreOptions/durability``) and in the history; or it
    /// throws, and it is not in the history, now or after reopening — with
    /// one exception no store can rule out: when the process dies while the
    /// disk is failing, a write whose sync reported failure may have reached
    /// the disk after all. To learn after an error whether a commit landed
    /// (the process died, the store needed reopening), pass your own `id`
    /// and ask ``transaction(id:)``.
    ///
    /// While ``truncate(after:)`` runs, a commit waits for it and then
    /// builds on the truncated value.
    ///
    /// - Parameters:
    ///   - id: the transaction's ID (default: a new one); at most one
    ///     transaction in the history has it.
    ///   - message: what the history shows for it.
    ///   - significance: how much it matters to a person (undo skips `.minor`).
    ///   - metadata: anything else (author, device; ``Store/undoGroupKey``).
    ///   - body: the edits, on a builder over the latest value.
    /// - Returns: the report: the numbered transaction and the values
    ///   before and after.
    /// - Throws: what `body` throws (nothing is committed; a value nested
    ///   deeper than ``Value/maximumNesting`` is ``ApplyError/nestingTooDeep(table:id:field:depth:limit:)``
    ///   from the builder, ``ApplyError/metadataTooDeep(key:depth:limit:)`` in `metadata`);
    ///   ``StoreError/duplicateTransaction(id:)`` when `id` is already in
    ///   the history; ``StoreError`` when the write fails (nothing is
    ///   committed and ``current`` is unchanged) or the store is closed.
    @discardableResult
    public func transact(
        id: UUID? = nil,
        message: String = "",
        significance: Significance = .normal,
        metadata: [Key: Value] = [:],
        _ body: sending (inout TransactionBuilder) throws -> Void
    ) async throws -> CommitReport {
        try await admitWriter()
        if let id { try checkNew(id) }
        var builder = TransactionBuilder(on: head)
        try body(&builder)
        let transaction = builder.transaction(
            id: id ?? UUID(),
            message: message,
            significance: significance,
            metadata: metadata
        )
        try transaction.checkMetadataNesting()
        var next = builder.database
        next.basis = transaction.t
        return try await append(transaction, producing: next)
    }

    /// Commits a prepared transaction, renumbered to follow the latest
    /// value; it keeps its ID, so that after an error ``transaction(id:)``
    /// tells whether it landed. Its changes are checked against that value
    /// (``ApplyError`` when something it replaced has changed). Ends as
    /// ``transact(id:message:significance:metadata:_:)`` does.
    /// - Throws: ``StoreError/duplicateTransaction(id:)`` when its ID is
    ///   already in the history; ``ApplyError/nestingTooDeep(table:id:field:depth:limit:)``
    ///   or ``ApplyError/metadataTooDeep(key:depth:limit:)`` for a value
    ///   nested deeper than a store reads back.
    @discardableResult
    public func commit(_ prepared: Transaction) async throws -> CommitReport {
        try await admitWriter()
        return try await appendAdmitted(prepared)
    }

    /// ``commit(_:)`` once ``admitWriter(peer:)`` returned: checks,
    /// numbers and applies `prepared` on ``head`` and appends it, without
    /// suspending before the append, so that what the caller read from
    /// ``head`` since it was admitted (a revert's diff, the transaction it
    /// inverts) is what the transaction lands on.
    func appendAdmitted(_ prepared: Transaction) async throws -> CommitReport {
        try checkNew(prepared.id)
        var transaction = prepared.numbered(onto: head)
        // As the log reads it back (it writes no table without changes).
        transaction.indexChanges = transaction.indexChanges.filter { !$0.value.isEmpty }
        try transaction.checkNesting()
        let next = try apply(head, transaction)
        return try await append(transaction, producing: next)
    }

    /// The value `transaction` would produce on ``current``, without
    /// committing it. O(changes · log16 n).
    public nonisolated func with(_ transaction: Transaction) throws -> Database {
        let base = current
        return try apply(base, transaction.numbered(onto: base))
    }

    func checkWritable() throws {
        guard log != nil, !closing else { throw StoreError.closed }
        if options.readOnly { throw StoreError.readOnly(path: path) }
        if let failure { throw StoreError.needsReopen(failure) }
    }

    /// Refuses an ID already in the history (durable or in flight).
    private func checkNew(_ id: UUID) throws {
        if history.t(of: id) != nil { throw StoreError.duplicateTransaction(id: id) }
    }

    /// Waits while a truncate settles the commits in flight (so it never
    /// cuts under one), then checks the store is writable.
    func admitWriter(peer: Bool = false) async throws {
        // Peers' turns hold one of the store's writers for a turn's length
        // in all: peers that keep losing to one another cannot chain turns
        // into a wait without end.
        var heldSince: ContinuousClock.Instant?
        while true {
            if !peer, peerTurn != nil {
                let since = heldSince ?? .now
                heldSince = since
                if ContinuousClock.now - since < Self.peerTurnLength {
                    await withCheckedContinuation { heldWriters.append($0) }
                    continue
                }
            }
            if truncations > 0 {
                await withCheckedContinuation { heldWriters.append($0) }
                continue
            }
            // A rollover syncs the old segment's tail itself. A group sync
            // of that file running meanwhile could take the only report of a
            // write error (the kernel reports one per file), and the
            // rollover would publish what never reached the disk: it waits.
            if log?.needsNewSegment == true, let running = syncTask {
                await running.value
                continue
            }
            break
        }
        try checkWritable()
    }

    /// Holds new writers while `body` runs (see ``truncate(after:)``).
    func holdingWriters<T>(_ body: () async throws -> T) async rethrows -> T {
        truncations += 1
        defer {
            truncations -= 1
            releaseHeldWriters()
        }
        return try await body()
    }

    /// Lets the held writers go on once nothing holds them.
    func releaseHeldWriters() {
        // Each writer checks again what holds it.
        guard truncations == 0 else { return }
        let held = heldWriters
        heldWriters = []
        for writer in held { writer.resume() }
    }

    /// Appends, waits for durability per the policy, publishes.
    func append(_ transaction: Transaction, producing next: Database) async throws -> CommitReport {
        guard let log else { throw StoreError.closed }
        let payload = BinaryCodec.encode(transaction)
        guard payload.count <= LogFormat.maximumPayloadSize else {
            throw StoreError.transactionTooLarge(bytes: payload.count, limit: LogFormat.maximumPayloadSize)
        }
        let position: TransactionLog.Position
        do {
            if log.needsNewSegment {
                do {
                    try log.syncTail()
                } catch let error as FileSystemError {
                    // The old segment's tail may not have reached the disk:
                    // the commits waiting for it are not durable.
                    if !unpublished.isEmpty { rollBack(after: current.basis, error) }
                    throw error
                }
                // Every commit appended so far is durable now: published
                // here, so that no later failure (creating the segment, a
                // group sync of the old one) can roll back what is on disk.
                if let last = unpublished.last { publish(through: last.serial) }
                try log.startSegment()
            }
            position = try log.append(payload, digest: BinaryCodec.digest(transaction.summary))
        } catch let error as FileSystemError {
            throw StoreError.writeFailed(error)
        }
        let report = CommitReport(transaction: transaction, before: head, after: next)
        history.append(transaction, at: position)
        // Freeing a small transaction costs less than handing it over.
        let evicted = history.takeEvicted()
        if evicted.contains(where: { $0.changeCount >= Self.releasedOffActor }) { Self.releaseOffActor(evicted) }
        head = next
        appendedCount += 1
        let serial = appendedCount
        unpublished.append((report, serial))
        switch options.durability {
        case .none:
            publish(through: serial)
        case .everyCommit:
            do {
                syncCount += 1
                try log.sync()
            } catch let error as FileSystemError {
                rollBack(after: current.basis, error)
                throw StoreError.writeFailed(error)
            }
            publish(through: serial)
        case .grouped:
            try await waitUntilDurable(serial, epoch: epoch)
        }
        considerSnapshot()
        return report
    }

    /// Group commit: one sync covers every record appended before it
    /// started; commits arriving meanwhile wait for the next one.
    private func waitUntilDurable(_ serial: Int, epoch myEpoch: Int) async throws {
        while true {
            if epoch != myEpoch {
                if serial <= publishedAtRollback[myEpoch] { return }
                throw lastWriteError.map { StoreError.writeFailed($0) } ?? StoreError.closed
            }
            if publishedCount >= serial { return }
            await groupSync()
        }
    }

    /// Waits for the running group sync, or starts one covering every
    /// record appended so far and waits for it.
    private func groupSync() async {
        if let syncTask {
            await syncTask.value
            return
        }
        syncCount += 1
        let task = Task {
            await self.gatherWriters()
            // The sync holds the segment file itself: a rollover or a cut
            // meanwhile lets the log's reference go, not the descriptor. A
            // rollover syncs the old segment's tail, so syncing the segment
            // active now covers every record appended so far.
            let file = self.log?.activeFile
            let target = self.appendedCount
            // Off the pool: `fdatasync` blocks, and a blocked pool thread
            // would stall the writers whose appends the next sync gathers.
            let result = await self.syncQueue.run { () throws -> Void in try file?.file.sync() }
            self.finishSync(result, target: target)
        }
        syncTask = task
        await task.value
    }

    /// Lets the writers that the last sync answered append before the next
    /// sync starts, so that it covers them too. Without this the sync
    /// starts as soon as the first writer left waiting wakes, covering only
    /// the writers that appended during the last sync: writers split into
    /// two cohorts that take turns (8 writers, exactly 4 commits per sync).
    ///
    /// Yields the actor until as many commits wait as there were writers
    /// in the last round (those its sync answered and those that arrived
    /// during it), for a few rounds and microseconds at most: a lone writer
    /// never yields, and when a writer goes away the next estimate forgets
    /// it. Nothing to gather while writers are held (a rollover, a cut, a
    /// close).
    private func gatherWriters() async {
        let deadline = ContinuousClock.now + Self.gatherTime
        for _ in 0..<Self.gatherRounds {
            guard unpublished.count < expectedWriters, log?.needsNewSegment != true, truncations == 0, !closing,
                ContinuousClock.now < deadline
            else { return }
            await Task.yield()
        }
    }

    /// The most a group sync waits for writers to append: a fraction of a sync.
    private static let gatherRounds = 16
    private static let gatherTime = Duration.microseconds(100)

    /// Waits until transaction `t`, appended, is published or rolled back.
    func waitForPublication(of t: Int64) async {
        while current.basis < t, head.basis >= t {
            if let syncTask {
                await syncTask.value
            } else if !unpublished.isEmpty {
                await groupSync()
            } else {
                return
            }
        }
    }

    /// Answers every commit appended so far: syncs and publishes them (or
    /// rolls them back when a sync fails), and waits for the sync running.
    func settleAppended() async {
        while !unpublished.isEmpty { await groupSync() }
        while let task = syncTask { await task.value }
    }

    /// Publishes what a group sync covered. Appends after it started have
    /// higher serials; a rollback meanwhile removed the ones it covered.
    private func finishSync(_ result: Result<Void, any Error>, target: Int) {
        syncTask = nil
        // The writers of this round: those it covers and those already waiting for the next.
        expectedWriters = max(unpublished.count, 1)
        switch result {
        case .success: publish(through: target)
        case .failure(let error):
            let error =
                error as? FileSystemError ?? FileSystemError(operation: "sync", path: path, code: EIO)
            rollBack(after: current.basis, error)
        }
    }

    /// Drops every appended transaction after `t` (the durable value):
    /// the log is cut back and the head returns to `current`; the commits
    /// waiting for them throw.
    func rollBack(after t: Int64, _ error: FileSystemError) {
        lastWriteError = error
        publishedAtRollback.append(publishedCount)
        epoch += 1
        let keep = Int(t)
        if keep < history.count, let log {
            do {
                try log.truncate(from: history.positions[keep], sequence: t + 1, sync: false)
                // Best effort: the disk is failing, and a cut it does not
                // keep only brings back, after a crash, a commit that threw
                // (see `transact`: ask `transaction(id:)`).
                try? log.sync()
            } catch {
                failure = error as? FileSystemError ?? FileSystemError(operation: "truncate", path: path, code: EIO)
            }
        }
        history.removeAll(after: t)
        runIndex.removeAll(after: t)
        unpublished.removeAll { $0.report.transaction.t > t }
        head = current
    }

    /// Publishes every appended commit up to append serial `serial`, in order.
    private func publish(through serial: Int) {
        let previous = current.basis
        while let first = unpublished.first, first.serial <= serial {
            unpublished.removeFirst()
            publishedCount = first.serial
            let report = first.report
            setCurrent(report.after)
            let changeCount = report.transaction.changeCount
            checkpoints.consider(report.after, changeCount: changeCount)
            valueSize.changesSince += changeCount
            for feed in valueFeeds.values { feed.yield(report.after) }
            for feed in reportFeeds.values { feed.yield(report) }
            notifyObservers(of: report)
        }
        if current.basis != previous { for feed in basisFeeds.values { feed.yield(current.basis) } }
        applyMemoryBudget()
        measureCheckpoints()
        scheduleCompaction(from: previous, to: current.basis)
    }

    func setCurrent(_ value: Database) {
        published.withLock { $0 = value }
    }

    // MARK: Closing

    /// Lets every commit already appended finish (synced, published,
    /// returned to its caller), waits for background snapshots and
    /// compaction, stops measurements of the value, syncs the log, seals
    /// its last segment when a snapshot asked for that (a new, empty
    /// segment then follows it, so that the next open knows the records
    /// by the sealed segment's summary) and releases the lock. Commits
    /// that arrive once closing has begun throw ``StoreError/closed`` and
    /// are not committed; reads of ``current`` keep working.
    public func close() async throws {
        closing = true
        // A measurement started before `closing` (one walks the whole value
        // after an open) would otherwise go on using a core, and hold the
        // value, after close returns; it stops early instead, and the
        // reports of measurements do nothing once closing.
        measurementsStopped.withLock { $0 = true }
        await settleAppended()
        while let task = snapshotTask { await task.value }
        await compactionSettled()
        guard let log else { return }
        defer {
            log.close()
            self.log = nil
            directoryLock?.release()
            for feed in valueFeeds.values { feed.finish() }
            for feed in reportFeeds.values { feed.finish() }
            for feed in basisFeeds.values { feed.finish() }
            valueFeeds = [:]
            reportFeeds = [:]
            basisFeeds = [:]
            finishObservers()
        }
        if failure == nil, !options.readOnly {
            do {
                // Best effort: zeros left reserved read as the end at open.
                try? log.trimReserved()
                try log.sync()
                // A later open then knows every transaction through here
                // must be in the log (a deleted segment is not a clean end).
                let t = Int64(history.count)
                try log.updateManifest { $0.durableThrough = max($0.durableThrough, t) }
                // A seal a snapshot asked for, which no commit carried out:
                // the next open then knows those records by their summary
                // instead of reading them. Best effort, once all is durable:
                // a seal cut short is a rollover cut short, which open
                // handles (the new segment is not yet in the manifest).
                try? log.sealIfRequested()
            } catch let error as FileSystemError {
                throw StoreError.writeFailed(error)
            }
        }
    }
}

extension Transaction {
    /// This transaction numbered to follow `base` (basis and t; nothing
    /// else changes): how a prepared transaction joins the history.
    func numbered(onto base: Database) -> Transaction {
        var numbered = self
        numbered.basis = base.basis
        numbered.t = base.basis + 1
        return numbered
    }
}
