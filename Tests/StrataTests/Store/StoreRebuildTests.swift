import Foundation
import Strata
import Testing

@Suite("Store rebuild")
struct StoreRebuildTests {
    /// Every t's value, rebuilt, against the value the store published at t.
    static func checkAsOf(
        _ store: Store,
        _ values: [Database],
        _ ts: [Int64],
        _ context: String
    ) async throws -> Set<String> {
        var starts: Set<String> = []
        for t in ts {
            let plan = try await store.rebuildPlan(for: t)
            starts.insert(plan.start.kind)
            // At most 15 blocks per level at each end, plus single transactions at the ends.
            #expect(plan.pieces <= 2 * 15 * 4 + 2 * 15, "\(context) t \(t): \(plan.pieces) pieces")
            let rebuilt = try await store.database(asOf: t)
            #expect(rebuilt == values[Int(t)], "\(context) t \(t) from \(plan.start)")
        }
        return starts
    }

    @Test("as-of rebuilds equal the published values, from every kind of start", arguments: [UInt64(5), 6])
    func asOfMatchesHistory(seed: UInt64) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var random = SeededRandom(seed: seed)
        var options = testOptions()
        options.checkpointInterval = 7
        options.checkpointsKept = 6
        options.snapshotEveryTransactions = 150
        options.cachedTransactionChanges = seed == 6 ? 0 : 100_000
        var store = try await Store.open(at: path, options: options)
        var values = [store.current]
        for _ in 0..<700 {
            try await StoreTests.randomCommit(store, &random)
            values.append(store.current)
        }
        let now = Int64(values.count - 1)
        var ts: [Int64] = [0, 1, 15, 16, 17, 255, 256, 257, 511, 512, 513, now - 1, now]
        for _ in 0..<120 { ts.append(Int64(random.int(below: Int(now) + 1))) }
        let starts = try await Self.checkAsOf(store, values, ts, "seed \(seed)")
        try await store.snapshot()  // background ones may still be syncing; this one waits for them
        let statistics = await store.statistics
        #expect(statistics.checkpointCount > 0 && statistics.checkpointCount <= 6)
        #expect(statistics.compactedChanges > 0 && statistics.snapshotBytes > 0, "\(statistics)")
        let memory = try #require(await store.statistics(measuringMemory: true).memory)
        #expect(memory.compactionBlocks.total > 0 && memory.checkpoints.shared > 0, "\(memory)")
        #expect(starts.isSuperset(of: ["current", "empty", "checkpoint"]), "seed \(seed): \(starts)")
        // Blocks built by one query serve the next: the same answers again.
        _ = try await Self.checkAsOf(store, values, ts.shuffled(using: &random), "seed \(seed) again")

        // After a revert and a truncation the blocks and checkpoints past the cut are gone.
        try await store.revert(to: 100)
        values.append(store.current)
        try await store.truncate(after: 400)
        values.removeSubrange(401...)
        for _ in 0..<40 {
            try await StoreTests.randomCommit(store, &random)
            values.append(store.current)
        }
        let cutTs: [Int64] =
            [0, 255, 256, 300, 399, 400, 401, 420, 440] + (0..<40).map { _ in Int64(random.int(below: 441)) }
        _ = try await Self.checkAsOf(store, values, cutTs, "seed \(seed) after truncate")

        // Reopened: no checkpoints, snapshots on disk.
        try await store.close()
        store = try await Store.open(at: path, options: options)
        _ = try await Self.checkAsOf(store, values, cutTs, "seed \(seed) reopened")
        try await store.close()
    }

    @Test("a snapshot on disk is the start when it is the cheapest")
    func snapshotStart() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions()
        options.checkpointsKept = 0
        options.snapshotEveryTransactions = nil
        options.rebuildBudget = nil
        var store = try await Store.open(at: path, options: options)
        var values = [store.current]
        // Big transactions first, a snapshot, then as many again: the snapshot
        // sits far from both the empty value and the current one.
        for n in 0..<60 {
            try await store.transact { builder in
                for k in 0..<20 {
                    try builder.upsert(
                        ["n": .int(Int64(n)), "text": .string(String(repeating: "x", count: 200))],
                        id: RecordID(k),
                        into: "songs"
                    )
                }
            }
            values.append(store.current)
            if n == 29 { try await store.snapshot() }
        }
        try await store.close()
        store = try await Store.open(at: path, options: options)
        let plan = try await store.rebuildPlan(for: 30)
        #expect(plan.start == .snapshot(30))
        #expect(try await store.database(asOf: 30) == values[30])
        #expect(try await store.database(asOf: 25) == values[25])
        try await store.close()
    }

    @Test("memory statistics: checkpoints cost what their changes copied, shared bytes are counted once")
    func memoryAccounting() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions()
        options.checkpointInterval = 10
        options.snapshotEveryTransactions = nil
        options.rebuildBudget = nil
        let store = try await Store.open(at: path, options: options)
        try await store.transact { builder in
            for k in 0..<5_000 {
                try builder.insert(["title": .string("song \(k)"), "plays": .int(0)], id: RecordID(k), into: "songs")
            }
        }
        #expect(await store.statistics.memory == nil)
        for n in 0..<200 {
            try await store.transact { builder in
                try builder.update(RecordID(n * 7 % 5_000), in: "songs", [.set("plays", .int(Int64(n + 1)))])
            }
        }
        let memory = try #require(await store.statistics(measuringMemory: true).memory)
        // 5,000 records of a ~30-byte buffer each plus their trie nodes.
        #expect(memory.currentValue >= 5_000 * 60 && memory.currentValue <= 5_000 * 400, "\(memory)")
        // Every 10th of the 200 edits, and the 5,000-record import at t 1
        // (more changes than the interval's mark of 640).
        #expect(memory.checkpointCount == 21)
        // 200 single-record edits copy 200 short paths: far less than the value itself.
        #expect(memory.checkpoints.unique > 0 && memory.checkpoints.unique < memory.currentValue / 2, "\(memory)")
        #expect(memory.checkpoints.shared > memory.currentValue * 10, "21 checkpoints share the value: \(memory)")
        #expect(memory.cachedTransactions.total > 0)
        #expect(
            memory.total == memory.currentValue + memory.checkpoints.unique + memory.cachedTransactions.unique
                + memory.compactionBlocks.unique
        )
        try await store.close()
    }

    @Test("snapshots follow the rebuild budget: due when the estimated open exceeds it, not before")
    func snapshotPolicy() async throws {
        for (budget, expectSnapshot) in [(Duration.milliseconds(1), true), (.seconds(3_600), false)] {
            let path = temporaryStorePath()
            defer { removeStore(path) }
            var options = testOptions()
            options.rebuildBudget = budget
            options.snapshotEveryLogBytes = nil
            var store = try await Store.open(at: path, options: options)
            for n in 0..<300 {
                try await store.transact { builder in
                    try builder.upsert(
                        ["text": .string(String(repeating: "x", count: 200))],
                        id: RecordID(n),
                        into: "songs"
                    )
                }
            }
            // ~70 KB of log: ~5 ms to replay at the starting estimate of 75 ns
            // per byte. Under the 1 ms budget, a snapshot that finished just
            // now may have brought the estimate below it (snapshots are due
            // whenever it exceeds the budget).
            let during = await store.statistics
            #expect(
                during.estimatedOpen > .milliseconds(1) || (expectSnapshot && during.lastSnapshotBasis > 0),
                "budget \(budget): \(during)"
            )
            try await store.close()  // waits for a background snapshot
            store = try await Store.open(at: path, options: options)
            let statistics = await store.statistics
            #expect((statistics.lastSnapshotBasis > 0) == expectSnapshot, "budget \(budget): \(statistics)")
            try await store.close()
        }
    }

    @Test("rebuild costs: estimates follow measurements, and the policy's two regimes")
    func rebuildCosts() {
        var costs = RebuildCosts()
        let budget = 200e6
        // No snapshot yet: due once replaying the log would exceed the budget.
        #expect(!costs.snapshotDue(budget: budget, snapshotBytes: 0, logBytes: 1 << 20))
        #expect(costs.snapshotDue(budget: budget, snapshotBytes: 0, logBytes: 8 << 20))
        // A snapshot that alone takes longer than the budget to read (50 MB at
        // 30 ns per byte): due only when the log after it costs as much.
        #expect(!costs.snapshotDue(budget: budget, snapshotBytes: 50_000_000, logBytes: 10_000_000))
        #expect(costs.snapshotDue(budget: budget, snapshotBytes: 50_000_000, logBytes: 20_000_000))
        // Small samples are ignored; large ones move the estimate a quarter of the way.
        let before = costs.rebuild(snapshotBytes: 0, logBytes: 1_000)
        costs.replayed(logBytes: 1_000, nanoseconds: 1e9)
        #expect(costs.rebuild(snapshotBytes: 0, logBytes: 1_000) == before)
        costs.replayed(logBytes: 1 << 20, nanoseconds: Double(1 << 20) * 175)
        #expect(abs(costs.rebuild(snapshotBytes: 0, logBytes: 1) - 100) < 1e-9)
        costs.snapshotRead(bytes: 1 << 20, nanoseconds: Double(1 << 20) * 70)
        #expect(abs(costs.snapshotByteWeight - 0.4) < 1e-9)
    }

    @Test("checkpoints stay under their part of the memory budget by thinning, and rebuilds stay right")
    func checkpointMemoryLimit() async throws {
        var counts: [Int] = []
        for budget in [MemoryBudget.unlimited, .bytes(64_000)] {
            let path = temporaryStorePath()
            defer { removeStore(path) }
            var options = testOptions()
            options.checkpointInterval = 1
            options.checkpointsKept = 10_000
            options.memoryBudget = budget
            let store = try await Store.open(at: path, options: options)
            var random = SeededRandom(seed: 8)
            var values = [store.current]
            for _ in 0..<400 {
                try await StoreTests.randomCommit(store, &random)
                values.append(store.current)
            }
            counts.append(await store.statistics.checkpointCount)
            _ = try await Self.checkAsOf(store, values, [0, 1, 77, 200, 255, 256, 399, 400], "\(budget)")
            try await store.close()
        }
        #expect(counts[0] == 400, "\(counts)")
        #expect(counts[1] > 0 && counts[1] < 200, "\(counts)")
    }

    /// A store keeping a value every 4 transactions or 4 · 64 = 256
    /// changes (512 once thinning doubles the interval), at most 6, with
    /// no byte limit; `commit` records each published value.
    private static func largeTransactionStore(_ path: String) async throws -> Store {
        var options = testOptions()
        options.checkpointInterval = 4
        options.checkpointsKept = 6
        options.memoryBudget = .unlimited
        options.snapshotEveryTransactions = nil
        options.rebuildBudget = nil
        return try await Store.open(at: path, options: options)
    }

    /// Upserts `count` records from ID `first` with `plays` set to `plays`.
    private static func commit(
        _ store: Store,
        _ values: inout [Database],
        records count: Int,
        from first: Int,
        plays: Int
    ) async throws {
        try await store.transact { builder in
            for k in first..<(first + count) {
                try builder.upsert(["k": .int(Int64(k)), "plays": .int(Int64(plays))], id: RecordID(k), into: "songs")
            }
        }
        values.append(store.current)
    }

    @Test("a transaction of many changes is a checkpoint whatever its t, and stays one through thinning")
    func checkpointAfterLargeTransaction() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.largeTransactionStore(path)
        var values = [store.current]
        // t 1: kept for the changes before it, the first one kept.
        try await Self.commit(store, &values, records: 2_500, from: 0, plays: 0)
        for t in 2...32 {
            // Single edits (each a change), and at t 7 an import between
            // the interval's marks.
            if t == 7 {
                try await Self.commit(store, &values, records: 5_000, from: 10_000, plays: 0)
            } else {
                try await Self.commit(store, &values, records: 1, from: t * 3 % 2_500, plays: t)
            }
        }
        // Every 4th up to 16, then (past 6 kept) every 8th: 8, 16, 24, 32,
        // and the two imports, whose changes reach the doubled mark.
        #expect(await store.statistics.checkpointCount == 6)
        #expect(try await store.rebuildPlan(for: 1).start == .checkpoint(1))
        #expect(try await store.rebuildPlan(for: 7).start == .checkpoint(7))
        _ = try await Self.checkAsOf(store, values, Array(0...32), "large transactions")
        try await store.close()
    }

    @Test("a run of large transactions at the start thins to every other one, not to none")
    func largeTransactionsAtStartThinned() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.largeTransactionStore(path)
        var values = [store.current]
        // Seven imports of 300 (each over the mark of 256): the 7th makes
        // 7 kept, and thinning to every 8th (mark 512) keeps t 2, 4 and 6,
        // each 600 changes after the one before it.
        for t in 1...7 {
            try await Self.commit(store, &values, records: 300, from: t * 1_000, plays: 0)
        }
        #expect(await store.statistics.checkpointCount == 3)
        for t: Int64 in [2, 4, 6] {
            #expect(try await store.rebuildPlan(for: t).start == .checkpoint(t), "t \(t)")
        }
        _ = try await Self.checkAsOf(store, values, Array(0...7), "large transactions at the start")
        try await store.close()
    }
}
