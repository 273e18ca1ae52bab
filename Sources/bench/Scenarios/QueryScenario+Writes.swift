import DeterministicRandom
import Foundation
import PersistentCollections
import Strata

extension QueryScenario {
    /// (f) apply with 3 indexes beside none, and bytes retained per kept
    /// version; (g) heap bytes per index entry; (h) open (decoding the
    /// snapshot payload) with 3 indexes beside none.
    func measureWrites(_ context: BenchContext, label: String, plain: Database, indexed: Database, indexHeap: Double)
        throws
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

        context.progress.update("\(label): open with indexes")
        let plainBytes = BinaryCodec.encode(plain)
        let indexedBytes = BinaryCodec.encode(indexed)
        let plainOpen = try Measure.median(samples: samples) { try BinaryCodec.decodeDatabase(plainBytes) }
        let indexedOpen = try Measure.median(samples: samples) { try BinaryCodec.decodeDatabase(indexedBytes) }
        report.add(
            Self.name,
            section: label,
            subject: "(h) open (decode + build the snapshot payload), 3 indexes",
            value: indexedOpen / 1e6,
            unit: "ms",
            baseline: ("no index", plainOpen / 1e6),
            note: "indexes are rebuilt from the records at open (entries computed, sorted, built bottom-up)"
        )
        if context.quick {
            report.gate(
                "query apply, 3 indexes / none (\(MapScenario.sizeLabel(songs)))",
                measured: indexedApply / plainApply,
                .atMost,
                4
            )
            report.gate(
                "query retained per version, 3 indexes / none (\(MapScenario.sizeLabel(songs)))",
                measured: indexedRetained / max(plainRetained, 1),
                .atMost,
                6
            )
        }
    }

    /// `PersistentSortedSet<Int>` beside a sorted `Array<Int>`.
    func measureSortedSet(_ context: BenchContext, label: String, size: Int) throws {
        let report = context.report
        context.progress.update("\(label): sorted set")
        let elements = (0..<size).map { $0 * 2 }
        let samples = context.quick ? 3 : 5
        var random = SplitMix64(seed: context.seed &+ 31)
        let probes = (0..<10_000).map { _ in random.int(below: size) * 2 }
        var set = PersistentSortedSet<Int>()
        let buildNs =
            Measure.median(samples: samples) {
                set = PersistentSortedSet(sortedElements: elements)
                return set.count
            } / Double(size)
        let copyNs = Measure.median(samples: samples) { Array(elements) } / Double(size)
        let lookupNs =
            Measure.median(samples: samples) {
                var found = 0
                for probe in probes where set.contains(probe) { found += 1 }
                return found
            } / Double(probes.count)
        let searchNs =
            Measure.median(samples: samples) {
                var found = 0
                for probe in probes {
                    var low = 0
                    var high = elements.count
                    while low < high {
                        let middle = (low + high) >> 1
                        if elements[middle] < probe { low = middle + 1 } else { high = middle }
                    }
                    if low < elements.count && elements[low] == probe { found += 1 }
                }
                return found
            } / Double(probes.count)
        let offsetNs =
            Measure.median(samples: samples) {
                var sum = 0
                for probe in probes { sum &+= set.element(at: probe / 2) }
                return sum
            } / Double(probes.count)
        // A chained hash of the elements: work the compiler cannot vectorize,
        // so the figures compare the iterators, not SIMD against a loop.
        let iterateNs =
            Measure.median(samples: samples) {
                var hash = 0
                for element in set { hash = hash &* 31 &+ element }
                return hash
            } / Double(size)
        let arrayIterateNs =
            Measure.median(samples: samples) {
                var hash = 0
                for element in elements { hash = hash &* 31 &+ element }
                return hash
            } / Double(size)
        // Insert with the old version kept: the set copies a path, the array itself.
        let inserts = probes.prefix(context.quick ? 200 : 1_000).map { $0 + 1 }
        var kept: [PersistentSortedSet<Int>] = []
        kept.reserveCapacity(inserts.count)
        let heapBefore = MemoryProbe.allocatedBytes()
        let insertNs =
            Measure.nanoseconds {
                var version = set
                for value in inserts {
                    version.insert(value)
                    kept.append(version)
                }
                return version.count
            } / Double(inserts.count)
        let retainedBytes = Double(MemoryProbe.allocatedBytes() - heapBefore) / Double(inserts.count)
        withExtendedLifetime(kept) {}
        let arrayInsertNs =
            Measure.median(samples: 1) {
                var copies = 0
                for value in inserts.prefix(20) {
                    var copy = elements
                    copy.insert(value, at: value / 2 + 1)
                    copies &+= copy.count
                }
                return copies
            } / 20
        let rows: [(String, Double, String, (String, Double)?)] = [
            ("sorted set: lookup", lookupNs, "ns", ("Array binary search", searchNs)),
            ("sorted set: element(at:)", offsetNs, "ns", ("sorted set lookup", lookupNs)),
            ("sorted set: iteration, per element", iterateNs, "ns", ("Array", arrayIterateNs)),
            ("sorted set: build from sorted input, per element", buildNs, "ns", ("Array copy", copyNs)),
            ("sorted set: insert, old version kept", insertNs, "ns", ("Array copy + insert", arrayInsertNs)),
            ("sorted set: bytes retained per kept version", retainedBytes, "B", nil),
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
                    "goals at 1M: lookup ≤ 2x binary search, iteration ≤ 3x Array, insert kept ≤ 1.5 µs and ≤ 1.5 KB, "
                    + "build ≤ 30 ns per element, element(at:) ≤ lookup"
            )
        }
        if context.quick {
            report.gate(
                "sorted set lookup / binary search (\(MapScenario.sizeLabel(size)))",
                measured: lookupNs / searchNs,
                .atMost,
                4
            )
            report.gate(
                "sorted set iteration / Array (\(MapScenario.sizeLabel(size)))",
                measured: iterateNs / arrayIterateNs,
                .atMost,
                10
            )
        }
    }
}
