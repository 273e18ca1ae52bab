import Foundation
import Strata
import Testing

@Suite("Store block files")
struct StoreBlockFileTests {
    /// A store of 700 random transactions, no checkpoints (so rebuilds use
    /// long runs and their blocks), and every published value.
    static func makeStore(_ path: String, seed: UInt64) async throws -> (Store, [Database], StoreOptions) {
        var random = SeededRandom(seed: seed)
        var options = testOptions()
        options.checkpointsKept = 0
        options.rebuildBudget = nil
        options.snapshotEveryLogBytes = nil
        let store = try await Store.open(at: path, options: options)
        var values = [store.current]
        for _ in 0..<700 {
            try await StoreTests.randomCommit(store, &random)
            values.append(store.current)
        }
        return (store, values, options)
    }

    static func blockFiles(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path + "/blocks")) ?? [])
            .filter { $0.hasPrefix("block-") && $0.hasSuffix(".strata") }.sorted().map { path + "/blocks/" + $0 }
    }

    /// File identities: a rewrite renames a new file into place.
    static func inodes(_ files: [String]) throws -> [Int] {
        try files.map { try FileManager.default.attributesOfItem(atPath: $0)[.systemFileNumber] as? Int ?? -1 }
    }

    static let ts: [Int64] = [0, 1, 100, 255, 256, 257, 300, 350, 511, 512, 513, 600, 699, 700]

    @Test("blocks of 256+ transactions are written once, reused after reopen")
    func reusedAfterReopen() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var (store, values, options) = try await Self.makeStore(path, seed: 11)
        _ = try await StoreRebuildTests.checkAsOf(store, values, Self.ts, "built")
        try await store.close()
        let files = Self.blockFiles(path)
        #expect(!files.isEmpty, "\(files)")
        let written = try Self.inodes(files)

        store = try await Store.open(at: path, options: options)
        _ = try await StoreRebuildTests.checkAsOf(store, values, Self.ts, "reopened")
        try await store.close()
        // Read back, not rebuilt: a rewrite would rename a new file into place.
        #expect(Self.blockFiles(path) == files)
        #expect(try Self.inodes(files) == written)
    }

    @Test(
        "damaged block files are rebuilt from the log: every byte position, random garbage",
        arguments: [UInt64(21), 22]
    )
    func damaged(seed: UInt64) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var (store, values, options) = try await Self.makeStore(path, seed: seed)
        _ = try await StoreRebuildTests.checkAsOf(store, values, Self.ts, "seed \(seed) built")
        try await store.close()
        let files = Self.blockFiles(path)
        let originals = try files.map { try [UInt8](Data(contentsOf: URL(fileURLWithPath: $0))) }
        let blockNote = "a compaction block that does not check"
        let sound = try Store.verify(at: path)
        #expect(sound.isSound && sound.blocks == files.count, "seed \(seed): \(sound.problems)")
        #expect(!sound.notes.contains { $0.contains(blockNote) }, "seed \(seed): \(sound.notes)")
        var random = SeededRandom(seed: seed)
        for round in 0..<24 {
            // Mutate every block file: a flipped byte (header or payload),
            // a truncation, or random bytes of random length.
            for (file, original) in zip(files, originals) {
                var bytes = original
                switch round % 3 {
                case 0: bytes[random.int(below: bytes.count)] ^= UInt8(1 + random.int(below: 255))
                case 1: bytes.removeLast(1 + random.int(below: bytes.count))
                default: bytes = (0..<random.int(below: 200)).map { _ in UInt8(random.int(below: 256)) }
                }
                try Data(bytes).write(to: URL(fileURLWithPath: file))
            }
            // A cache, not the record: noted, and the store stays sound.
            let report = try Store.verify(at: path)
            #expect(report.isSound, "seed \(seed) round \(round): \(report.problems)")
            #expect(
                report.notes.filter { $0.contains(blockNote) }.count == files.count,
                "seed \(seed) round \(round): \(report.notes)"
            )
            store = try await Store.open(at: path, options: options)
            let ts = (0..<6).map { _ in Int64(random.int(below: 701)) } + [300, 600]
            _ = try await StoreRebuildTests.checkAsOf(store, values, ts, "seed \(seed) round \(round)")
            try await store.close()
        }
        // compact() rebuilds what the last round left damaged: an as-of
        // rebuilds only the blocks its plan reads, and the plan's start
        // depends on measured costs (a serial run once left one unread).
        store = try await Store.open(at: path, options: options)
        try await store.compact()
        try await store.close()
        let notes = try Store.verify(at: path).notes
        #expect(notes.allSatisfy { !$0.contains(blockNote) }, "seed \(seed): \(notes)")
        // Intact files now: read back, not rewritten.
        let rewritten = Self.blockFiles(path)
        #expect(!rewritten.isEmpty)
        let inodes = try Self.inodes(rewritten)
        store = try await Store.open(at: path, options: options)
        _ = try await StoreRebuildTests.checkAsOf(store, values, Self.ts, "seed \(seed) rewritten")
        // compact() removes blocks that do not check: these do.
        try await store.compact()
        try await store.close()
        #expect(try Self.inodes(rewritten) == inodes)
    }

    @Test("compaction over hundreds of log segments holds a few descriptors, and its blocks serve as-of")
    func compactionOverManySegments() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var random = SeededRandom(seed: 31)
        var options = testOptions()
        options.checkpointsKept = 0
        options.rebuildBudget = nil
        options.snapshotEveryLogBytes = nil
        options.segmentSize = 256  // a segment or two per transaction
        var store = try await Store.open(at: path, options: options)
        var values = [store.current]
        for _ in 0..<600 {
            try await StoreTests.randomCommit(store, &random)
            values.append(store.current)
        }
        try await store.close()
        #expect(logSegments(path).count > 100, "\(logSegments(path).count) segments")
        // Reopened without its blocks: nothing cached, so compaction reads
        // the log from t 1.
        for file in Self.blockFiles(path) { try FileManager.default.removeItem(atPath: file) }
        let counting = ReadCountingFileSystem()
        var reading = options
        reading.fileSystem = counting
        store = try await Store.open(at: path, options: reading)
        try await store.compact()
        let held = counting.mostOpenSegments.withLock { $0 }
        #expect(held <= 16, "log files open at once: \(held)")
        #expect(!Self.blockFiles(path).isEmpty)
        _ = try await StoreRebuildTests.checkAsOf(
            store,
            values,
            [0, 1, 255, 256, 257, 511, 512, 599, 600],
            "compacted"
        )
        try await store.close()
    }

    @Test("a block file of a history since cut is not used")
    func staleAfterTruncate() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var (store, values, options) = try await Self.makeStore(path, seed: 31)
        _ = try await StoreRebuildTests.checkAsOf(store, values, Self.ts, "built")
        // Every block written (as-of writes the ones it builds off the actor).
        try await store.compact()
        let files = Self.blockFiles(path)
        #expect(files.contains { $0.hasSuffix("-00000000000000000257.strata") }, "\(files)")
        let saved = try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }

        // Cut inside the second 256-block, then commit a different history over it.
        try await store.truncate(after: 300)
        values.removeSubrange(301...)
        #expect(Self.blockFiles(path).allSatisfy { !$0.hasSuffix("-00000000000000000257.strata") })
        var random = SeededRandom(seed: 99)
        for _ in 0..<400 {
            try await StoreTests.randomCommit(store, &random)
            values.append(store.current)
        }
        try await store.close()
        // Put the old files back, as a crash between the cut and their removal could.
        for (file, data) in zip(files, saved) { try data.write(to: URL(fileURLWithPath: file)) }
        // Sound as a file, but its last transaction is not this log's: noted by verify.
        let report = try Store.verify(at: path)
        #expect(report.isSound, "\(report.problems)")
        let stale = report.notes.filter { $0.contains("a compaction block that does not check") }
        #expect(stale.count == 1 && stale[0].contains("-00000000000000000257.strata"), "\(report.notes)")
        store = try await Store.open(at: path, options: options)
        _ = try await StoreRebuildTests.checkAsOf(store, values, Self.ts, "after cut")
        try await store.close()
    }

    @Test("blocks built off the actor while the history is cut are never installed nor trusted")
    func cutWhileCompacting() async throws {
        var random = SeededRandom(seed: 41)
        for round in 0..<6 {
            let path = temporaryStorePath()
            defer { removeStore(path) }
            var (store, values, options) = try await Self.makeStore(path, seed: 41 &+ UInt64(round))
            // Commit 768 completes the third 256-block: its round is still
            // running when the cut lands inside or below it.
            for _ in 700..<768 {
                try await StoreTests.randomCommit(store, &random)
                values.append(store.current)
            }
            let cut = Int64(1 + random.int(below: 760))
            try await store.truncate(after: cut)
            values.removeSubrange(Int(cut + 1)...)
            // A new history long enough that rebuilds of t ≤ 1,000 start from
            // the empty value, through the block the round built.
            for _ in 0..<(2_000 - Int(cut)) {
                try await StoreTests.randomCommit(store, &random)
                values.append(store.current)
            }
            let ts: [Int64] = [0, 255, 256, 257, 511, 512, 513, 767, 768, 800, 1_000, 1_024, 2_000]
            _ = try await StoreRebuildTests.checkAsOf(store, values, ts, "round \(round) cut \(cut)")
            try await store.close()
            store = try await Store.open(at: path, options: options)
            _ = try await StoreRebuildTests.checkAsOf(store, values, ts, "round \(round) cut \(cut), reopened")
            try await store.close()
        }
    }
}
