import Foundation
import Strata
import Testing

/// What a cold hunt found: a hand-built transaction whose index changes the
/// log writes but does not read back (the store then stopped opening, and
/// recovery dropped every commit after it), and a read-only store that
/// called a sound log damaged after its writer's truncate.
@Suite("Store: what is committed reads back; a read-only store after its writer's truncate")
struct StoreReadBackTests {
    /// A store with one record and index `i` on `t.a`; returns it open.
    private func indexedStore(at path: String) async throws -> (Store, IndexDefinition) {
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact {
            try $0.insert(["a": 1], id: 1, into: "t")
            try $0.createIndex("i", on: "t", fields: ["a"])
        }
        return (store, store.current[table: "t"].indexDefinitions[0])
    }

    @Test("a table listed with no index changes is committed as none, and the store reopens with every commit")
    func emptyTableOfIndexChanges() async throws {
        let path = temporaryStorePath("read-back-empty")
        defer { removeStore(path) }
        let (store, _) = try await indexedStore(at: path)
        let report = try await store.commit(
            Transaction(t: 2, basis: 1, changes: ["t": [2: .insert(["a": 2])]], indexChanges: ["t": [:]])
        )
        #expect(report.transaction.indexChanges.isEmpty)
        try await store.transact { try $0.insert(["a": 3], id: 3, into: "t") }
        try await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current[table: "t"].count == 3)
        #expect(await reopened.t(of: report.transaction.id) == 2)
        #expect(await reopened.t(of: UUID()) == nil)
        #expect(try await reopened.transaction(at: 2)?.indexChanges.isEmpty == true)
        try await reopened.verify()
        try await reopened.close()
    }

    @Test("a transaction an earlier build wrote with a table of no index changes reads back as none")
    func emptyTableOfIndexChangesReadsBack() throws {
        let transaction = Transaction(t: 2, basis: 1, changes: ["songs": [2: .insert(["a": 2])]])
        var bytes = BinaryCodec.encode(transaction)
        // Its encoding ends with the count of tables of index changes, 0;
        // an earlier build wrote table "t" with no changes there.
        #expect(bytes.last == 0)
        bytes.removeLast()
        bytes += [1, 1, UInt8(ascii: "t"), 0]
        let read = try BinaryCodec.decodeTransaction(bytes)
        #expect(read.indexChanges.isEmpty)
        #expect(read.changes == transaction.changes && read.id == transaction.id)
        // The same table twice is still refused.
        bytes.removeLast(4)
        bytes += [2, 1, UInt8(ascii: "t"), 0, 1, UInt8(ascii: "t"), 0]
        #expect(throws: CodecError.self) { try BinaryCodec.decodeTransaction(bytes) }
    }

    @Test(
        "an index change that changes nothing is refused, naming the index; the store goes on and reopens",
        arguments: [false, true]
    )
    func noOpIndexChange(sameDeclaration: Bool) async throws {
        let path = temporaryStorePath("read-back-noop")
        defer { removeStore(path) }
        let (store, definition) = try await indexedStore(at: path)
        let change =
            sameDeclaration ? IndexChange(old: definition, new: definition) : IndexChange(old: nil, new: nil)
        let name: Key = sameDeclaration ? "i" : "j"
        let transaction = Transaction(t: 2, basis: 1, indexChanges: ["t": [name: change]])
        #expect(throws: ApplyError.self) { try apply(store.current, transaction) }
        do {
            try await store.commit(transaction)
            Issue.record("committed an index change that changes nothing")
        } catch let ApplyError.invalidIndex(table, index, reason) {
            #expect(table == "t" && index == name, "\(reason)")
        }
        try await store.transact { try $0.insert(["a": 2], id: 2, into: "t") }
        #expect(store.current.basis == 2, "nothing was committed for the refused one")
        try await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current[table: "t"].count == 2)
        #expect(reopened.current[table: "t"].indexDefinitions == [definition])
        try await reopened.close()
    }

    @Test("a read-only store whose writer truncated reports the history changed, not damage, and reopens sound")
    func readerAfterWritersTruncate() async throws {
        let path = temporaryStorePath("read-back-truncate")
        defer { removeStore(path) }
        var options = testOptions()
        // Past values are rebuilt from the log, not from memory.
        options.memoryBudget = .bytes(1)
        options.checkpointsKept = 0
        options.cachedTransactionChanges = 0
        let writer = try await Store.open(at: path, options: options)
        for i in 1...10 {
            try await writer.transact { try $0.insert(["n": .int(Int64(i))], id: RecordID(i), into: "t") }
        }
        var readOnly = options
        readOnly.readOnly = true
        let reader = try await Store.open(at: path, options: readOnly)
        try await writer.truncate(after: 5)
        // Regrown past the cut: the same t, other transactions.
        for i in 6...12 {
            try await writer.transact { try $0.insert(["m": .int(Int64(i))], id: RecordID(i), into: "t") }
        }
        try await writer.verify()
        // (t 10, its current value, is in memory: read as it was.)
        for t: Int64 in [6, 8] {
            do {
                let value = try await reader.database(asOf: t)
                Issue.record("read t \(t) of a history that was cut: \(value.basis)")
            } catch StoreError.historyChanged(_, _, let reason) {
                #expect(!reason.isEmpty)
            } catch {
                Issue.record("t \(t): \(error)")
            }
        }
        do {
            _ = try await reader.transaction(at: 7)
            Issue.record("read transaction 7 of a history that was cut")
        } catch StoreError.historyChanged {
        } catch {
            Issue.record("\(error)")
        }
        try await reader.close()
        let again = try await Store.open(at: path, options: readOnly)
        #expect(try await again.database(asOf: 8)[table: "t"][8]?["m"] == .int(8))
        try await again.close()
        try await writer.close()
    }
}
