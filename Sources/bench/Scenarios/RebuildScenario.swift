import BenchWorkloads
import DeterministicRandom
import Foundation
import PersistentCollections
import Strata

/// `rebuild`: any past value of a music library out of a long, realistic
/// history (``LibraryHistory``). As-of latency for random t, warm and cold
/// from disk, beside (1) naive replay from the empty value, one transaction
/// at a time, and (2) reading the last snapshot at or before t and replaying
/// the transactions after it without flatten; open and commit latency; the
/// memory of 1,000 retained past values beside (3) one `Dictionary` copy
/// per version. Draws as-of latency against distance from the last snapshot
/// as an SVG chart in `perf/results/`.
struct RebuildScenario {
    static let name = "rebuild"

    /// What one size's run measured, for the report and the chart.
    struct Samples {
        var ts: [Int64] = []
        var firstUse: [Double] = []
        var warm: [Double] = []
        var cold: [(t: Int64, ns: Double)] = []
        var opens: [Double] = []
        var starts: [String: Int] = [:]
    }

    func run(_ context: BenchContext, sizes: [Int]) async throws {
        let transactions = context.transactions ?? (context.quick ? 20_000 : 100_000)
        for size in sizes { try await measure(context, songs: size, transactions: transactions) }
    }

    func measure(_ context: BenchContext, songs: Int, transactions: Int) async throws {
        let label =
            "rebuild: \(MapScenario.sizeLabel(songs)) songs, \(MapScenario.sizeLabel(transactions)) transactions"
        let report = context.report
        let directory = FileManager.default.temporaryDirectory.path + "/strata-rebuild-\(getpid())-\(songs)"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storePath = directory + "/library.strata"

        // The library, loaded in 10k-record imports, then the history.
        context.progress.update("\(label): building the library")
        var library = MusicLibrary(seed: context.seed)
        let allocatedBefore = MemoryProbe.allocatedBytes()
        let initial = library.database(songs: songs)
        let initialBytes = MemoryProbe.allocatedBytes() - allocatedBefore
        var options = StoreOptions()
        options.durability = .none
        options.createIfMissing = true
        options.snapshotsKept = 1_000  // every snapshot stays, for baseline (2)
        // The engine's as-of speed with every checkpoint, as the gates have
        // always measured it; `--memory-budget` measures under a budget
        // (the store's default is proportional: see perf/README.md).
        options.memoryBudget = context.memoryBudget ?? .unlimited
        let store = try await Store.open(at: storePath, options: options)
        try await StoreScenario.load(initial, into: store)
        var history = LibraryHistory(seed: context.seed, songs: songs)
        var commitTimes: [Double] = []
        var editTimes: [Double] = []
        var compactionEditTimes: [Double] = []
        commitTimes.reserveCapacity(transactions)
        var recentValues: [Database] = []
        for n in 0..<transactions {
            if n % 1_000 == 0 { context.progress.update("\(label): history \(n)/\(transactions)") }
            var committed: CommitReport?
            let ns = try await Measure.nanoseconds { committed = try await history.commitNext(to: store) }
            commitTimes.append(ns)
            guard let committed else { continue }
            if committed.changes.values.reduce(0, { $0 + $1.count }) == 1 {
                editTimes.append(ns)
                if Self.meetsCompaction(committed.transaction.t) { compactionEditTimes.append(ns) }
            }
            // The last 1,000 values as published: what an app's undo stack holds.
            recentValues.append(committed.after)
            if recentValues.count > 1_000 { recentValues.removeFirst() }
        }
        // A snapshot at the end, as an app writes one when it closes; it also
        // waits for any background snapshot still being written.
        try await store.snapshot()
        let now = store.current.basis
        var random = SplitMix64(seed: context.seed &+ 7)
        var samples = Samples()

        // As-of, warm: a first pass builds the compaction blocks it needs;
        // the second, over other t, finds them built.
        let count = context.quick ? 200 : 1_000
        let firstTs = (0..<count).map { _ in Int64(random.int(below: Int(now) + 1)) }
        samples.ts = (0..<count).map { _ in Int64(random.int(below: Int(now) + 1)) }
        for (n, t) in firstTs.enumerated() {
            if n % 50 == 0 { context.progress.update("\(label): as-of, first use \(n)/\(count)") }
            samples.firstUse.append(try await Measure.nanoseconds { try await store.database(asOf: t) })
        }
        var plans: [RebuildPlan] = []
        for (n, t) in samples.ts.enumerated() {
            if n % 50 == 0 { context.progress.update("\(label): as-of, warm \(n)/\(count)") }
            samples.warm.append(try await Measure.nanoseconds { try await store.database(asOf: t) })
            let plan = try await store.rebuildPlan(for: t)
            samples.starts[plan.start.kind, default: 0] += 1
            plans.append(plan)
        }
        // The slowest warm rebuilds and how they were planned: where a tail comes from.
        let slowest = samples.warm.indices.sorted { samples.warm[$0] > samples.warm[$1] }.prefix(3)
        let slowLines = slowest.map { index in
            let plan = plans[index]
            return "t \(samples.ts[index]): \(Report.format(samples.warm[index] / 1e6)) ms from \(plan.start), "
                + "\(plan.pieces) pieces, cost \(Report.format(plan.estimatedCost / 1e3)) kB"
        }

        // Baseline (1): one replay pass from empty, timing every prefix.
        let replay = try await Self.naiveReplay(store, upTo: now, check: Array(samples.ts.prefix(5))) { t in
            if t % 1_000 == 0 { context.progress.update("\(label): naive replay \(t)/\(now)") }
        }
        // Baseline (2): the last snapshot at or before t, read, then replay.
        context.progress.update("\(label): replay from the last snapshot")
        context.progress.update("\(label): memory statistics")
        let statistics = await store.statistics(measuringMemory: true)
        let fromSnapshot = try await Self.replayFromSnapshot(
            store,
            bases: statistics.snapshotBases,
            ts: samples.ts,
            replay: replay
        )

        // Memory: the current value, then 1,000 retained past values.
        context.progress.update("\(label): memory of retained values")
        var memory = try await Self.retainedMemory(store, now: now, count: 1_000)
        let current = store.current
        try await store.close()
        // What the last 1,000 values hold beside the current value, measured
        // with the store closed: measured right after the last commit, the
        // store's background work (blocks, checkpoint upkeep) allocated
        // during the measurement and the figure read -4.9 MB at 100k songs
        // on 2026-12-06.
        // The store is kept alive through it, as before: what its
        // checkpoints share with these values is not counted (with the
        // store released at an unspecified point, it was or was not).
        let recentBytes = MemoryProbe.allocatedBytes()
        recentValues = []
        memory.recentBytes = recentBytes - MemoryProbe.allocatedBytes()
        withExtendedLifetime(store) {}
        // Measured once the store is closed: its background work (blocks
        // built, caches trimmed to the budget) freed memory during this
        // measurement on 2026-12-06, and the copies read -8.5 GB.
        let copies = Self.dictionaryCopies(
            current,
            versions: 1_000,
            measured: songs >= 1_000_000 || context.quick ? 10 : 1_000
        )

        // As-of, cold: open with the page cache evicted, evict again, query.
        let coldCount = context.quick ? 3 : 10
        let evicts = DiskProbe.evictFromPageCache(storePath)
        for n in 0..<coldCount {
            context.progress.update("\(label): as-of, cold \(n)/\(coldCount)")
            let t = Int64(random.int(below: Int(now) + 1))
            DiskProbe.evictFromPageCache(storePath)
            var reopened: Store?
            var reopenOptions = StoreOptions()
            reopenOptions.memoryBudget = options.memoryBudget
            samples.opens.append(
                try await Measure.nanoseconds { reopened = try await Store.open(at: storePath, options: reopenOptions) }
            )
            guard let reopened else { continue }
            DiskProbe.evictFromPageCache(storePath)
            samples.cold.append((t, try await Measure.nanoseconds { try await reopened.database(asOf: t) }))
            try await reopened.close()
        }
        DiskProbe.evictFromPageCache(storePath)
        let readFiles = Measure.nanoseconds { DiskProbe.readAll(storePath) }
        context.progress.done()

        let shape = LibraryHistory.Kind.allCases.map { "\(history.counts[$0] ?? 0) \($0.rawValue)" }
        print("  history: \(shape.joined(separator: ", ")); \(history.revertConflicts) reverts conflicted")
        print("  songs: \(songs) at the start, \(history.songCount) at the end")
        print("  as-of starts (warm): \(samples.starts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" })")
        print("  slowest warm: \(slowLines.joined(separator: "; "))")
        let figures = Figures(
            label: label,
            songs: songs,
            samples: samples,
            replay: replay,
            fromSnapshot: fromSnapshot,
            memory: memory,
            copies: copies,
            initialBytes: initialBytes,
            storeMemory: statistics.memory,
            memoryBudget: statistics.memoryBudget,
            commitTimes: commitTimes,
            editTimes: editTimes,
            compactionEditTimes: compactionEditTimes,
            readFiles: readFiles,
            evicts: evicts,
            logBytes: statistics.logBytes
        )
        figures.add(to: report, quick: context.quick)
        let chartName = "rebuild-\(MapScenario.sizeLabel(songs))\(context.quick ? "-quick" : "").svg"
        try chart(samples, fromSnapshot: fromSnapshot, bases: statistics.snapshotBases, name: chartName, label: label)
        report.printSection(label)
    }

    /// Commits the store builds a compaction block behind: a block of 256
    /// transactions (the first level written to a block file) completes at
    /// every multiple of 256, and is built, compressed and written while the
    /// next commits arrive. The 32 commits after each completion are the
    /// ones that would wait if that work held the store.
    static let compactionWindow: Int64 = 32

    /// Whether commit `t` is one of the ``compactionWindow`` commits right
    /// after a 256-transaction block completed.
    static func meetsCompaction(_ t: Int64) -> Bool {
        t > 256 && (t - 1) % 256 < compactionWindow
    }

    /// The chart: as-of latency (warm, cold) and replay from the last
    /// snapshot, against how far t is past the last snapshot at or before it.
    func chart(
        _ samples: Samples,
        fromSnapshot: [Int64: Double],
        bases: [Int64],
        name: String,
        label: String
    ) throws {
        func distance(_ t: Int64) -> Double { Double(t - (bases.last { $0 <= t } ?? 0)) }
        var chart = SVGChart(
            title: label,
            xLabel: "transactions since the last snapshot at or before t",
            yLabel: "ms to rebuild the value after t (log scale)"
        )
        chart.series.append(
            .init(
                name: "replay from that snapshot, no flatten",
                color: "#d62728",
                points: samples.ts.compactMap { t in fromSnapshot[t].map { (distance(t), $0 / 1e6) } }
            )
        )
        chart.series.append(
            .init(
                name: "as-of, cold (just opened, page cache evicted)",
                color: "#1f77b4",
                points: samples.cold.map { (distance($0.t), $0.ns / 1e6) }
            )
        )
        chart.series.append(
            .init(
                name: "as-of, warm",
                color: "#2ca02c",
                points: zip(samples.ts, samples.warm).map { (distance($0), $1 / 1e6) }
            )
        )
        let url = URL(fileURLWithPath: "perf/results/" + name)
        try chart.write(to: url)
        print("  chart written to \(url.path)")
    }
}
