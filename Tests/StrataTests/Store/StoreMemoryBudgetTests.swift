import Foundation
import Strata
import Testing

@Suite("Store memory budget")
struct StoreMemoryBudgetTests {
    @Test("a budget is a fraction of the value with a floor, capped by bytes; odd figures count as 0")
    func limits() {
        #expect(MemoryBudget.proportional.limit(valueBytes: 100 << 20) == 50 << 20)
        #expect(MemoryBudget.proportional.limit(valueBytes: 1_000) == 4 << 20)
        #expect(MemoryBudget.proportional.limit(valueBytes: 0) == 4 << 20)
        #expect(MemoryBudget.fraction(0.25, floor: 0).limit(valueBytes: 1_000) == 250)
        #expect(MemoryBudget.bytes(1_234).limit(valueBytes: 1 << 40) == 1_234)
        #expect(MemoryBudget(fraction: 2, bytes: 5_000).limit(valueBytes: 1_000) == 2_000)
        #expect(MemoryBudget(fraction: 2, bytes: 5_000).limit(valueBytes: 10_000) == 5_000)
        #expect(MemoryBudget.unlimited.limit(valueBytes: 1 << 40) == .max)
        #expect(MemoryBudget(fraction: -1, bytes: -5, floor: -7).limit(valueBytes: 1_000) == 0)
        #expect(MemoryBudget(fraction: .nan).limit(valueBytes: 1_000) == 0)
        #expect(MemoryBudget(fraction: .infinity).limit(valueBytes: 1_000) == .max)
        #expect(MemoryBudget.fraction(1e300).limit(valueBytes: .max) == .max)
        #expect(MemoryBudget.fraction(0.5).limit(valueBytes: -9) == 4 << 20)
        #expect(MemoryBudget.fraction(.infinity, floor: 0).limit(valueBytes: 0) == 0)
        var changed = MemoryBudget.proportional
        changed.fraction = .nan
        changed.bytes = -1
        #expect(changed.limit(valueBytes: 1 << 30) == 0)
        changed.fraction = -3
        changed.bytes = nil
        #expect(changed.limit(valueBytes: 1 << 30) == 4 << 20)
    }

    /// Text of `bytes` bytes, mixing ASCII and multi-byte scalars.
    static func text(_ bytes: Int, _ random: inout SeededRandom) -> String {
        let pieces = ["la ", "fa ", "ré ", "音楽 ", "🎵 "]
        var text = ""
        while text.utf8.count < bytes { text += pieces[random.int(below: pieces.count)] }
        return text
    }

    /// One transaction of a library's life: an import of 20–120 songs
    /// (some with 5–9 KB of lyrics), an edit, a deletion or a bulk edit.
    static func libraryCommit(_ store: Store, _ random: inout SeededRandom, next: inout Int) async throws {
        let value = store.current
        let count = value.tables["songs"]?.count ?? 0
        let kind = count < 200 ? 0 : random.int(below: 10)
        var sizes: [Int] = []
        for _ in 0..<(kind == 0 ? 20 + random.int(below: 100) : 1) {
            sizes.append(random.chance(20) ? 5_000 + random.int(below: 4_000) : 40 + random.int(below: 200))
        }
        let lyrics = sizes.map { text($0, &random) }
        let ids = (0..<8).map { _ in RecordID(random.int(below: max(next, 1))) }
        try await store.transact(message: "step \(value.basis + 1)") { builder in
            switch kind {
            case 0:
                for text in lyrics {
                    next += 1
                    try builder.insert(
                        ["title": .string("Song \(next)"), "lyrics": .string(text)],
                        id: RecordID(next),
                        into: "songs"
                    )
                }
            case 1:
                if value.record(ids[0], in: "songs") != nil { try builder.delete(ids[0], from: "songs") }
            case 2:
                for id in ids where value.record(id, in: "songs") != nil {
                    try builder.update(id, in: "songs", [.set("plays", .int(Int64(random.int(below: 1_000))))])
                }
            default:
                if value.record(ids[0], in: "songs") != nil {
                    try builder.update(ids[0], in: "songs", [.set("lyrics", .string(lyrics[0]))])
                }
            }
        }
    }

    /// Whether the estimated value size is within 2x of the measured one.
    static func estimateFollows(_ estimated: Int, _ measured: Int) -> Bool {
        let ratio = Double(estimated) / Double(max(measured, 1))
        return ratio > 0.5 && ratio < 2
    }

    /// Commits small edits (their values appended to `values`) until the
    /// engine's measured memory is within the budget and the value's size
    /// estimate follows it: both are measured off the store's actor, so the
    /// last measurements may still be running.
    static func settle(
        _ store: Store,
        _ values: inout [Database]
    ) async throws -> StoreStatistics {
        var statistics = await store.statistics(measuringMemory: true)
        // A generator of its own: the history after this does not depend on
        // how many touches it took.
        var random = SeededRandom(seed: UInt64(values.count))
        for _ in 0..<200 {
            // The value's size is measured off the actor too: its estimate
            // follows once a measurement lands.
            if let memory = statistics.memory, memory.engine <= statistics.memoryBudget,
                Self.estimateFollows(statistics.estimatedValueBytes, memory.currentValue)
            {
                break
            }
            try await store.transact(message: "touch") { builder in
                try builder.upsert(["n": .int(Int64(random.int(below: 1_000)))], id: 0, into: "settings")
            }
            values.append(store.current)
            try await Task.sleep(for: .milliseconds(10))
            statistics = await store.statistics(measuringMemory: true)
        }
        return statistics
    }

    @Test(
        "the engine's measured memory stays within a proportional budget, as-of stays exact, across reopens",
        arguments: [UInt64(1), 2]
    )
    func proportionalBudget(seed: UInt64) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var random = SeededRandom(seed: seed)
        var options = testOptions()
        options.memoryBudget = .fraction(seed == 1 ? 0.05 : 0.02, floor: 0)
        options.checkpointInterval = 2
        options.cachedTransactionChanges = 1_000_000
        var store = try await Store.open(at: path, options: options)
        var values = [store.current]
        var next = 0
        for round in 0..<3 {
            for _ in 0..<250 {
                try await Self.libraryCommit(store, &random, next: &next)
                values.append(store.current)
            }
            let statistics = try await Self.settle(store, &values)
            let memory = try #require(statistics.memory)
            let context = "seed \(seed) round \(round): \(memory), budget \(statistics.memoryBudget)"
            #expect(memory.engine <= statistics.memoryBudget, "\(context)")
            // The budget binds: without it, 125 checkpoints (one every 2
            // transactions since the open) would be kept.
            #expect(memory.checkpointCount < 125, "\(context)")
            // The estimate of the value's size follows its measured size,
            // though this history's record sizes swing (lyrics of 40 bytes
            // replaced by 9 KB and back).
            #expect(
                Self.estimateFollows(statistics.estimatedValueBytes, memory.currentValue),
                "\(context): estimated \(statistics.estimatedValueBytes)"
            )
            for t in stride(from: Int64(0), through: Int64(values.count - 1), by: 37) {
                #expect(try await store.database(asOf: t) == values[Int(t)], "\(context) t \(t)")
            }
            try await store.close()
            store = try await Store.open(at: path, options: options)
        }
        try await store.close()
    }

    @Test("a zero budget keeps nothing in memory and loses nothing: history, as-of and revert read back from disk")
    func zeroBudget() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var random = SeededRandom(seed: 9)
        var options = testOptions()
        options.memoryBudget = .bytes(0)
        var store = try await Store.open(at: path, options: options)
        var values = [store.current]
        var next = 0
        for _ in 0..<300 {
            try await Self.libraryCommit(store, &random, next: &next)
            values.append(store.current)
        }
        for cycle in 0..<2 {
            for t in stride(from: Int64(0), through: 300, by: 13) {
                #expect(try await store.database(asOf: t) == values[Int(t)], "cycle \(cycle) t \(t)")
            }
            let statistics = await store.statistics(measuringMemory: true)
            let memory = try #require(statistics.memory)
            #expect(statistics.memoryBudget == 0)
            #expect(memory.checkpointCount == 0, "\(memory)")
            #expect(memory.cachedTransactions.unique == 0 && memory.compactionBlocks.unique == 0, "\(memory)")
            #expect(statistics.engineBytes == 0)
            #expect(statistics.transactionCount == 300)
            try await store.close()
            store = try await Store.open(at: path, options: options)
        }
        try await store.revert(to: 150)
        #expect(store.current.tables == values[150].tables)
        try await store.close()
    }

    @Test("the default budget is half the value's estimated bytes, at least 4 MiB, and reported")
    func defaultBudgetReported() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        var random = SeededRandom(seed: 3)
        var next = 0
        for _ in 0..<40 { try await Self.libraryCommit(store, &random, next: &next) }
        let statistics = await store.statistics
        #expect(statistics.memoryBudget == max(4 << 20, statistics.estimatedValueBytes / 2))
        #expect(statistics.estimatedValueBytes > 0)
        #expect(statistics.engineBytes <= statistics.memoryBudget)
        try await store.close()
    }

    @Test(
        "under a budget, truncate with snapshots and blocks in play: every record reads back, at every size, across reopens"
    )
    func truncateUnderBudget() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var random = SeededRandom(seed: 11)
        var options = testOptions()
        options.memoryBudget = .fraction(0.05, floor: 0)
        options.snapshotEveryTransactions = 60
        var store = try await Store.open(at: path, options: options)
        var values = [store.current]
        var next = 0
        // Messages, metadata and records from 0 bytes to 3 MB.
        for n in 0..<320 {
            if n % 100 == 50 {
                let big = String(repeating: "音楽🎵 ", count: 3 << 20 / 11)
                try await store.transact(message: String(repeating: "m", count: n == 150 ? 70_000 : 0)) { builder in
                    try builder.upsert(["lyrics": .string(big), "empty": ""], id: RecordID(-n), into: "songs")
                }
            } else {
                try await Self.libraryCommit(store, &random, next: &next)
            }
            values.append(store.current)
        }
        try await store.truncate(after: 200)
        values.removeSubrange(201...)
        for cycle in 0..<3 {
            let statistics = await store.statistics
            #expect(statistics.transactionCount == 200, "cycle \(cycle)")
            #expect(statistics.memoryBudget < .max)
            for t in stride(from: Int64(0), through: 200, by: 9) {
                #expect(try await store.database(asOf: t) == values[Int(t)], "cycle \(cycle) t \(t)")
            }
            #expect(try await store.transaction(at: 151)?.message.count == 70_000)
            try await Self.libraryCommit(store, &random, next: &next)
            values.append(store.current)
            try await store.truncate(after: 200)
            values.removeLast()
            try await store.close()
            store = try await Store.open(at: path, options: options)
            #expect(store.current == values[200], "cycle \(cycle): the value after reopening")
        }
        try await store.close()
    }
}
