import DeterministicRandom
import Foundation
import Strata
import Testing

/// Index entries of every size, from empty to tens of KB (inline, split
/// past 30 bytes, several snapshot chunks), through what a store's life
/// does to them: snapshots, compaction blocks, many reopen cycles, as-of
/// values, a torn log tail.
@Suite("Index entries through a store's life")
struct IndexLifecycleTests {
    /// Text lengths around the entries' boundaries (16 and 30 bytes) and
    /// far past them; the longest make the index span several chunks.
    static let lengths = [0, 1, 13, 14, 15, 16, 17, 24, 27, 28, 29, 30, 31, 64, 1_000, 5_000, 40_000]

    static func text(_ n: Int, length: Int) -> String {
        // NUL, multi-byte characters and a distinguishing tail, cut to `length` bytes.
        let stem = String(repeating: "\u{0}é東\(n % 7)", count: length / 7 + 1) + "#\(n)"
        return String(decoding: Array(stem.utf8.prefix(length)), as: UTF8.self)
    }

    /// One transaction of inserts, updates (lengths change) and deletes.
    static func edit(_ builder: inout TransactionBuilder, round: Int, random: inout SplitMix64) throws {
        for k in 0..<30 {
            let n = round * 30 + k
            let length = lengths[(n * 7 + round) % lengths.count]
            try builder.insert(
                ["text": .string(text(n, length: length)), "code": .int(Int64(n))],
                id: RecordID(n),
                into: "t"
            )
        }
        guard round > 0 else { return }
        for _ in 0..<10 {
            let id = RecordID(random.int(below: round * 30))
            guard builder.database[table: "t"][id] != nil else { continue }
            if random.int(below: 4) == 0 {
                try builder.delete(id, from: "t")
            } else {
                let length = lengths[random.int(below: lengths.count)]
                try builder.update(id, in: "t", [.set("text", .string(text(random.int(below: 1_000), length: length)))])
            }
        }
    }

    /// The index answers as a scan of the same value does: the same value
    /// without its indexes (a filter alone still reads a serving index).
    static func checkIndexes(_ value: Database, _ comment: Comment) throws {
        value._invariantCheck()
        var dropper = TransactionBuilder(on: value)
        for name in value[table: "t"].indexDefinitions.map(\.name) { try dropper.dropIndex(name, on: "t") }
        let bare = dropper.database
        #expect(bare[table: "t"].indexDefinitions.isEmpty)
        for descending in [false, true] {
            let indexed = value.query("t").order(by: "text", descending: descending)
            #expect(try indexed.explain().access != .scan, comment)
            // (Without an index, an order alone is refused: a filter asks for the scan.)
            let scanned = bare.query("t").order(by: "text", descending: descending).filter { _ in true }
            #expect(try scanned.explain().access == .scan, comment)
            #expect(try indexed.ids() == scanned.ids(), comment)
        }
        let codes = try value.query("t").order(by: "code").ids()
        #expect(codes.count == value[table: "t"].count, comment)
    }

    @Test("entries of 0 B to 40 KB read back after snapshots, compaction, eight reopen cycles and a torn tail")
    func entriesThroughTheLifecycle() async throws {
        let path = temporaryStorePath("index-lifecycle")
        defer { removeStore(path) }
        var random = SplitMix64(seed: 91)
        var values: [Int64: Database] = [:]
        var store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "indexes") { builder in
            try builder.createIndex("byText", on: "t", fields: ["text"])
            try builder.createIndex("byCode", on: "t", fields: ["code"], unique: true)
        }
        var round = 0
        func commitRounds(_ count: Int) async throws {
            for _ in 0..<count {
                let thisRound = round
                var roundRandom = SplitMix64(seed: random.next())
                // Messages and metadata from empty to 2 MB.
                let messageLength = [0, 1, 4_095, 4_097, 70_000, 2_000_000][thisRound % 6]
                let report = try await store.transact(
                    message: String(repeating: "m", count: messageLength),
                    metadata: [
                        "round": .int(Int64(thisRound)),
                        "note": .string(Self.text(thisRound, length: messageLength / 100)),
                    ]
                ) { builder in try Self.edit(&builder, round: thisRound, random: &roundRandom) }
                values[report.transaction.t] = store.current
                round += 1
            }
        }
        try await commitRounds(20)
        try await store.snapshot()
        try await commitRounds(20)
        // Blocks are kept on disk from 256 transactions on: single-record
        // edits of every length fill the history past that.
        for n in 0..<260 {
            let id = RecordID(n % (round * 30))
            let length = Self.lengths[n % Self.lengths.count]
            let report = try await store.transact { builder in
                guard builder.database[table: "t"][id] != nil else { return }
                try builder.update(id, in: "t", [.set("text", .string(Self.text(n, length: length)))])
            }
            values[report.transaction.t] = store.current
        }
        try await store.compact()
        let blocks = (try? FileManager.default.contentsOfDirectory(atPath: path + "/blocks")) ?? []
        #expect(blocks.contains { $0.hasPrefix("block-") }, "compaction wrote no block")
        try await store.close()

        for cycle in 0..<8 {
            store = try await Store.open(at: path, options: testOptions())
            let current = store.current
            let last = try #require(values.keys.max())
            #expect(current == values[last], "cycle \(cycle)")
            try Self.checkIndexes(current, "cycle \(cycle), current")
            for t in [Int64(2), 17, 21, 33, 100, 257, 300, last - 1] where values[t] != nil {
                let past = try await store.database(asOf: t)
                #expect(past == values[t], "cycle \(cycle), as of \(t)")
                try Self.checkIndexes(past, "cycle \(cycle), as of \(t)")
            }
            try await store.verify()
            try await commitRounds(3)
            if cycle % 3 == 1 { try await store.snapshot() }
            if cycle % 3 == 2 { try await store.compact() }
            try await store.close()
        }

        // A torn tail: half a frame's worth of bytes after the last commit.
        let segment = try #require(logSegments(path).last)
        let handle = try #require(FileHandle(forWritingAtPath: segment))
        handle.seekToEndOfFile()
        handle.write(Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 131) }))
        try handle.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        let last = try #require(values.keys.max())
        #expect(reopened.current == values[last])
        try Self.checkIndexes(reopened.current, "after the torn tail")
        try await reopened.verify()
        try await reopened.close()
    }
}
