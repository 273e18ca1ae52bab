import Foundation
import Strata
import Testing

@Suite("Store")
struct StoreTests {
    /// One random edit through `transact`: insert, update, upsert or delete.
    static func randomCommit(_ store: Store, _ random: inout SeededRandom) async throws {
        let value = store.current
        let id = RecordID(random.int(below: 30))
        let exists = value.record(id, in: "songs") != nil
        let plays = Int64(random.int(below: 100))
        let (significant, kind, setPlays, album) = (
            random.chance(30), random.int(below: 4), random.chance(50), random.chance(20)
        )
        try await store.transact(message: "edit \(value.basis + 1)", significance: significant ? .significant : .normal)
        {
            builder in
            if !exists {
                try builder.insert(["title": .string("Song \(id)"), "plays": .int(plays)], id: id, into: "songs")
            } else if kind == 0 {
                try builder.delete(id, from: "songs")
            } else if kind == 1 {
                try builder.update(id, in: "songs", setPlays ? [.set("plays", .int(plays))] : [.unset("plays")])
            } else {
                try builder.upsert(["title": .string("Renamed \(plays)")], id: id, into: "songs")
            }
            if album {
                try builder.upsert(["name": .string("Album \(plays)")], id: RecordID(Int(plays % 5)), into: "albums")
            }
        }
    }

    /// Seed 2 keeps no decoded transactions, so every history read, revert
    /// and as-of reads the log back.
    @Test("reopening after every operation gives the same value and history", arguments: [UInt64(1), 2])
    func reopen(seed: UInt64) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var random = SeededRandom(seed: seed)
        var options = testOptions(.everyCommit)
        options.snapshotEveryTransactions = 7
        options.snapshotsKept = 2
        options.segmentSize = 512
        options.cachedTransactionChanges = seed == 2 ? 0 : 100_000
        var store = try await Store.open(at: path, options: options)
        for step in 0..<60 {
            switch random.int(below: 10) {
            case 0 where store.current.basis > 2:
                try await store.revert(to: Int64(random.int(below: Int(store.current.basis))))
            case 1 where store.current.basis > 2:
                let t = Int64(1 + random.int(below: Int(store.current.basis)))
                let target = try await store.transaction(at: t)!
                do {
                    try await store.revert(transaction: target.id)
                } catch StoreError.revertConflict {
                    // A later change touched the same fields: refused, nothing committed.
                }
            case 2: try await store.snapshot()
            default: try await Self.randomCommit(store, &random)
            }
            let value = store.current
            let history = try await store.history(limit: .max)
            try await store.close()
            store = try await Store.open(at: path, options: options)
            #expect(store.current == value, "seed \(seed) step \(step)")
            #expect(try await store.history(limit: .max) == history, "seed \(seed) step \(step)")
            #expect(store.warnings.isEmpty, "seed \(seed) step \(step): \(store.warnings)")
            #expect(try await replayHistory(store) == value, "seed \(seed) step \(step)")
        }
        #expect(snapshotFiles(path).count <= 2)
        #expect(logSegments(path).count > 1)
        try await store.close()
    }

    @Test("a second open for writing is refused while the first holds the store")
    func lock() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        await #expect(throws: StoreError.self) { try await Store.open(at: path, options: testOptions()) }
        do {
            _ = try await Store.open(at: path, options: testOptions())
        } catch let error as StoreError {
            #expect("\(error)".contains("open for writing elsewhere"))
        }
        try await store.close()
        let again = try await Store.open(at: path, options: testOptions())
        try await again.close()
    }

    /// Takes the lock through `descriptor`, waiting up to 2 s: a child process another test spawns
    /// may hold the store's lock a moment past its close, as in the test below.
    static func lockPatiently(_ descriptor: Int32) async throws -> Bool {
        guard descriptor >= 0 else { return false }
        for _ in 0..<200 {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test("a lock held a moment past close (a child process between fork and exec) does not refuse a reopen")
    func lockHeldBriefly() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.close()
        // What a spawned child holds until its exec: the lock taken through another descriptor.
        let descriptor = open(path + "/lock", O_RDWR | O_CLOEXEC)
        #expect(try await Self.lockPatiently(descriptor))
        let release = Task {
            try await Task.sleep(for: .milliseconds(20))
            close(descriptor)
        }
        let reopened = try await Store.open(at: path, options: testOptions())
        try await release.value
        try await reopened.close()

        // Held for good: still refused, as .locked.
        let holder = open(path + "/lock", O_RDWR | O_CLOEXEC)
        defer { close(holder) }
        #expect(try await Self.lockPatiently(holder))
        await #expect {
            _ = try await Store.open(at: path, options: testOptions())
        } throws: { error in
            if case .locked(let reported)? = error as? StoreError { return reported == path }
            return false
        }
    }

    @Test("revert, redo and per-record history against a model")
    func revertAndHistory() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        let empty = store.current
        let first = try await store.transact(message: "import") { builder in
            for n in 0..<5 {
                try builder.insert(["title": .string("Song \(n)"), "plays": 0], id: RecordID(n), into: "songs")
            }
        }
        let afterImport = store.current
        let edit = try await store.transact(message: "play") { try $0.update(2, in: "songs", [.set("plays", 5)]) }
        let afterEdit = store.current
        // Undo the import alone: refused, the edit changed a record it inserted.
        await #expect(throws: StoreError.self) { try await store.revert(transaction: first.transaction.id) }
        // Undo the edit, then redo it by reverting the revert.
        let undo = try await store.revert(transaction: edit.transaction.id)
        #expect(store.current.tables == afterImport.tables)
        #expect(undo.transaction.reverts == edit.transaction.id)
        try await store.revert(transaction: undo.transaction.id)
        #expect(store.current.tables == afterEdit.tables)
        // Back to before the import: everything gone, nothing deleted from history.
        try await store.revert(to: 0)
        #expect(store.current.tables == empty.tables)
        #expect(try await store.history(limit: .max).count == 5)
        #expect(try await store.database(asOf: 2).tables == afterEdit.tables)
        #expect(try await store.database(before: edit.transaction.id).tables == afterImport.tables)
        #expect(try await store.database(after: first.transaction.id).tables == afterImport.tables)
        #expect(try await store.database(at: .distantPast).tables == empty.tables)
        await #expect(throws: StoreError.self) { try await store.database(asOf: 99) }

        // Record 2: inserted, edited, edit undone, redone, removed by the revert to 0.
        let versions = try await store.versions(of: 2, in: "songs")
        #expect(versions.map(\.transaction.t) == [5, 4, 3, 2, 1])
        #expect(versions.map { $0.record?["plays"] } == [nil, 5, 0, 5, 0])
        #expect(try await store.history(HistoryFilter(table: "songs", record: 4)).map(\.t) == [5, 1])
        #expect(try await store.history(HistoryFilter(minimumSignificance: .significant)).count == 3)
        #expect(try await store.history(offset: 1, limit: 2).map(\.t) == [4, 3])

        // The destructive operation: history after t 2 is gone, for good.
        try await store.truncate(after: 2)
        #expect(store.current.tables == afterEdit.tables)
        #expect(try await store.history(limit: .max).count == 2)
        try await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current == afterEdit)
        try await reopened.close()
    }

    @Test("a history filter by record ID alone matches that ID's changes in every table, and only those")
    func recordFilterWithoutTable() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.insert(["x": 0], id: 1, into: "t") }  // t 1
        try await store.transact { try $0.insert(["x": 0], id: 2, into: "t") }  // t 2
        try await store.transact { try $0.insert(["y": 0], id: 1, into: "u") }  // t 3
        try await store.transact { try $0.createIndex("byX", on: "t", fields: ["x"]) }  // t 4
        try await store.transact { try $0.upsert(["x": 5], id: 1, into: "t") }  // t 5
        try await store.transact { try $0.insert(["s": 0], id: "1", into: "t") }  // t 6: a string ID
        #expect(try await store.history(HistoryFilter(record: 1)).map(\.t) == [5, 3, 1])
        #expect(try await store.history(HistoryFilter(table: "t", record: 1)).map(\.t) == [5, 1])
        #expect(try await store.history(HistoryFilter(record: "1")).map(\.t) == [6])
        #expect(try await store.history(HistoryFilter(record: 9)).isEmpty)
        #expect(try await store.history(HistoryFilter(record: 1), offset: 1, limit: 1).map(\.t) == [3])
        try await store.close()
    }

    @Test("feeds deliver each durable value and report in order")
    func feeds() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions(.grouped))
        let values = await store.values()
        let reports = await store.reports()
        for n in 0..<5 {
            try await store.transact(message: "n\(n)") {
                try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t")
            }
        }
        try await store.close()
        var seen: [Int64] = []
        for await value in values { seen.append(value.basis) }
        #expect(seen == [1, 2, 3, 4, 5])
        var messages: [String] = []
        for await report in reports { messages.append(report.transaction.message) }
        #expect(messages == ["n0", "n1", "n2", "n3", "n4"])
    }

    @Test("the values feed delivers the value a truncate leaves, as observers get it")
    func valuesAfterTruncate() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        let values = await store.values()
        for n in 1...4 { try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "s") } }
        try await store.truncate(after: 2)
        // Nothing cut: no value.
        try await store.truncate(after: 2)
        try await store.transact { try $0.insert(["n": 9], id: 9, into: "s") }
        try await store.close()
        var seen: [(basis: Int64, count: Int)] = []
        for await value in values { seen.append((value.basis, value[table: "s"].count)) }
        #expect(seen.map(\.basis) == [1, 2, 3, 4, 2, 3])
        #expect(seen.map(\.count) == [1, 2, 3, 4, 2, 3])
    }

    @Test("group commit: concurrent writers all land, each durable when it returns")
    func groupCommit() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions(.grouped))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for n in 0..<20 {
                        try await store.transact {
                            try $0.insert(["w": .int(Int64(writer))], id: RecordID("\(writer)-\(n)"), into: "t")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(store.current.basis == 160)
        #expect(store.current[table: "t"].count == 160)
        try await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current[table: "t"].count == 160)
        try await reopened.close()
    }

    @Test(
        "write and sync failures throw, leave the value unchanged, and the store usable",
        arguments: [
            Durability.everyCommit, .grouped,
        ]
    )
    func writeFailures(durability: Durability) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let fileSystem = FaultyFileSystem()
        var options = testOptions(durability)
        options.fileSystem = fileSystem
        let store = try await Store.open(at: path, options: options)
        try await store.transact { try $0.insert(["a": 1], id: 1, into: "t") }
        let before = store.current
        for fault in ["write", "sync"] {
            fileSystem.faults.withLock {
                $0.failWrites = fault == "write"
                $0.failSyncs = fault == "sync"
            }
            await #expect(throws: StoreError.self, "\(fault) failure") {
                try await store.transact { try $0.insert(["a": 2], id: 2, into: "t") }
            }
            #expect(store.current == before, "\(fault) failure")
            fileSystem.faults.withLock { $0 = .init() }
        }
        try await store.transact { try $0.insert(["a": 3], id: 3, into: "t") }
        let after = store.current
        #expect(after.basis == 2 && after.record(2, in: "t") == nil)
        try await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current == after)
        #expect(reopened.warnings.isEmpty)
        try await reopened.close()
    }
}
