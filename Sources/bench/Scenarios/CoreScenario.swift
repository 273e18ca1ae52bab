import BenchWorkloads
import DeterministicRandom
import Foundation
import PersistentCollections
import Strata

/// `core`: the database value's algebra and codec on a synthetic music
/// library: apply, flatten, encode and decode of the whole value, and bytes
/// per record in memory beside the encoded size.
struct CoreScenario {
    static let name = "core"

    func run(_ context: BenchContext, sizes: [Int]) throws {
        for size in sizes { try measure(context, songs: size) }
    }

    func measure(_ context: BenchContext, songs: Int) throws {
        let label = "core: music library, \(MapScenario.sizeLabel(songs)) songs"
        let report = context.report
        let samples = context.quick ? 3 : 5
        var library = MusicLibrary(seed: context.seed)
        context.progress.update("\(label): building")
        let heapBefore = MemoryProbe.allocatedBytes()
        let database = library.database(songs: songs)
        let heapBytes = Double(MemoryProbe.allocatedBytes() - heapBefore)
        let records = Double(database.recordCount)

        // Single-record transactions: build with the builder, apply.
        context.progress.update("\(label): single-record transactions")
        var transactions: [Transaction] = []
        var current = database
        for n in 0..<1_000 {
            var builder = TransactionBuilder(on: current)
            let id = RecordID(library.random.int(below: songs))
            try builder.update(id, in: "songs", [.set("plays", .int(Int64(n)))])
            let transaction = builder.transaction(message: "play")
            current = try apply(current, transaction)
            transactions.append(transaction)
        }
        let applyNs =
            try Measure.median(samples: samples) {
                var value = database
                for transaction in transactions { value = try apply(value, transaction) }
                return value.basis
            } / Double(transactions.count)
        report.add(
            Self.name,
            section: label,
            subject: "apply, single-record transaction",
            value: 1e9 / applyNs,
            unit: "changes/s"
        )

        // A 10k-song import applied as one transaction.
        context.progress.update("\(label): import")
        var importChanges = PersistentMap<RecordID, Change>.Builder()
        for n in 0..<10_000 {
            importChanges[RecordID(songs + n)] = .insert(
                library.song(songs + n, artists: songs / 50, albums: songs / 10)
            )
        }
        let importTransaction = Transaction(
            t: 2,
            basis: 1,
            message: "import",
            changes: ["songs": importChanges.build()]
        )
        let importNs = try Measure.median(samples: samples) { try apply(database, importTransaction) }
        report.add(
            Self.name,
            section: label,
            subject: "apply, 10k-record import",
            value: importNs / 1e6,
            unit: "ms",
            note: songs >= 1_000_000 ? "goal at 1M: import ≤ 10 ms" : nil
        )

        // Flatten runs of 1,000 transactions.
        context.progress.update("\(label): flatten")
        let flattenNs = try Measure.median(samples: samples) { try flatten(transactions).changeCount }
        report.add(
            Self.name,
            section: label,
            subject: "flatten, runs of 1,000",
            value: 1e9 * 1_000 / flattenNs,
            unit: "transactions/s"
        )

        // Whole-database encode and decode.
        context.progress.update("\(label): encode/decode")
        var encoded: [UInt8] = []
        let encodeNs = Measure.median(samples: samples) {
            encoded = BinaryCodec.encode(database)
            return encoded.count
        }
        // Each sample's value is freed after its clock stops, not inside the next sample.
        let decodeNs = try Measure.median(samples: samples) { try BinaryCodec.decodeDatabase(encoded) }
        let decoded = try BinaryCodec.decodeDatabase(encoded)
        guard decoded == database else { throw BenchError.verificationFailed("decoded database differs") }
        var copy = [UInt8](repeating: 0, count: encoded.count)
        let copyNs = Measure.median(samples: samples) {
            copy.withUnsafeMutableBytes { target in encoded.withUnsafeBytes { target.copyMemory(from: $0) } }
            return copy.count
        }
        let megabytes = Double(encoded.count) / 1e6
        report.add(
            Self.name,
            section: label,
            subject: "encode whole database",
            value: megabytes / (encodeNs / 1e9),
            unit: "MB/s",
            baseline: ("memcpy", megabytes / (copyNs / 1e9))
        )
        report.add(
            Self.name,
            section: label,
            subject: "decode + build whole database",
            value: records / (decodeNs / 1e9),
            unit: "records/s",
            note: songs >= 1_000_000 ? "goal at 1M: decode + build ≥ 3M records/s" : nil
        )
        report.add(
            Self.name,
            section: label,
            subject: "encoded bytes per record",
            value: Double(encoded.count) / records,
            unit: "B"
        )
        report.add(
            Self.name,
            section: label,
            subject: "in-memory bytes per record",
            value: heapBytes / records,
            unit: "B",
            baseline: ("encoded", Double(encoded.count) / records),
            note: songs >= 1_000_000 ? "goal at 1M: in memory ≤ 1.5x encoded" : nil
        )
        context.progress.done()
        report.printSection(label)
    }
}
