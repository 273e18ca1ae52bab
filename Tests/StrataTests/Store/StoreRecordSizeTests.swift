import Foundation
import Strata
import Testing

/// Whatever was written and acknowledged reads back, whatever its size:
/// messages, metadata and change sets from 0 bytes to several MB, across
/// reopen, snapshots, compaction blocks and `.truncateAtDamage`.
@Suite("Store record sizes", .serialized)
struct StoreRecordSizeTests {
    /// Sizes around every boundary a reader might assume: varint lengths,
    /// the 4 KiB pages, segment limits, and several MB.
    static let sizes = [
        0, 1, 127, 128, 4_062, 4_063, 4_064, 4_095, 4_096, 4_097, 5_000, 16_383, 16_384, 65_536, 1 << 20, 3 << 20,
    ]

    static func text(_ size: Int, seed: Int) -> String {
        // Multi-byte characters too: sizes are UTF-8 bytes, not characters.
        let unit = seed % 2 == 0 ? "m" : "é"
        return String(repeating: unit, count: size / unit.utf8.count)
    }

    static func bytes(_ size: Int, seed: Int) -> [UInt8] {
        var random = SeededRandom(seed: UInt64(size &+ seed))
        return random.bytes(size)
    }

    /// Commits one transaction per size (message, metadata and records of
    /// that size), a transaction of many records, and enough small ones
    /// that the large ones fall inside a persisted compaction block.
    static func fill(_ store: Store) async throws -> [Int64: Database] {
        var values: [Int64: Database] = [0: store.current]
        for (i, size) in sizes.enumerated() {
            let metadata: [Key: Value] = [
                "note": .string(text(size, seed: i)), "blob": .bytes(bytes(size, seed: i)),
            ]
            try await store.transact(message: text(size, seed: i + 1), metadata: metadata) { builder in
                try builder.insert(
                    ["payload": .bytes(bytes(size, seed: i)), "text": .string(text(size, seed: i))],
                    id: RecordID(i),
                    into: "big"
                )
                if i > 0 {
                    // Eleven fields: the update reads and writes the record
                    // in one pass (`Record._replacing`), here and at every
                    // replay, as-of and reopen.
                    var patch: Patch = [.set("next", .string(text(size, seed: i)))]
                    for k in 0..<10 { patch.set(FieldPath(field: Key("w\(k)"), keys: []), to: .int(Int64(i * k))) }
                    try builder.update(RecordID(i - 1), in: "big", patch)
                }
            }
            values[store.current.basis] = store.current
            if i == sizes.count / 2 { try await store.snapshot() }
        }
        try await store.transact(message: "", metadata: [:]) { builder in
            for n in 0..<2_000 {
                try builder.insert(
                    ["n": .int(Int64(n)), "pad": .bytes(bytes(2_000, seed: n))],
                    id: RecordID(n),
                    into: "many"
                )
            }
        }
        values[store.current.basis] = store.current
        // The empty transaction: no message, no metadata, no changes.
        try await store.transact { _ in }
        values[store.current.basis] = store.current
        while store.current.basis < 300 {
            let n = store.current.basis
            try await store.transact(message: "small \(n)") {
                try $0.upsert(["n": .int(n)], id: RecordID(Int(n % 10)), into: "small")
            }
            values[store.current.basis] = store.current
        }
        return values
    }

    /// `sizedThrough`: the last t that is still one of `fill`'s sized
    /// transactions (a truncate may have replaced those after it).
    static func check(
        _ store: Store,
        against values: [Int64: Database],
        label: String,
        sizedThrough: Int64 = .max
    ) async throws {
        #expect(store.current == values[store.current.basis], "\(label): current")
        for (i, size) in sizes.enumerated() {
            let t = Int64(i + 1)
            guard t <= min(store.current.basis, sizedThrough), let transaction = try await store.transaction(at: t)
            else { continue }
            #expect(transaction.message == text(size, seed: i + 1), "\(label): message of \(size) bytes")
            #expect(transaction.metadata["blob"] == .bytes(bytes(size, seed: i)), "\(label): metadata of \(size) bytes")
            #expect(transaction.metadata["note"] == .string(text(size, seed: i)), "\(label)")
        }
        let history = try await store.history(limit: .max)
        #expect(history.count == Int(store.current.basis), "\(label): history")
        for t in stride(from: Int64(0), through: store.current.basis, by: 7) {
            #expect(try await store.database(asOf: t) == values[t], "\(label): as of \(t)")
        }
        for t in 0...min(Int64(sizes.count + 2), store.current.basis) {
            #expect(try await store.database(asOf: t) == values[t], "\(label): as of \(t)")
        }
    }

    /// Segments of 1 MiB (records span them) and a snapshot every 100 transactions.
    static func options() -> StoreOptions {
        var options = testOptions(.everyCommit)
        options.segmentSize = 1 << 20
        options.snapshotEveryTransactions = 100
        return options
    }

    /// Snapshots written at zstd level `level` (1: what `strata import`
    /// writes), read back by stores of the default level.
    @Test(
        "records of every size read back across reopen, snapshots and compaction blocks",
        arguments: [Int32(3), 1]
    )
    func everySize(level: Int32) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let options = Self.options()
        var writing = options
        writing.compressionLevel = level
        let store = try await Store.open(at: path, options: writing)
        let values = try await Self.fill(store)
        try await Self.check(store, against: values, label: "live")
        try await store.close()
        let blocks = (try? FileManager.default.contentsOfDirectory(atPath: path + "/blocks")) ?? []
        #expect(blocks.contains { $0.hasPrefix("block-L1-") }, "a persisted block of the first 256: \(blocks)")
        // The deep check replays every size and compares it with the snapshots.
        let verified = try Store.verify(at: path)
        #expect(verified.isSound, "\(verified.problems)")
        #expect(verified.transactions == values.keys.max() && verified.snapshots >= 2 && verified.blocks >= 1)

        let reopened = try await Store.open(at: path, options: options)
        #expect(reopened.warnings.isEmpty, "\(reopened.warnings)")
        // The older snapshots are as-of starts too: records of every size read back through them.
        #expect(await reopened.statistics.snapshotBases.count >= 2)
        try await Self.check(reopened, against: values, label: "reopened")
        try await reopened.close()

        // Without snapshots: the log alone, every record decoded at open.
        for file in snapshotFiles(path) { try FileManager.default.removeItem(atPath: file) }
        let fromLog = try await Store.open(at: path, options: options)
        try await Self.check(fromLog, against: values, label: "from the log")
        try await fromLog.close()
    }

    @Test("records of every size read back after truncate(after:) among them, new commits and many reopens")
    func everySizeAfterTruncate() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let options = Self.options()
        let store = try await Store.open(at: path, options: options)
        var values = try await Self.fill(store)
        // Cut after the snapshot taken among the large records, before the
        // largest ones (and the compaction block of the first 256).
        let cut = Int64(Self.sizes.count - 3)
        try await store.truncate(after: cut)
        values = values.filter { $0.key <= cut }
        #expect(store.current == values[cut])
        for n in 0..<20 {
            try await store.transact(message: "again \(n)") {
                try $0.upsert(
                    ["n": .int(Int64(n)), "pad": .bytes(Self.bytes(n * 300, seed: n))],
                    id: RecordID(n % 3),
                    into: "again"
                )
            }
            values[store.current.basis] = store.current
        }
        try await Self.check(store, against: values, label: "truncated", sizedThrough: cut)
        try await store.close()
        for cycle in 0..<30 {
            let reopened = try await Store.open(at: path, options: options)
            #expect(reopened.warnings.isEmpty, "cycle \(cycle): \(reopened.warnings)")
            if cycle % 10 == 0 {
                try await Self.check(reopened, against: values, label: "reopen \(cycle)", sizedThrough: cut)
            } else {
                #expect(reopened.current == values[reopened.current.basis], "cycle \(cycle)")
            }
            try await reopened.transact(message: "cycle \(cycle)") {
                try $0.upsert(["cycle": .int(Int64(cycle))], id: RecordID(cycle % 5), into: "cycles")
            }
            values[reopened.current.basis] = reopened.current
            if cycle % 7 == 0 { try await reopened.snapshot() }
            try await reopened.close()
        }
        let verified = try Store.verify(at: path)
        #expect(verified.isSound, "\(verified.problems)")
        let last = try await Store.open(at: path, options: options)
        try await Self.check(last, against: values, label: "last", sizedThrough: cut)
        try await last.close()
    }

    @Test("damage after large records keeps them under .truncateAtDamage")
    func damageAfterLargeRecords() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions()
        options.segmentSize = 64 << 20
        let store = try await Store.open(at: path, options: options)
        let values = try await Self.fill(store)
        try await store.close()
        // Damage the record of t 250: everything before it, large ones included, stays.
        // It lies in the last segment (the one open reads; a snapshot may
        // have sealed the large records' segment before it), named by its first t.
        let segment = try #require(logSegments(path).last)
        let first = StoreMissingHistoryTests.first(segment)
        try #require(first <= 250, "t 250 is in the last segment")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))
        let offsets = StoreHistoryTieTests.frameOffsets(bytes)
        bytes[offsets[250 - first] + 20] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        var recovering = options
        recovering.recovery = .truncateAtDamage
        let recovered = try await Store.open(at: path, options: recovering)
        #expect(recovered.current.basis == 249)
        try await Self.check(recovered, against: values, label: "truncated at 250")
        try await recovered.close()
    }

    @Test(
        "records over a log segment (multi-MB optimized), indexed, across 12 reopen cycles, snapshots by log bytes, truncate(after:) into them"
    )
    func reopenCyclesAndTruncate() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions(.everyCommit)
        // Records larger than a segment, snapshots due by log bytes (sizes
        // divided by TestScale in debug builds, in the same proportions).
        let scale = TestScale.divisor
        options.segmentSize = (1 << 20) / scale
        options.snapshotEveryLogBytes = (6 << 20) / scale
        options.rebuildBudget = nil  // snapshots by log bytes alone
        var values: [Int64: Database] = [0: Database()]
        var sizeOf: [Int64: Int] = [:]
        var truncatedTo: Int64?
        for cycle in 0..<12 {
            let store = try await Store.open(at: path, options: options)
            #expect(store.warnings.isEmpty, "cycle \(cycle): \(store.warnings)")
            let head = store.current.basis
            #expect(store.current == values[head], "cycle \(cycle): reopened value")
            // Indexes over multi-MB values (their entries front-coded in the
            // snapshots) read back as the records give them.
            if cycle == 0 {
                try await store.transact(message: "indexes") {
                    try $0.createIndex("byBlob", on: "large", fields: ["blob"])
                    try $0.createIndex("byCycle", on: "large", fields: ["cycle", "blob"])
                }
                values[store.current.basis] = store.current
            }
            store.current._invariantCheck()
            let byBlob = try store.current.query("large").order(by: "blob").ids()
            #expect(byBlob == (try store.current.query("large").filter { _ in true }.order(by: "blob").ids()))
            #expect(byBlob.count == store.current[table: "large"].count, "cycle \(cycle): one entry per record")
            // Past values, large transactions among them, rebuild after every reopen.
            for t in stride(from: Int64(cycle % 3), through: head, by: 3) {
                let past = try await store.database(asOf: t)
                #expect(past == values[t], "cycle \(cycle): as of \(t)")
                past._invariantCheck()
            }
            for (t, size) in sizeOf where t <= head {
                let transaction = try #require(try await store.transaction(at: t))
                #expect(transaction.message.utf8.count == size, "cycle \(cycle): message of t \(t)")
            }
            if cycle == 7 {
                // Cut inside the large history and grow a different one on top.
                let cut = head - 5
                try await store.truncate(after: cut)
                #expect(store.current == values[cut])
                values = values.filter { $0.key <= cut }
                sizeOf = sizeOf.filter { $0.key <= cut }
                truncatedTo = cut
            }
            for step in 0..<3 {
                let size = [(2 << 20) / scale + 17, 4_097, (3 << 20) / scale][(cycle + step) % 3]
                let seed = cycle * 10 + step
                try await store.transact(message: Self.text(size, seed: seed), metadata: ["cycle": .int(Int64(cycle))])
                {
                    try $0.upsert(
                        ["blob": .bytes(Self.bytes(size, seed: seed)), "cycle": .int(Int64(cycle))],
                        id: RecordID(seed % 5),
                        into: "large"
                    )
                }
                values[store.current.basis] = store.current
                sizeOf[store.current.basis] = Self.text(size, seed: seed).utf8.count
            }
            try await store.close()
            // Between the app's runs, the deep check: replay of records over
            // a segment and a decode run, the snapshots by digest, the cut.
            let verified = try Store.verify(at: path)
            #expect(verified.isSound, "cycle \(cycle): \(verified.problems)")
            #expect(verified.transactions == values.keys.max(), "cycle \(cycle)")
        }
        #expect(truncatedTo != nil)
        #expect(!snapshotFiles(path).isEmpty, "snapshots by log bytes were written")
        let last = try await Store.open(at: path, options: options)
        #expect(last.current == values[last.current.basis] && last.current.basis == values.keys.max())
        for t in values.keys.sorted() {
            let past = try await last.database(asOf: t)
            #expect(past == values[t], "as of \(t)")
            past._invariantCheck()
        }
        #expect(last.current[table: "large"].indexDefinitions.map(\.name) == ["byBlob", "byCycle"])
        try await last.close()
    }

    @Test("a transaction too large for one log record is refused, nothing written")
    func tooLarge() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.insert(["a": 1], id: 1, into: "t") }
        let before = store.current
        do {
            try await store.transact { builder in
                for n in 0..<5 {
                    try builder.insert(
                        ["blob": .bytes([UInt8](repeating: UInt8(n), count: 220 << 20))],
                        id: RecordID(n + 10),
                        into: "t"
                    )
                }
            }
            Issue.record("a transaction over 1 GiB was committed")
        } catch StoreError.transactionTooLarge(let size, let limit) {
            #expect(size > limit)
        }
        #expect(store.current == before)
        try await store.transact { try $0.insert(["a": 2], id: 2, into: "t") }
        try await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current.basis == 2 && reopened.warnings.isEmpty)
        try await reopened.close()
    }
}
