import Foundation
import Synchronization

extension Store {
    /// Writes a snapshot of ``current`` now and prunes old ones. Runs as the
    /// store's one snapshot task, so ``truncate(after:)`` and ``close()``
    /// wait for it like for a background one.
    /// - Returns: the snapshot's file name and size in bytes.
    /// - Throws: ``StoreError/closed`` after ``close()``, ``StoreError/readOnly(path:)``
    ///   on a read-only store; `FileSystemError`
    ///   when the file cannot be written (a full disk; the snapshot
    ///   directory removed or replaced since the store opened, ESTALE), or
    ///   a compression error. Nothing is lost: the log holds everything,
    ///   and a later snapshot tries again.
    @discardableResult
    public func snapshot() async throws -> (name: String, size: Int) {
        try await writeSnapshot { $0.current }
    }

    /// Writes a snapshot of the value `choose` picks (a durable value of
    /// this history) once no other snapshot task runs, and waits for it.
    func writeSnapshot(of choose: (isolated Store) throws -> Database) async throws -> (name: String, size: Int) {
        try checkWritable()
        while let task = snapshotTask { await task.value }
        try checkWritable()
        let value = try choose(self)
        let basisID = try snapshotBasisID(value)
        let outcome = SnapshotOutcome()
        // Not kept here: this frame ends on the actor, after the commits
        // made while the snapshot was written.
        startSnapshot(consume value, basisID: basisID, outcome: outcome)
        while let task = snapshotTask { await task.value }
        return try outcome.result.withLock { $0 ?? .failure(StoreError.closed) }.get()
    }

    /// The result of one snapshot task, for the caller that asked for it.
    final class SnapshotOutcome: Sendable {
        let result = Mutex<Result<(name: String, size: Int), any Error>?>(nil)
    }

    /// Writes `value`'s snapshot off the actor, then records it; the store
    /// tracks the task (`snapshotTask`) until both are done.
    func startSnapshot(_ value: Database, basisID: UUID, outcome: SnapshotOutcome? = nil) {
        // The records this snapshot covers then end in a sealed segment,
        // which open knows by its summary instead of reading it (not when
        // later commits are already in it: open reads it for them anyway).
        if let log, log.nextSequence - 1 == value.basis { log.requestSeal(atLeast: LogFormat.sealAtSnapshot) }
        // A level outside zstd's range would fail every snapshot (the
        // background ones silently, each after encoding the whole value):
        // the nearest level zstd has instead.
        let levels = ZstdCompressor.levels
        let level = min(max(options.compressionLevel, levels.lowerBound), levels.upperBound)
        let (directory, fileSystem, identity) = (snapshotDirectory, options.fileSystem, snapshotDirectoryIdentity)
        let queue = snapshotQueue
        let basis = value.basis
        // The value is let go of on the snapshot's thread once written: by
        // then the store may have moved far on, and freeing what only this
        // value still holds is long work for a cooperative thread.
        let held = Handoff(value)
        // The task holds the store's lock, not the store: a store let go of
        // meanwhile is freed, and its lock released once the file is
        // written (an open of the store waits for that, see `StoreLock`).
        let lock = directoryLock
        snapshotTask = Task { [weak self] in
            let result = await queue.run {
                guard let value = held.take() else { preconditionFailure("a snapshot's value is taken once") }
                return try SnapshotFile.write(
                    value,
                    basisID: basisID,
                    to: directory,
                    fileSystem: fileSystem,
                    level: level,
                    identity: identity
                )
            }
            await self?.snapshotFinished(result, basis: basis, basisID: basisID, outcome: outcome)
            withExtendedLifetime(lock) {}
        }
    }

    /// Records what the snapshot task wrote, for whoever asked for it.
    private func snapshotFinished(
        _ result: Result<(name: String, size: Int), any Error>,
        basis: Int64,
        basisID: UUID,
        outcome: SnapshotOutcome?
    ) {
        if case .success(let written) = result {
            snapshotWritten(basis: basis, basisID: basisID, size: written.size)
        }
        outcome?.result.withLock { $0 = result }
        snapshotTask = nil
    }

    /// The value stored in the snapshot with basis `basis`, read from disk
    /// and checked. O(snapshot size).
    /// - Throws: ``StoreError/noSnapshot(basis:)`` when there is none;
    ///   ``StoreError/corruptSnapshot(file:reason:)`` when it is damaged;
    ///   ``StoreError/closed`` after ``close()`` (the directory is no
    ///   longer the store's: another process may have rewritten it).
    ///   A snapshot whose file is gone since the store listed it (removed
    ///   by the writer of a read-only store), or now holds a value of
    ///   another history (the writer cut the history and wrote a snapshot
    ///   of its new t), is ``StoreError/noSnapshot(basis:)`` too, and no
    ///   longer listed; so is one an as-of found damaged (see
    ///   ``database(asOf:)``).
    public func database(inSnapshot basis: Int64) throws -> Database {
        guard log != nil else { throw StoreError.closed }
        guard snapshotSizes[basis] != nil else { throw StoreError.noSnapshot(basis: basis) }
        let (directory, fileSystem) = (snapshotDirectory, options.fileSystem)
        let read: (Database, basisID: UUID?)
        do {
            read = try rebuildCosts.timingSnapshotRead {
                let (value, size, basisID) = try StoreError.mappingFormat {
                    try SnapshotFile.read(
                        SnapshotFile.name(basis: basis),
                        in: directory,
                        fileSystem: fileSystem
                    )
                }
                return ((value, basisID), size)
            }.0
        } catch let error as FileSystemError where error.code == ENOENT {
            forgetSnapshot(basis)
            throw StoreError.noSnapshot(basis: basis)
        }
        // A version 1 file names no transaction: only open loads one.
        if let basisID = read.basisID, basisID != history.id(of: basis) {
            forgetSnapshot(basis)
            throw StoreError.noSnapshot(basis: basis)
        }
        return read.0
    }

    /// Takes the snapshot with basis `basis` off the list of rebuild starts.
    func forgetSnapshot(_ basis: Int64) {
        snapshotSizes[basis] = nil
        if basis == lastSnapshotBasis { lastSnapshotBasis = snapshotSizes.keys.max() ?? 0 }
    }

    /// The log and snapshot figures, without memory (O(1) but for the
    /// snapshot list).
    public var statistics: StoreStatistics { statistics(measuringMemory: false) }

    /// The log and snapshot figures, and with `measuringMemory` what the
    /// store holds in memory (see ``StoreMemory``; O(distinct nodes held),
    /// about 100 ms per million records).
    public func statistics(measuringMemory: Bool) -> StoreStatistics {
        StoreStatistics(
            transactionCount: Int(current.basis),
            logBytes: log?.byteCount ?? 0,
            lastSnapshotBasis: lastSnapshotBasis,
            logBytesSinceSnapshot: logBytesSinceSnapshot,
            syncCount: syncCount,
            snapshotBytes: snapshotSizes.values.reduce(0, +),
            snapshotBases: snapshotSizes.keys.sorted(),
            checkpointCount: checkpoints.values.count,
            compactedChanges: runIndex.changeCount,
            estimatedValueBytes: valueSize.estimate(records: current.recordCount),
            memoryBudget: memoryBudgetBytes,
            engineBytes: engineBytes,
            estimatedOpen: .nanoseconds(
                Int64(rebuildCosts.rebuild(snapshotBytes: lastSnapshotSize, logBytes: logBytesSinceSnapshot))
            ),
            rebuildCosts: rebuildCosts,
            memory: measuringMemory
                ? StoreMemory(
                    current: current,
                    checkpoints: checkpoints.values,
                    cached: history.cachedTransactions,
                    blocks: runIndex.builtBlocks
                )
                : nil
        )
    }

    /// What open would read: the newest snapshot's bytes (0: none) and the
    /// log bytes after it.
    private var lastSnapshotSize: Int { snapshotSizes[lastSnapshotBasis] ?? 0 }
    /// Measured from the history itself, so it holds across reopen and truncate.
    private var logBytesSinceSnapshot: Int {
        history.logBytes(from: min(lastSnapshotBasis, Int64(history.count)), to: Int64(history.count))
    }

    /// The ID of `value` (a published value)'s basis transaction, for the
    /// snapshot's header, once the log is durable through it: a snapshot on
    /// disk must never reach past the log. Only `.none` publishes before a
    /// sync; under the other policies a published value is durable, and a
    /// sync here would race the group sync for the kernel's one report of
    /// a write error (taking it from the sync whose commits it concerns).
    func snapshotBasisID(_ value: Database) throws -> UUID {
        if options.durability == .none {
            do {
                try log?.sync()
            } catch let error as FileSystemError {
                throw StoreError.writeFailed(error)
            }
        }
        return history.id(of: value.basis)!  // a published value's basis is in the history
    }

    /// Starts a background snapshot when the policy says one is due.
    func considerSnapshot() {
        guard snapshotTask == nil, log != nil, !closing else { return }
        let value = current
        let dueByCount = options.snapshotEveryTransactions.map { value.basis - lastSnapshotBasis >= Int64($0) } ?? false
        let dueBySize = options.snapshotEveryLogBytes.map { logBytesSinceSnapshot >= $0 } ?? false
        let dueByCost =
            options.rebuildBudget.map { budget in
                rebuildCosts.snapshotDue(
                    budget: budget.nanoseconds,
                    snapshotBytes: lastSnapshotSize,
                    logBytes: logBytesSinceSnapshot
                )
            } ?? false
        guard dueByCount || dueBySize || dueByCost, value.basis > lastSnapshotBasis,
            let basisID = try? snapshotBasisID(value)
        else { return }
        // A failed background snapshot costs only open time: the log holds
        // everything. The next commit tries again.
        startSnapshot(value, basisID: basisID)
    }

    /// Records a new snapshot and removes all but the newest kept ones.
    func snapshotWritten(basis: Int64, basisID: UUID, size: Int) {
        // A snapshot of a history since cut (and perhaps grown again), or
        // finishing after close, is removed: it is not this store's.
        let current = history.id(of: basis) == basisID
        guard current, log != nil else {
            try? options.fileSystem.remove(snapshotDirectory + "/" + SnapshotFile.name(basis: basis))
            return
        }
        snapshotSizes[basis] = size
        lastSnapshotBasis = max(lastSnapshotBasis, basis)
        pruneSnapshots()
    }

    /// Removes every snapshot older than the newest ``StoreOptions/snapshotsKept``
    /// sound ones. After each snapshot, and at open: a snapshot a store let
    /// go of finished after it was freed was never pruned. O(snapshot files).
    func pruneSnapshots() {
        let fileSystem = options.fileSystem
        guard let names = try? fileSystem.contents(ofDirectory: snapshotDirectory) else { return }
        // Only this history's: a file named past it (a stray, another
        // store's) is neither kept in place of a snapshot nor removed.
        let reached = Int64(history.count)
        let snapshots = names.compactMap { name in SnapshotFile.basis(ofName: name).map { (basis: $0, name: name) } }
            .filter { $0.basis <= reached }
            .sorted { $0.basis > $1.basis }
        // The newest sound ones stay (those open or this store checked);
        // everything older than the oldest of them goes, damaged or not.
        let kept = snapshots.filter { snapshotSizes[$0.basis] != nil }.prefix(max(1, options.snapshotsKept))
        guard let oldestKept = kept.last?.basis else { return }
        for old in snapshots where old.basis < oldestKept {
            let path = snapshotDirectory + "/" + old.name
            try? fileSystem.remove(path)
            // One that could not be removed is still a start for as-of.
            if !fileSystem.exists(path) { snapshotSizes[old.basis] = nil }
        }
    }
}
