import Foundation
import Strata
import Testing

/// A store opened read-only beside its writer, the history read from the
/// log alone, and the file-level verification.
@Suite("Store: read-only, StoreLog, verify(at:)")
struct StoreReadOnlyTests {
    static func readOnly(_ recovery: Recovery = .strict) -> StoreOptions {
        var options = StoreOptions()
        options.readOnly = true
        options.recovery = recovery
        return options
    }

    /// A writer with small segments and frequent snapshots, committing `count`.
    static func writer(_ path: String, commits count: Int) async throws -> Store {
        var options = testOptions()
        options.segmentSize = 2_048
        options.snapshotEveryTransactions = 7
        let store = try await Store.open(at: path, options: options)
        for n in 1...count {
            try await store.transact(message: "edit \(n)", significance: n % 5 == 0 ? .significant : .normal) {
                builder in
                try builder.upsert(
                    ["n": .int(Int64(n)), "pad": .string(String(repeating: "é", count: n % 40))],
                    id: RecordID(n % 13),
                    into: "t"
                )
            }
        }
        return store
    }

    @Test("opens beside the writer, sees what was committed when it opened, changes no file, refuses writes")
    func besideTheWriter() async throws {
        let path = temporaryStorePath("readonly")
        defer { removeStore(path) }
        let writer = try await Self.writer(path, commits: 60)
        let files = CLIDamageTests.bytes(of: path)
        let reader = try await Store.open(at: path, options: Self.readOnly())
        #expect(reader.current == writer.current)
        #expect(try await reader.history(limit: .max).map(\.id) == (try await writer.history(limit: .max)).map(\.id))
        #expect(try await reader.database(asOf: 17) == (try await writer.database(asOf: 17)))
        await #expect(throws: StoreError.self) { try await reader.transact { try $0.insert([:], id: 1, into: "x") } }
        await #expect(throws: StoreError.self) { try await reader.snapshot() }
        await #expect(throws: StoreError.self) { try await reader.truncate(after: 3) }
        await #expect(throws: StoreError.self) { try await reader.revert(to: 3) }
        await #expect(throws: StoreError.self) { try await reader.compact() }
        do {
            try await reader.snapshot()
        } catch let error as StoreError {
            guard case .readOnly(let where_) = error else { throw error }
            #expect(where_ == path)
            #expect("\(error)".contains("read-only"))
        }
        try await writer.transact { try $0.insert(["late": true], id: RecordID("late"), into: "t") }
        #expect(reader.current.record(RecordID("late"), in: "t") == nil, "a snapshot of the moment it opened")
        try await reader.close()
        let again = try await Store.open(at: path, options: Self.readOnly())
        #expect(again.current == writer.current)
        try await again.close()
        let changed = CLIDamageTests.bytes(of: path).filter { files[$0.key] != nil && files[$0.key] != $0.value }.keys
        #expect(changed.allSatisfy { $0.hasPrefix("log/") }, "only the writer's log moved: \(changed.sorted())")
        try await writer.close()
    }

    @Test("past values of a read-only store whose writer removed a snapshot it listed are rebuilt from another start")
    func snapshotRemovedUnderReader() async throws {
        let path = temporaryStorePath("readonly-pruned")
        defer { removeStore(path) }
        var options = testOptions()
        options.snapshotEveryTransactions = nil
        options.snapshotEveryLogBytes = nil
        options.snapshotsKept = 2
        let writer = try await Store.open(at: path, options: options)
        func commit(_ n: Int) async throws {
            try await writer.transact {
                try $0.upsert(
                    ["n": .int(Int64(n)), "pad": .string(String(repeating: "x", count: 40))],
                    id: RecordID(n % 7),
                    into: "t"
                )
            }
        }
        for n in 1...10 { try await commit(n) }
        try await writer.snapshot()  // at 10
        for n in 11...30 { try await commit(n) }
        let reader = try await Store.open(at: path, options: Self.readOnly())
        #expect(await reader.snapshotBases() == [10])
        for n in 31...40 { try await commit(n) }
        try await writer.snapshot()  // at 40
        for n in 41...50 { try await commit(n) }
        try await writer.snapshot()  // at 50: the one at 10 is removed
        #expect(await writer.snapshotBases() == [40, 50])
        for t in Int64(0)...30 {
            #expect(try await reader.database(asOf: t) == (try await writer.database(asOf: t)), "t \(t)")
        }
        await #expect {
            try await reader.database(inSnapshot: 10)
        } throws: { error in
            if case .noSnapshot(10)? = error as? StoreError { return true }
            return false
        }
        #expect(await reader.snapshotBases().isEmpty, "the removed snapshot is no longer listed")
        #expect(try await reader.snapshot(at: 10) == nil)
        try await reader.close()
        try await writer.close()
    }

    @Test("a read-only open of a store with a torn tail reads up to it and leaves it on disk")
    func tornTail() async throws {
        let path = temporaryStorePath("readonly-torn")
        defer { removeStore(path) }
        let writer = try await Self.writer(path, commits: 20)
        let value = writer.current
        try await writer.close()
        let last = try #require(logSegments(path).last)
        let handle = try #require(FileHandle(forUpdatingAtPath: last))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x40, 0, 0, 0, 1, 2, 3]))
        try handle.close()
        let size = try FileManager.default.attributesOfItem(atPath: last)[.size] as? Int
        let reader = try await Store.open(at: path, options: Self.readOnly())
        #expect(reader.current == value)
        #expect(reader.warnings.contains { if case .tornTail = $0 { return true } else { return false } })
        try await reader.close()
        #expect(try FileManager.default.attributesOfItem(atPath: last)[.size] as? Int == size, "not cut")
    }

    @Test("StoreLog: the history of the store without its value, equal to the store's, filters included")
    func storeLog() async throws {
        let path = temporaryStorePath("storelog")
        defer { removeStore(path) }
        let writer = try await Self.writer(path, commits: 80)
        let log = try await StoreLog.open(at: path)
        #expect(log.count == writer.current.basis)
        #expect(log.segments.count > 3)
        #expect(log.byteCount == log.segments.reduce(0) { $0 + $1.bytes })
        let all = try await writer.history(limit: .max)
        #expect(try log.transactions(limit: .max) == all)
        let filter = HistoryFilter(minimumSignificance: .significant, table: "t", record: RecordID(3))
        #expect(
            try log.transactions(filter, offset: 1, limit: 3) == (try await writer.history(filter, offset: 1, limit: 3))
        )
        #expect(try log.versions(of: RecordID(5), in: "t") == (try await writer.versions(of: RecordID(5), in: "t")))
        for t in [Int64(1), 40, log.count] {
            #expect(log.summary(at: t) == all[Int(log.count - t)].summary)
            #expect(log.t(of: all[Int(log.count - t)].id) == t)
        }
        #expect(throws: StoreError.self) { try log.transaction(at: 0) }
        #expect(throws: StoreError.self) { try log.transaction(at: log.count + 1) }
        try await writer.close()
        await #expect(throws: StoreError.self) { try await StoreLog.open(at: path + "/nothing") }
    }

    @Test("verify(at:): sound for a sound store; each damage named with its file; a writer's work is no damage")
    func verifyFiles() async throws {
        let path = temporaryStorePath("verify-files")
        defer { removeStore(path) }
        let writer = try await Self.writer(path, commits: 90)
        let during = try Store.verify(at: path)
        #expect(during.isSound, "\(during.problems)")
        #expect(during.transactions == writer.current.basis)
        try await writer.close()
        let sound = try Store.verify(at: path)
        #expect(sound.isSound && sound.transactions == 90 && sound.snapshots == snapshotFiles(path).count)
        #expect(sound.bytes > 0)

        let segment = logSegments(path)[2]
        try CLIDamageTests.flip(segment, at: 30)
        let snapshot = snapshotFiles(path)[0]
        try CLIDamageTests.flip(snapshot, at: 60)
        let damaged = try Store.verify(at: path)
        #expect(!damaged.isSound)
        #expect(damaged.problems.contains { $0.file == segment && $0.offset != nil }, "\(damaged.problems)")
        #expect(damaged.problems.contains { $0.file == snapshot }, "\(damaged.problems)")
        #expect(damaged.transactions < 90, "sound only up to the damage")
        #expect(damaged.problems.count == 2, "each damage once, nothing made up after it: \(damaged.problems)")
    }

    @Test("upsert(contentsOf:) equals one upsert per record, the last of an ID winning", arguments: [11, 12])
    func bulkUpsert(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var base = TransactionBuilder(on: Database())
        for n in 0..<300 {
            try base.insert(["n": .int(Int64(n)), "k": .int(Int64(n % 7))], id: RecordID(n), into: "t")
        }
        try base.createIndex("byK", on: "t", fields: ["k"])
        let start = base.database
        for round in 0..<40 {
            // Odd rounds: distinct IDs, every record a change (built at once).
            let distinct = round % 2 == 1
            var ids = Array(0..<400)
            ids.shuffle(using: &random)
            let batch: [(id: RecordID, record: Record)] = (0..<random.int(below: 200)).map { position in
                let n = distinct ? ids[position] : random.int(below: 400)
                return (
                    RecordID(n),
                    random.chance(20) && !distinct
                        ? start.record(RecordID(n), in: "t") ?? ["n": 1]
                        : ["n": .int(Int64(random.int(below: 5)) + 1_000), "k": .int(Int64(random.int(below: 3)))]
                )
            }
            var bulk = TransactionBuilder(on: start)
            try bulk.update(RecordID(0), in: "t", [.set("first", true)])
            try bulk.upsert(contentsOf: batch, into: "t")
            var single = TransactionBuilder(on: start)
            try single.update(RecordID(0), in: "t", [.set("first", true)])
            for (id, record) in batch { try single.upsert(record, id: id, into: "t") }
            #expect(bulk.database == single.database, "seed \(seed), round \(round)")
            #expect(bulk.transaction().changes == single.transaction().changes, "seed \(seed), round \(round)")
            #expect(try apply(start, bulk.transaction()) == Database(tables: bulk.database.tables, basis: 1))
        }
    }

    @Test("Record(fields:) sorts by name and keeps the last value of a repeated name")
    func recordFromFields() {
        let record = Record(fields: [("b", 1), ("a", 2), ("b", 3), ("é", 4), ("a", 5)])
        #expect(record == Record(["a": 5, "b": 3, "é": 4]))
        #expect(Record(fields: []) == Record())
    }
}
