import Foundation

/// Where a rebuild of a past value starts.
public enum RebuildStart: Sendable, Hashable {
    /// The current value, walked back with inverses.
    case current
    /// The empty database (t 0).
    case empty
    /// A past value kept in memory, with its basis.
    case checkpoint(Int64)
    /// A snapshot on disk, with its basis.
    case snapshot(Int64)

    /// The kind of start without its basis: "current", "empty",
    /// "checkpoint" or "snapshot".
    public var kind: String {
        switch self {
        case .current: return "current"
        case .empty: return "empty"
        case .checkpoint: return "checkpoint"
        case .snapshot: return "snapshot"
        }
    }
}

/// How ``Store/database(asOf:)`` will rebuild a value: from which start,
/// through how many pieces, at what estimated cost.
public struct RebuildPlan: Sendable, Hashable {
    /// The start chosen.
    public var start: RebuildStart
    /// Its basis.
    public var startBasis: Int64
    /// Pieces (pre-combined blocks and single transactions) flattened into
    /// the one transaction applied.
    public var pieces: Int
    /// The cost model's estimate, in log bytes applied (a snapshot's bytes
    /// weighted by what reading one costs against replaying a log byte, as
    /// measured by the store).
    public var estimatedCost: Double
}

extension Store {
    /// The plan ``database(asOf:)`` follows for `t`: the start with the
    /// smallest estimated cost among the current value, the empty one, the
    /// checkpoints on either side of `t` and the snapshots on disk. O(log n).
    /// - Throws: ``StoreError/outOfRange(t:current:)``; ``StoreError/closed``
    ///   after ``close()``.
    public func rebuildPlan(for t: Int64) throws -> RebuildPlan {
        // Closed, the store no longer holds its directory: whatever t.
        guard log != nil else { throw StoreError.closed }
        let now = current.basis
        guard t >= 0, t <= now else { throw StoreError.outOfRange(t: t, current: now) }
        func plan(_ start: RebuildStart, _ basis: Int64, extra: Double = 0) -> RebuildPlan {
            let (low, high) = (min(basis, t), max(basis, t))
            return RebuildPlan(
                start: start,
                startBasis: basis,
                pieces: RunIndex.pieces(from: low, to: high).count,
                estimatedCost: Double(history.logBytes(from: low, to: high)) + extra
            )
        }
        var candidates = [plan(.current, now), plan(.empty, 0)]
        let (below, above) = checkpoints.neighbours(of: t)
        for checkpoint in [below, above].compactMap({ $0 }) {
            candidates.append(plan(.checkpoint(checkpoint.basis), checkpoint.basis))
        }
        for (basis, size) in snapshotSizes where basis <= now {
            candidates.append(plan(.snapshot(basis), basis, extra: Double(size) * rebuildCosts.snapshotByteWeight))
        }
        return candidates.min { $0.estimatedCost < $1.estimatedCost }!
    }

    /// The value after transaction `t` (0: the empty database).
    ///
    /// Two steps whatever the distance: from the cheapest start (see
    /// ``rebuildPlan(for:)``), the run between it and `t` is combined into
    /// one transaction from pre-combined blocks (O(log n) pieces) and
    /// applied once, inverted when walking back. The first query over a
    /// stretch of history builds its blocks (reading that stretch once,
    /// O(run)); later ones reuse them.
    ///
    /// The older snapshots on disk are starts too: open lists those whose
    /// header names a transaction of this history. A listed snapshot that
    /// no longer reads back as a value of this history — gone (a read-only
    /// store's writer keeps only its newest few), replaced (the writer cut
    /// the history and grew it again), damaged or unreadable — is
    /// forgotten, and the value is rebuilt from another start.
    /// - Throws: ``StoreError/outOfRange(t:current:)``; ``StoreError`` when
    ///   a log record or compaction block read from disk is damaged
    ///   (``StoreError/historyChanged(segment:offset:reason:)`` when a
    ///   read-only store's writer cut the history since it opened);
    ///   ``StoreError/closed`` after ``close()``, whatever `t`.
    public func database(asOf t: Int64) throws -> Database {
        while true {
            let plan = try rebuildPlan(for: t)
            let base: Database
            do {
                base = try startValue(plan.start)
            } catch  where plan.start == .snapshot(plan.startBasis) {
                // Gone, replaced or damaged since it was listed, or not
                // readable (`verify()` reports the file): the value is
                // rebuilt from another start; the log holds every change.
                forgetSnapshot(plan.startBasis)
                continue
            }
            return try rebuild(t, from: consume base, following: plan)
        }
    }

    /// `base` is taken: a start read from a snapshot is held nowhere else,
    /// so the run changes its nodes in place instead of copying its paths
    /// (and freeing the copied ones after).
    private func rebuild(_ t: Int64, from base: consuming Database, following plan: RebuildPlan) throws -> Database {
        if plan.startBasis == t { return base }
        let (low, high) = (min(plan.startBasis, t), max(plan.startBasis, t))
        guard let log else { throw StoreError.closed }
        defer { Self.releaseOffActor(runIndex.takeEvicted()) }
        guard
            let combined = try runIndex.combined(
                from: low,
                to: high,
                source: runSource(log)
            )
        else { return base }
        var value = consume base
        // As `apply` does: whether the run applies depends on the whole value.
        value._reads?.noteEverything()
        try value._apply(combined, inverted: plan.startBasis > t)
        // A run of hundreds of thousands of changes takes tens of
        // milliseconds to free: on the upkeep thread, not in this call.
        Self.releaseOffActor([consume combined])
        return value
    }

    private func runSource(_ log: TransactionLog) -> RunIndex.Source {
        RunIndex.Source(
            transactions: { range in try self.history.run(range, log: log) },
            id: { t in self.history.summary(t).id }
        )
    }

    /// Merges the log into blocks as it grows: once the commits published
    /// between `previous` and `t` complete a block of 256, 4,096 or 65,536
    /// transactions, a compaction round builds it (from the smaller ones,
    /// mostly in memory) and writes its file. Only gathering the parts and
    /// installing the result run on the actor; flattening, compression and
    /// file writes run on a thread of their own, so commits do not wait
    /// for them. A store reopened later finds every full block on disk.
    func scheduleCompaction(from previous: Int64, to t: Int64) {
        let first = RunIndex.blockSize(RunIndex.persistedLevel)
        guard t / first > previous / first else { return }
        compactionDue = true
        startCompaction()
    }

    /// Starts a round for the blocks completed since the last one, unless a
    /// round is running (it starts the next when it ends).
    private func startCompaction() {
        guard compactionDue, !compacting, !closing, let log else { return }
        compactionDue = false
        let t = current.basis
        // A cut since the last round leaves its blocks to be built again.
        let from = min(compactedThrough, t)
        compactedThrough = t
        // Cached transactions are taken decoded; the others are read
        // (and decoded) off the actor from where their records are.
        let source = RunIndex.PlanSource(
            transaction: { t in
                if let cached = self.history.cachedTransaction(t) { return .transaction(cached) }
                let position = self.history.position(t)
                return .logged(
                    t: t,
                    id: self.history.summary(t).id,
                    path: log.path(ofSegment: position.segment),
                    offset: position.offset,
                    size: position.size
                )
            },
            id: { t in self.history.summary(t).id }
        )
        var plans: [RunIndex.BlockPlan] = []
        for level in RunIndex.persistedLevel..<RunIndex.levels {
            let size = RunIndex.blockSize(level)
            for index in (from / size)..<(t / size) {
                if let plan = runIndex.plan(level: level, index: index, source: source) { plans.append(plan) }
            }
        }
        guard !plans.isEmpty else { return }
        let (files, fileSystem, generation) = (runIndex.files, options.fileSystem, runIndex.generation)
        compacting = true
        // Handed to the thread directly, reporting back through a task
        // created there: a task created here would run its first part on
        // the actor, ahead of the next commit.
        // The round holds the store's lock, not the store: a store let go
        // of meanwhile is freed, its round stops at the next block and
        // removes what it wrote (nothing would install it; a reopen builds
        // the blocks when needed), and then the lock is released (an open
        // of the store waits for that).
        let lock = directoryLock
        Self.compactionQueue.async { [plans, weak self] in
            let made = RunIndex.build(plans, files: files, fileSystem: fileSystem, generation: generation) {
                self == nil
            }
            guard let self else {
                for block in made.blocks { block.temporary.map { files?.discard($0) } }
                return withExtendedLifetime(lock) {}
            }
            let built = Handoff(made)
            Task { await self.finishCompaction(built, from: from) }
        }
    }

    /// Builds every compaction block the history completes that is not
    /// built yet, and waits for it. Blocks completed while the store is
    /// open are built as commits complete them; those completed before it
    /// opened are otherwise built when an as-of first needs them. After
    /// this, an as-of anywhere in the history starts from built blocks.
    /// O(history) the first time; little more than a check of each block
    /// once they are built.
    /// Block files that no longer check (damage on disk) are removed first,
    /// so that they are built again.
    /// - Throws: ``StoreError/closed``, ``StoreError/readOnly(path:)``.
    public func compact() async throws {
        try checkWritable()
        removeDamagedBlocks()
        compactedThrough = 0
        compactionDue = true
        startCompaction()
        await compactionSettled()
    }

    /// Waits until no compaction round runs (none starts once closing).
    func compactionSettled() async {
        while compacting {
            await withCheckedContinuation { compactionSettledWaiters.append($0) }
        }
    }

    /// Installs a round's blocks and starts the next round when more blocks
    /// completed meanwhile. The same blocks are planned again when the
    /// history was cut meanwhile (what is left of it plans anew), or when
    /// block files the round relied on did not read back (removed now, so
    /// the next round builds them).
    private func finishCompaction(_ handoff: Handoff<RunIndex.Built>, from: Int64) {
        compacting = false
        guard let built = handoff.take() else { preconditionFailure("a compaction round is reported once") }
        if !runIndex.install(built) || !built.unreadable.isEmpty {
            compactedThrough = min(compactedThrough, from)
            compactionDue = true
        }
        // The blocks not kept (the round's parts, those over the budget)
        // are freed on the upkeep thread: freeing a round made of large
        // imports held the actor for hundreds of milliseconds.
        Self.releaseOffActor([consume built])
        let evicted = runIndex.takeEvicted()
        if !evicted.isEmpty { Self.releaseOffActor(evicted) }
        startCompaction()
        if !compacting {
            let waiters = compactionSettledWaiters
            compactionSettledWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }

    /// One thread for compaction, below the writers' priority: flattening
    /// and compressing a block takes milliseconds to seconds, which would
    /// hold one of the cooperative pool's few threads.
    private static let compactionQueue = BackgroundQueue(name: "strata.store.compaction")

    /// Measures, off the actor, what the checkpoints kept since the last
    /// measurement cost beside their neighbours; the checkpoints thin when
    /// over their byte limit. One measurement at a time; each starts the
    /// next when more are due.
    ///
    /// The job is handed to the thread directly and reports back through a
    /// task created there: creating a task on the actor costs the commit
    /// that does it more than the commit itself.
    func measureCheckpoints() {
        let dropped = checkpoints.takeDropped()
        if !dropped.isEmpty { Self.releaseOffActor(dropped) }
        guard !measuringCheckpoints, !closing, checkpoints.needsMeasuring else { return }
        measuringCheckpoints = true
        let pending = checkpoints.takePendingMeasurements(current: current)
        let generation = checkpoints.generation
        // Held weakly: a store let go of is not kept alive (nor its lock
        // held) by a measurement waiting behind other stores' upkeep.
        Self.measuringQueue.async { [weak self] in
            guard self != nil else { return }
            let results = pending.map {
                ($0.index, Checkpoints.cost(of: $0.older, keptWith: $0.newer), $0.againstCurrent)
            }
            Task { [weak self] in await self?.checkpointsMeasured(results, generation: generation) }
        }
    }

    /// Nothing once the store is closing.
    private func checkpointsMeasured(
        _ results: [(index: Int, bytes: Int, againstCurrent: Bool)],
        generation: Int
    ) {
        measuringCheckpoints = false
        guard !closing else { return }
        checkpoints.measured(results, generation: generation)
        measureCheckpoints()
    }

    /// One thread for upkeep other than compaction (measuring checkpoints,
    /// freeing what the store let go of), below the writers' priority.
    static let upkeepQueue = BackgroundQueue(name: "strata.store.upkeep")

    /// One thread for measuring what checkpoints and the value cost, at
    /// the writers' priority: the memory budget acts on these figures, and
    /// under a busy writer a lowered thread fell thousands of checkpoints
    /// behind (each measurement is O(changes measured), short).
    static let measuringQueue = BackgroundQueue(name: "strata.store.measuring", lowered: false)

    /// Lets go of `values` on the upkeep thread: freeing what only they
    /// hold (a large transaction's records, a thinned checkpoint's nodes)
    /// takes time a commit would otherwise wait for.
    static func releaseOffActor<T: Sendable>(_ values: consuming [T]) {
        let moved = consume values
        guard !moved.isEmpty else { return }
        // Backpressure: a thread below the writers' priority falls behind a
        // caller that rebuilds past values in a loop, and what waits for it
        // is memory no budget counts (gigabytes). Past a short backlog the
        // caller frees its own garbage.
        guard upkeepQueue.backlog < maximumReleaseBacklog else { return }
        let parcel = Parcel(consume moved)
        upkeepQueue.async { parcel.drop() }
    }

    /// Releases waiting for the upkeep thread, past which the caller frees.
    static let maximumReleaseBacklog = 16

    private func startValue(_ start: RebuildStart) throws -> Database {
        switch start {
        case .current: return current
        case .empty: return Database()
        case .checkpoint(let basis):
            let (below, _) = checkpoints.neighbours(of: basis)
            guard let value = below, value.basis == basis else {
                throw StoreError.outOfRange(t: basis, current: current.basis)
            }
            return value
        case .snapshot(let basis):
            return try database(inSnapshot: basis)
        }
    }
}

extension Store {
    /// Removes every block file whose header or checksums do not hold.
    private func removeDamagedBlocks() {
        let directory = path + "/" + Self.blockDirectoryName
        let fileSystem = options.fileSystem
        guard let names = try? fileSystem.contents(ofDirectory: directory) else { return }
        for name in names {
            guard let (level, first) = BlockFile.parse(name) else { continue }
            let last = first + RunIndex.blockSize(level) - 1
            guard first >= 1, last <= current.basis else { continue }
            let file = directory + "/" + name
            let bytes = try? fileSystem.readWholeFile(file)
            let lastID = history.summary(last).id
            if !(bytes.map { BlockFile.isSound($0, level: level, first: first, last: last, lastID: lastID) } ?? false) {
                try? fileSystem.remove(file)
            }
        }
    }
}
