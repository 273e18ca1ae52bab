import Foundation
import Strata
import Testing

/// Histories undo must read right: interleaved and broken groups, empty
/// actions, copies of undo metadata, conflicts spread over a group.
@Suite("Undo over tricky histories")
struct UndoHistoryTests {
    static func open(_ path: String, _ durability: Durability = .none) async throws -> Store {
        try await Store.open(at: path, options: testOptions(durability))
    }

    static func edit(_ store: Store, _ id: RecordID, _ title: String, group: Value? = nil) async throws {
        let metadata: [Key: Value] = group.map { [Store.undoGroupKey: $0] } ?? [:]
        try await store.transact(message: "Edit \(id)", metadata: metadata) { builder in
            try builder.upsert(["title": .string(title)], id: id, into: "songs")
        }
    }

    @Test("a group interrupted by another action is two actions; a null group groups nothing")
    func interleavedGroups() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await Self.edit(store, 1, "a", group: "g")
        try await Self.edit(store, 2, "b", group: "h")
        try await Self.edit(store, 3, "c", group: "g")
        try await Self.edit(store, 4, "d", group: .null)
        try await Self.edit(store, 5, "e", group: .null)
        for expected in [5, 4, 3, 2, 1] {
            let action = try #require(try await store.undoAction())
            #expect(action.transactions.count == 1)
            try await store.undo()
            #expect(store.current.record(RecordID(Int64(expected)), in: "songs") == nil)
        }
        #expect(try await store.undo() == nil)
        try await store.close()
    }

    @Test("an action that changed nothing is not one: undo skips it and it leaves redo alone")
    func emptyAction() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await Self.edit(store, 1, "a")
        try await Self.edit(store, 2, "b")
        try await store.undo()
        try await store.transact(message: "Nothing") { _ in }
        #expect(try await store.redoAction() != nil)
        #expect(try await store.undoAction()?.name == "Edit 1")
        _ = try #require(try await store.redo())
        #expect(store.current.record(2, in: "songs") != nil)
        try await store.close()
    }

    @Test("a copy of an undo's metadata (an inverse of it) is an action, not an undo")
    func forgedMarkers() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await Self.edit(store, 1, "a")
        try await Self.edit(store, 2, "b")
        let undo = try #require(try await store.undo())
        // Re-applies song 2 by hand, carrying the undo's metadata along.
        try await store.commit(inverse(undo.transaction))
        #expect(store.current.record(2, in: "songs") != nil)
        // The top of the stack is that commit: undoing it removes song 2 again, then song 1.
        _ = try #require(try await store.undo())
        #expect(store.current.record(2, in: "songs") == nil)
        _ = try #require(try await store.undo())
        #expect(store.current.record(1, in: "songs") == nil)
        #expect(try await store.undo() == nil)
        try await store.close()
    }

    @Test("conflicts over several members of a group are all named; what a group did and undid itself is no conflict")
    func groupConflicts() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await store.transact(metadata: [Store.undoGroupKey: "import"]) { builder in
            for id in 0..<5 { try builder.insert(["plays": 0], id: RecordID(Int64(id)), into: "songs") }
            try builder.insert(["draft": true], id: 99, into: "songs")
        }
        try await store.transact(metadata: [Store.undoGroupKey: "import"]) { builder in
            for id in 5..<10 { try builder.insert(["plays": 0], id: RecordID(Int64(id)), into: "songs") }
            try builder.delete(99, from: "songs")
        }
        // Minor edits of songs from both members, and a new song 99 by someone else.
        try await store.transact(significance: .minor) { builder in
            try builder.update(2, in: "songs", [.set("plays", 1)])
            try builder.update(7, in: "songs", [.set("plays", 1)])
            try builder.insert(["title": "Unrelated"], id: 99, into: "songs")
        }
        let basis = store.current.basis
        do {
            try await store.undo()
            Issue.record("undone over later edits")
        } catch UndoError.conflict(_, let records) {
            #expect(
                records == [
                    UndoConflict(table: "songs", id: 2, fields: ["plays"]),
                    UndoConflict(table: "songs", id: 7, fields: ["plays"]),
                ]
            )
        }
        #expect(store.current.basis == basis)
        // Back to zero plays, the undo goes through and leaves song 99 alone.
        try await store.transact(significance: .minor) { builder in
            try builder.update(2, in: "songs", [.set("plays", 0)])
            try builder.update(7, in: "songs", [.set("plays", 0)])
        }
        _ = try #require(try await store.undo())
        #expect(store.current[table: "songs"].count == 1)
        #expect(store.current.record(99, in: "songs")?["title"] == "Unrelated")
        try await store.close()
    }

    @Test("a minor edit between two members of a group, of what the group changed, is a conflict")
    func editInsideGroup() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await Self.edit(store, 1, "a", group: "g")
        try await store.transact(significance: .minor) { try $0.update(1, in: "songs", [.set("title", "b")]) }
        try await Self.edit(store, 1, "c", group: "g")
        let error = await #expect(throws: UndoError.self) { try await store.undo() }
        guard case .conflict(_, let records)? = error else { return }
        #expect(records == [UndoConflict(table: "songs", id: 1, fields: ["title"])])
        try await store.close()
    }

    @Test("an index the group declared, dropped by a minor transaction between its members, is indexChanged")
    func indexDroppedInsideGroup() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await store.transact(message: "Import", metadata: [Store.undoGroupKey: "g"]) { builder in
            try builder.createIndex("byA", on: "songs", fields: ["a"])
            try builder.insert(["a": 1], id: 1, into: "songs")
        }
        try await store.transact(message: "cache", significance: .minor) { try $0.dropIndex("byA", on: "songs") }
        try await store.transact(message: "Import", metadata: [Store.undoGroupKey: "g"]) {
            try $0.insert(["a": 2], id: 2, into: "songs")
        }
        let before = store.current
        let error = await #expect(throws: UndoError.self) { try await store.undo() }
        guard case .indexChanged(let action, let table, let index)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(action == "Import" && table == "songs" && index == "byA")
        #expect(store.current == before)
        try await store.close()
    }

    @Test(
        "a minor edit between two members of a group, of other fields, is kept by the undo as after the group",
        arguments: [true, false]
    )
    func otherFieldsInsideGroup(between: Bool) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await store.transact(message: "Add") { try $0.insert(["title": "a", "plays": 0], id: 1, into: "songs") }
        let plays = {
            _ = try await store.transact(significance: .minor) { try $0.update(1, in: "songs", [.set("plays", 1)]) }
        }
        // Updates of the title alone (an upsert would replace the record).
        let title = { (text: String) in
            _ = try await store.transact(message: "Retitle", metadata: [Store.undoGroupKey: "g"]) {
                try $0.update(1, in: "songs", [.set("title", .string(text))])
            }
        }
        try await title("b")
        if between { try await plays() }
        try await title("c")
        if !between { try await plays() }
        try await store.undo()
        #expect(store.current.record(1, in: "songs") == ["title": "a", "plays": 1])
        try await store.redo()
        #expect(store.current.record(1, in: "songs") == ["title": "c", "plays": 1])
        try await store.close()
    }

    @Test("a minor delete or insert between two members of a group, of a record the group changed, is a conflict")
    func recordReplacedInsideGroup() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await store.transact(message: "Add") { try $0.insert(["title": "a", "plays": 0], id: 1, into: "songs") }
        try await Self.edit(store, 1, "b", group: "g")
        try await store.transact(significance: .minor) { builder in
            try builder.delete(1, from: "songs")
            try builder.insert(["title": "b", "plays": 7], id: 1, into: "songs")
        }
        try await Self.edit(store, 1, "c", group: "g")
        let before = store.current
        let error = await #expect(throws: UndoError.self) { try await store.undo() }
        guard case .conflict(_, let records)? = error else { return }
        #expect(records.map(\.id) == [1], "\(records)")
        #expect(store.current == before)
        try await store.close()
    }

    @Test("undoing an index declaration; a redo a unique index now refuses")
    func indexesAndUniqueness() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path)
        try await store.transact { try $0.createIndex("byCode", on: "songs", fields: ["code"], unique: true) }
        try await store.transact(message: "Add") { try $0.insert(["code": "X"], id: 1, into: "songs") }
        try await store.undo()
        // Someone else takes the code meanwhile (minor: not an action, redo stays).
        try await store.transact(significance: .minor) { try $0.insert(["code": "X"], id: 2, into: "songs") }
        let error = await #expect(throws: UndoError.self) { try await store.redo() }
        guard case .cannotApply? = error else {
            Issue.record("expected cannotApply, got \(String(describing: error))")
            return
        }
        // The index declaration itself is an action: undone, its index goes.
        try await store.transact(significance: .minor) { try $0.delete(2, from: "songs") }
        try await store.transact(message: "Index") { try $0.createIndex("byTitle", on: "songs", fields: ["title"]) }
        try await store.undo()
        #expect(throws: QueryError.self) { try store.current.query("songs").order(by: "title").ids() }
        try await store.close()
    }

    @Test("undo and redo while other tasks commit without pause under grouped durability")
    func busyWriters() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Self.open(path, .grouped)
        try await Self.edit(store, 1, "a")
        let writers = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for n in 0..<150 {
                            try await store.transact(significance: .minor) { builder in
                                try builder.upsert(["n": .int(Int64(n))], id: RecordID(Int64(writer)), into: "stats")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        _ = try #require(try await store.undo())
        #expect(store.current.record(1, in: "songs") == nil)
        _ = try #require(try await store.redo())
        #expect(store.current.record(1, in: "songs") != nil)
        try await writers.value
        try await store.close()
    }

    @Test(
        "undo and redo of actions from 0 B to 3 MB read back across reopen cycles, snapshots, small segments and a truncate"
    )
    func largeActionsOnDisk() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions(.everyCommit)
        options.snapshotEveryTransactions = 7
        options.snapshotsKept = 2
        options.segmentSize = 64 << 10
        options.cachedTransactionChanges = 0  // every walk reads the log back
        var store = try await Store.open(at: path, options: options)
        let big = String(repeating: "la la 🎵 ", count: 300_000)  // about 3 MB
        let longName = String(repeating: "Import ünïcode ", count: 400)  // a 6 KB message
        // An empty-message action, then a 60-transaction group holding a 3 MB record.
        try await store.transact { try $0.insert([:], id: 0, into: "songs") }
        for chunk in 0..<60 {
            try await store.transact(message: longName, metadata: [Store.undoGroupKey: .string(longName)]) { builder in
                let record: Record = chunk == 30 ? ["lyrics": .string(big)] : ["n": .int(Int64(chunk))]
                try builder.insert(record, id: RecordID(Int64(chunk + 1)), into: "songs")
            }
        }
        let imported = store.current
        func reopen() async throws {
            try await store.close()
            store = try await Store.open(at: path, options: options)
        }
        #expect(try await store.undoAction()?.transactions.count == 60)
        _ = try #require(try await store.undo())
        let undone = store.current
        #expect(undone[table: "songs"].count == 1)
        for _ in 0..<3 {
            try await reopen()
            #expect(store.current == undone)
            #expect(try await store.redoAction()?.name == longName)
            #expect(try await store.undoAction()?.name == "")
        }
        let redo = try #require(try await store.redo())
        #expect(store.current[table: "songs"] == imported[table: "songs"])
        _ = try await store.snapshot()
        try await reopen()
        #expect(store.current.record(31, in: "songs")?["lyrics"] == .string(big))
        #expect(try await store.undoAction()?.transactions.count == 1)
        // Cutting the redo away brings back the undo to redo.
        try await store.truncate(after: redo.transaction.t - 1)
        for _ in 0..<2 {
            try await reopen()
            #expect(store.current == undone)
            #expect(try await store.redoAction()?.name == longName)
        }
        _ = try #require(try await store.redo())
        #expect(store.current[table: "songs"] == imported[table: "songs"])
        _ = try #require(try await store.undo())
        try await reopen()
        #expect(store.current[table: "songs"].count == 1)
        try await store.close()
    }
}
