import DeterministicRandom
import Foundation
import PersistentCollections
import Strata

extension QueryScenario {
    /// (f) apply with 3 indexes beside none, and bytes retained per kept
    /// version; (g) heap bytes per index entry; (h) opening a store with 3
    /// indexes beside none.
    func measureWrites(_ context: BenchContext, label: String, plain: Database, indexed: Database, indexHeap: Double)
        async throws
    {
        let report = context.report
        let songs = plain[table: "songs"].count
        context.progress.update("\(label): apply with indexes")
        var random = SplitMix64(seed: context.seed &+ 29)
        // Half play counts (no indexed field), half titles (one index entry moves).
        let edits: [(RecordID, Patch)] = (0..<2_000).map { n in
            let id = RecordID(random.int(below: songs))
            return n % 2 == 0
                ? (id, [.set("plays", .int(Int64(n)))])
                : (id, [.set("title", .string("Retitled \(random.int(below: 1_000_000))"))])
        }
        func transactions(on base: Database) throws -> [Transaction] {
            var current = base
            var result: [Transaction] = []
            for (id, patch) in edits {
                var builder = TransactionBuilder(on: current)
                try builder.update(id, in: "songs", patch)
                let transaction = builder.transaction()
                current = try apply(current, transaction)
                result.append(transaction)
            }
            return result
        }
        let plainRun = try transactions(on: plain)
        let indexedRun = try transactions(on: indexed)
        let samples = context.quick ? 3 : 5
        func applyNs(_ base: Database, _ run: [Transaction]) throws -> Double {
            try Measure.median(samples: samples) {
                var value = base
                for transaction in run { value = try apply(value, transaction) }
                return value.basis
            } / Double(run.count)
        }
        let plainApply = try applyNs(plain, plainRun)
        let indexedApply = try applyNs(indexed, indexedRun)
        func retained(_ base: Database, _ run: [Transaction]) throws -> Double {
            var kept: [Database] = []
            kept.reserveCapacity(run.count)
            var value = base
            let before = MemoryProbe.allocatedBytes()
            for transaction in run {
                value = try apply(value, transaction)
                kept.append(value)
            }
            let bytes = Double(MemoryProbe.allocatedBytes() - before)
            withExtendedLifetime(kept) {}
            return bytes / Double(run.count)
        }
        let plainRetained = try retained(plain, plainRun)
        let indexedRetained = try retained(indexed, indexedRun)
        report.add(
            Self.name,
            section: label,
            subject: "(f) apply, single-record transaction, 3 indexes",
            value: indexedApply / 1e3,
            unit: "µs",
            baseline: ("no index", plainApply / 1e3),
            note: "goals at 1M: apply ≤ 2x, retained ≤ 2.5x, open ≤ 1.3x without indexes; ≤ 40 B per entry"
        )
        report.add(
            Self.name,
            section: label,
            subject: "(f) bytes retained per kept version, 3 indexes",
            value: indexedRetained,
            unit: "B",
            baseline: ("no index", plainRetained)
        )
        report.add(
            Self.name,
            section: label,
            subject: "(g) heap bytes per index entry",
            value: indexHeap / Double(3 * songs),
            unit: "B"
        )

        let (indexedOpen, plainOpen) = try await measureStoreOpen(context, label: label, plain: plain)
        report.add(
            Self.name,
            section: label,
            subject: "(h) open a store (its snapshot, warm page cache), 3 indexes",
            value: indexedOpen / 1e6,
            unit: "ms",
            baseline: ("no index", plainOpen / 1e6),
            note: "the snapshot carries each index's entries (front-coded, sorted): open checks their form and order"
        )
        if context.quick {
            // The stored entries are read, not rebuilt.
            report.gate(
                "query open, 3 indexes / none (\(MapScenario.sizeLabel(songs)))",
                measured: indexedOpen / plainOpen,
                .atMost,
                2
            )
            report.gate(
                "query apply, 3 indexes / none (\(MapScenario.sizeLabel(songs)))",
                measured: indexedApply / plainApply,
                .atMost,
                3
            )
            report.gate(
                "query retained per version, 3 indexes / none (\(MapScenario.sizeLabel(songs)))",
                measured: indexedRetained / max(plainRetained, 1),
                .atMost,
                3.5
            )
        }
    }

    /// `PersistentSortedMap<Int, Int>` beside a sorted `Array` of pairs.
    func measureSortedMap(_ context: BenchContext, label: String, size: Int) throws {
        let report = context.report
        context.progress.update("\(label): sorted map")
        let entries = (0..<size).map { (key: $0 * 2, value: $0) }
        let keys = entries.map(\.key)
        let samples = context.quick ? 3 : 5
        var random = SplitMix64(seed: context.seed &+ 31)
        let probes = (0..<10_000).map { _ in random.int(below: size) * 2 }
        // The map built is returned, so it is freed after the clock stops,
        // as the copied Array is.
        let buildNs =
            Measure.median(samples: samples) { PersistentSortedMap(sortedUniqueKeysWithValues: entries) }
            / Double(size)
        let map = PersistentSortedMap(sortedUniqueKeysWithValues: entries)
        let copyNs = Measure.median(samples: samples) { entries.withUnsafeBufferPointer { Array($0) } } / Double(size)
        let lookupNs =
            Measure.median(samples: samples) {
                var sum = 0
                for probe in probes { sum &+= map[probe] ?? 0 }
                return sum
            } / Double(probes.count)
        let searchNs =
            Measure.median(samples: samples) {
                var sum = 0
                for probe in probes {
                    var low = 0
                    var high = keys.count
                    while low < high {
                        let middle = (low + high) >> 1
                        if entries[middle].key < probe { low = middle + 1 } else { high = middle }
                    }
                    if low < entries.count && entries[low].key == probe { sum &+= entries[low].value }
                }
                return sum
            } / Double(probes.count)
        let offsetNs =
            Measure.median(samples: samples) {
                var sum = 0
                for probe in probes { sum &+= map.element(at: probe / 2).value }
                return sum
            } / Double(probes.count)
        // A chained hash of the entries: work the compiler cannot vectorize,
        // so the figures compare the iterators, not SIMD against a loop.
        let iterateNs =
            Measure.median(samples: samples) {
                var hash = 0
                for (key, value) in map { hash = (hash &* 31 &+ key) &* 31 &+ value }
                return hash
            } / Double(size)
        let arrayIterateNs =
            Measure.median(samples: samples) {
                var hash = 0
                for (key, value) in entries { hash = (hash &* 31 &+ key) &* 31 &+ value }
                return hash
            } / Double(size)
        // Update of an existing key with the old version kept: the map copies
        // a path, the array itself.
        // The versions are returned, so they are freed after the clock stops
        // (as in the map scenario's row); freeing them is timed on its own.
        let updates = Array(probes.prefix(context.quick ? 1_000 : 5_000))
        var retainedBytes = 0.0
        var freeTimes: [Double] = []
        let updateNs =
            Measure.median(samples: samples) {
                var kept: [PersistentSortedMap<Int, Int>] = []
                kept.reserveCapacity(updates.count)
                let heapBefore = MemoryProbe.allocatedBytes()
                var version = map
                for (n, key) in updates.enumerated() {
                    version[key] = -n
                    kept.append(version)
                }
                retainedBytes = Double(MemoryProbe.allocatedBytes() - heapBefore) / Double(updates.count)
                return kept
            } / Double(updates.count)
        for _ in 0..<samples {
            var kept: [PersistentSortedMap<Int, Int>] = []
            kept.reserveCapacity(updates.count)
            var version = map
            for (n, key) in updates.enumerated() {
                version[key] = -n
                kept.append(version)
            }
            freeTimes.append(
                Measure.nanoseconds {
                    kept.removeAll()
                    return kept.count
                } / Double(updates.count)
            )
        }
        let freeNs = Statistics.median(freeTimes)
        let arrayUpdateNs =
            Measure.median(samples: 1) {
                var copies = 0
                for (n, key) in updates.prefix(20).enumerated() {
                    var copy = entries
                    copy[key / 2].value = -n
                    copies &+= copy.count
                }
                return copies
            } / 20
        let rows: [(String, Double, String, (String, Double)?)] = [
            ("sorted map: lookup", lookupNs, "ns", ("Array binary search", searchNs)),
            ("sorted map: element(at:)", offsetNs, "ns", ("sorted map lookup", lookupNs)),
            ("sorted map: iteration, per entry", iterateNs, "ns", ("Array", arrayIterateNs)),
            ("sorted map: build from sorted input, per entry", buildNs, "ns", ("Array copy", copyNs)),
            ("sorted map: update, old version kept", updateNs, "ns", ("Array copy + update", arrayUpdateNs)),
            ("sorted map: bytes retained per kept version", retainedBytes, "B", nil),
            ("sorted map: freeing a kept version", freeNs, "ns", ("update, old version kept", updateNs)),
        ]
        for (subject, value, unit, baseline) in rows {
            report.add(
                Self.name,
                section: label,
                subject: subject,
                value: value,
                unit: unit,
                baseline: baseline,
                note:
                    "goals at 1M: lookup ≤ 2x binary search, iteration ≤ 3x Array, update kept ≤ 1.5 µs and ≤ 1.5 KB, "
                    + "build ≤ 30 ns per entry, element(at:) ≤ lookup"
            )
        }
        if context.quick {
            report.gate(
                "sorted map lookup / binary search (\(MapScenario.sizeLabel(size)))",
                measured: lookupNs / searchNs,
                .atMost,
                4
            )
            report.gate(
                "sorted map iteration / Array (\(MapScenario.sizeLabel(size)))",
                measured: iterateNs / arrayIterateNs,
                .atMost,
                8
            )
            report.gate(
                "sorted map element(at:) / lookup (\(MapScenario.sizeLabel(size)))",
                measured: offsetNs / lookupNs,
                .atMost,
                2
            )
        }
    }
}
