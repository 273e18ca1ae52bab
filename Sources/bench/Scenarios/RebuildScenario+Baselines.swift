import DeterministicRandom
import Foundation
import PersistentCollections
import Strata

extension RebuildScenario {
    /// Baseline (1): the value after every t rebuilt the way a transactor
    /// without flatten does it — from empty, reading and applying one
    /// transaction at a time. One pass times every prefix, so the cost for
    /// any t is measured, not extrapolated.
    struct Replay {
        /// `prefix[t]`: nanoseconds from empty to the value after t.
        var prefix: [Double]
    }

    /// Replays the whole history once; at each t in `check`, the replayed
    /// value must equal `database(asOf:)` (compared outside the timing).
    static func naiveReplay(
        _ store: Store,
        upTo now: Int64,
        check: [Int64],
        progress: (Int64) -> Void
    ) async throws -> Replay {
        var prefix = [0.0]
        prefix.reserveCapacity(Int(now) + 1)
        var value = Database()
        var elapsed = 0.0
        let checks = Set(check)
        if checks.contains(0), try await store.database(asOf: 0) != value {
            throw BenchError.verificationFailed("replay differs from as-of at t 0")
        }
        for t in 1...max(now, 1) where t <= now {
            progress(t)
            elapsed += try await Measure.nanoseconds {
                guard let transaction = try await store.transaction(at: t) else {
                    throw BenchError.verificationFailed("no transaction \(t) in the history")
                }
                value = try apply(value, transaction)
            }
            prefix.append(elapsed)
            if checks.contains(t), try await store.database(asOf: t) != value {
                throw BenchError.verificationFailed("replay differs from as-of at t \(t)")
            }
        }
        return Replay(prefix: prefix)
    }

    /// Baseline (2): for each t, read the last snapshot at or before it
    /// (each snapshot's read timed once) and replay the transactions after
    /// it one at a time (their cost taken from the naive pass's prefix
    /// times). Without a snapshot at or before t, replay starts from empty.
    static func replayFromSnapshot(
        _ store: Store,
        bases: [Int64],
        ts: [Int64],
        replay: Replay
    ) async throws -> [Int64: Double] {
        var readTimes: [Int64: Double] = [:]
        var costs: [Int64: Double] = [:]
        for t in ts {
            guard let basis = bases.last(where: { $0 <= t }) else {
                costs[t] = replay.prefix[Int(t)]
                continue
            }
            if readTimes[basis] == nil {
                readTimes[basis] = try await Measure.nanoseconds { try await store.database(inSnapshot: basis) }
            }
            costs[t] = readTimes[basis]! + replay.prefix[Int(t)] - replay.prefix[Int(basis)]
        }
        return costs
    }

    /// What retained past values cost in memory.
    struct RetainedMemory {
        /// jemalloc bytes held by the last 1,000 values as they were
        /// published (each the one before with one transaction applied),
        /// beside the current value, measured once the store is closed.
        var recentBytes = 0
        /// jemalloc bytes added by holding `count` values evenly spread over
        /// the history, each rebuilt by `database(asOf:)`.
        var spreadBytes: Int
        /// Peak resident set size during the phase.
        var peakResident: Int
    }

    /// Holds `count` values rebuilt by as-of, evenly spread over the
    /// history, and reads what they added. The set is built once first and
    /// dropped, so the blocks the rebuilds cache are in place before the
    /// measured build.
    static func retainedMemory(_ store: Store, now: Int64, count: Int) async throws -> RetainedMemory {
        MemoryProbe.resetPeak()
        let spread = (1...Int64(count)).map { now * $0 / Int64(count) }
        for t in spread { _ = try await store.database(asOf: t) }
        let before = MemoryProbe.allocatedBytes()
        var values: [Database] = []
        for t in spread { values.append(try await store.database(asOf: t)) }
        let added = MemoryProbe.allocatedBytes() - before
        Measure.consume(&values)
        return RetainedMemory(spreadBytes: added, peakResident: MemoryProbe.peakResidentBytes())
    }

    /// Baseline (3): one full `Dictionary` copy of the songs per version.
    /// Copies `measured` of them (records stay shared, as Swift arrays do)
    /// and scales to `versions` when fewer were made.
    static func dictionaryCopies(
        _ database: Database,
        versions: Int,
        measured: Int
    ) -> (bytes: Double, extrapolated: Bool) {
        let songs = database[table: "songs"]
        let base = Dictionary(uniqueKeysWithValues: songs.map { ($0.key, $0.value) })
        guard let (someID, someRecord) = songs.first(where: { _ in true }) else { return (0, false) }
        let made = min(measured, versions)
        let before = MemoryProbe.allocatedBytes()
        var copies: [[RecordID: Record]] = []
        copies.reserveCapacity(made)
        for n in 0..<made {
            var copy = base
            var record = someRecord
            record["plays"] = .int(Int64(n))
            copy[someID] = record
            copies.append(copy)
        }
        let bytes = Double(MemoryProbe.allocatedBytes() - before)
        Measure.consume(&copies)
        return (bytes * Double(versions) / Double(made), made < versions)
    }
}
