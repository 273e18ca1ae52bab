import Foundation
import Strata

extension RebuildScenario {
    /// One size's measurements, turned into report rows.
    struct Figures {
        var label: String
        var songs: Int
        var samples: Samples
        var replay: Replay
        var fromSnapshot: [Int64: Double]
        var memory: RetainedMemory
        var copies: (bytes: Double, extrapolated: Bool)
        var initialBytes: Int
        var storeMemory: StoreMemory?
        /// The store's memory budget in bytes when its memory was measured.
        var memoryBudget: Int
        var commitTimes: [Double]
        var editTimes: [Double]
        /// Single edits committed while a compaction block was being built
        /// (``RebuildScenario/meetsCompaction(_:)``).
        var compactionEditTimes: [Double]
        var readFiles: Double
        var evicts: Bool
        var logBytes: Int

        /// The same-run speedup of as-of over naive replay: mean over the
        /// warm samples' t of each, so every t weighs by its cost.
        var speedup: Double {
            let naive = samples.ts.map { replay.prefix[Int($0)] }.reduce(0, +)
            return naive / max(samples.warm.reduce(0, +), 1)
        }

        func add(to report: Report, quick: Bool) {
            let scenario = RebuildScenario.name
            func row(
                _ subject: String,
                _ value: Double,
                _ unit: String,
                _ baseline: (String, Double)? = nil,
                _ note: String? = nil
            ) {
                report.add(
                    scenario,
                    section: label,
                    subject: subject,
                    value: value,
                    unit: unit,
                    baseline: baseline,
                    note: note
                )
            }
            let naive = samples.ts.map { replay.prefix[Int($0)] / 1e6 }
            let snapshot = samples.ts.compactMap { fromSnapshot[$0].map { $0 / 1e6 } }
            let warm = samples.warm.map { $0 / 1e6 }
            let first = samples.firstUse.map { $0 / 1e6 }
            let cold = samples.cold.map { $0.ns / 1e6 }
            let atGoalSize = songs >= 1_000_000
            for p in [50.0, 99.0] {
                row(
                    "as-of p\(Int(p)), warm",
                    Statistics.percentile(warm, p),
                    "ms",
                    ("naive replay from empty", Statistics.percentile(naive, p)),
                    "goal: warm p50 ≤ 0.5 ms, p99 ≤ 2 ms (issue 15: also under the default memory budget)"
                )
            }
            row(
                "as-of max, warm",
                warm.max() ?? 0,
                "ms",
                ("naive replay from empty", naive.max() ?? 0),
                atGoalSize ? "goal at 1M: ≤ 20 ms" : nil
            )
            row(
                "as-of vs naive replay, same t",
                speedup,
                "x",
                nil,
                "mean over \(warm.count) random t; goal ≥ 10,000x at 100k and 1M songs"
            )
            for p in [50.0, 99.0] {
                row(
                    "as-of p\(Int(p)), warm",
                    Statistics.percentile(warm, p),
                    "ms",
                    ("last snapshot + replay", Statistics.percentile(snapshot, p))
                )
            }
            for p in [50.0, 99.0, 100.0] {
                row(
                    p == 100 ? "as-of max, first use (builds blocks)" : "as-of p\(Int(p)), first use (builds blocks)",
                    Statistics.percentile(first, p),
                    "ms"
                )
            }
            for p in [50.0, 99.0, 100.0] {
                row(
                    "as-of \(p == 100 ? "max" : "p\(Int(p))"), cold\(evicts ? " (just opened, page cache evicted)" : "")",
                    Statistics.percentile(cold, p),
                    "ms",
                    ("last snapshot + replay", Statistics.percentile(snapshot, p)),
                    atGoalSize && p == 99 ? "goal at 1M: cold p99 ≤ 600 ms (\(cold.count) samples)" : nil
                )
            }
            row(
                "open\(evicts ? ", cold" : "")",
                Statistics.median(samples.opens) / 1e6,
                "ms",
                ("read the files", readFiles / 1e6),
                atGoalSize ? "goal at 1M: open ≤ 250 ms and ≤ 1.5x reading the files" : nil
            )
            row("commit p50, durability none", Statistics.median(commitTimes) / 1e3, "µs")
            row("commit p99, durability none", Statistics.percentile(commitTimes, 99) / 1e3, "µs")
            row("commit p50, single edits", Statistics.median(editTimes) / 1e3, "µs")
            let window = RebuildScenario.compactionWindow
            let compactionNote =
                "\(compactionEditTimes.count) single edits, each within \(window) commits of a completed block"
            let compactionP50 = Statistics.median(compactionEditTimes)
            let compactionP99 = Statistics.percentile(compactionEditTimes, 99)
            row("commit p50, durability none, during compaction", compactionP50 / 1e3, "µs", nil, compactionNote)
            row("commit p99, durability none, during compaction", compactionP99 / 1e3, "µs")
            row("commit max, durability none, during compaction", (compactionEditTimes.max() ?? 0) / 1e3, "µs")
            let compactionRatio = compactionP99 / max(compactionP50, 1)
            row("commit p99/p50, durability none, during compaction", compactionRatio, "x", nil, "goal: ≤ 5x")
            // The same writers' p99 without compaction, measured in this run:
            // preemption by other processes lifts both alike.
            let plainP99 = Statistics.percentile(commitTimes, 99)
            let relativeP99 = compactionP99 / max(plainP99, 1)
            row("commit p99 during compaction / without", relativeP99, "x")
            let counted = storeMemory.map { Double($0.currentValue) / 1e6 }
            let current = counted ?? Double(initialBytes) / 1e6
            if let storeMemory, let counted {
                row(
                    "memory, current value (store statistics)",
                    counted,
                    "MB",
                    ("jemalloc, value at load", Double(initialBytes) / 1e6)
                )
                row(
                    "memory, \(storeMemory.checkpointCount) checkpoints, unique",
                    Double(storeMemory.checkpoints.unique) / 1e6,
                    "MB",
                    ("current value", counted)
                )
                row("memory, checkpoints, shared", Double(storeMemory.checkpoints.shared) / 1e6, "MB")
                row(
                    "memory, compaction blocks + cached transactions, unique",
                    Double(storeMemory.compactionBlocks.unique + storeMemory.cachedTransactions.unique) / 1e6,
                    "MB"
                )
                row(
                    "memory, engine (checkpoints + blocks + cache), unique",
                    Double(storeMemory.engine) / 1e6,
                    "MB",
                    ("current value", counted),
                    (memoryBudget == .max
                        ? "no budget (--memory-budget to set one); "
                        : "budget \(Report.format(Double(memoryBudget) / 1e6)) MB; ")
                        + (songs >= 1_000_000 ? "goal at 1M: ≤ 0.5x" : "goal: ≤ 1x")
                )
            }
            row(
                "memory, last 1,000 values as published",
                Double(memory.recentBytes) / 1e6,
                "MB",
                ("current value", current),
                "goal: 1,000 retained values ≤ 10% of the current value"
            )
            row(
                "memory, 1,000 values rebuilt by as-of, spread",
                Double(memory.spreadBytes) / 1e6,
                "MB",
                ("current value", current)
            )
            row(
                "memory, 1,000 Dictionary copies\(copies.extrapolated ? " (10 made, scaled ×100: extrapolated)" : "")",
                copies.bytes / 1e6,
                "MB",
                ("Strata, 1,000 spread values", Double(memory.spreadBytes) / 1e6)
            )
            row("peak resident memory", Double(memory.peakResident) / 1e6, "MB")
            row("log size", Double(logBytes) / 1e6, "MB")
            if quick {
                report.gate(
                    "rebuild as-of vs naive replay (\(MapScenario.sizeLabel(songs)) songs)",
                    measured: speedup,
                    .atLeast,
                    500
                )
                // The goal is ≤ 5x (the table's note); the gate sits at 20x:
                // the p99 of a ~25 µs commit moves with every preemption on a
                // shared 2-core machine (34–38x measured with compilers
                // running beside it), while the regression it guards,
                // compaction back on the store's actor, measured ~85x. Noise
                // that lifts the p99 lifts the same-run p99 without
                // compaction too, so the gate takes the lower of p99/p50 and
                // 5 × (p99 during / p99 without): a regression raises both.
                report.gate(
                    "commit p99/p50 (.none, during compaction), or 5 × p99 vs without (\(MapScenario.sizeLabel(songs)) songs)",
                    measured: min(compactionRatio, 5 * relativeP99),
                    .atMost,
                    20
                )
            }
        }
    }
}
