import Foundation
import PersistentCollections
import Strata
import Testing

@Suite("Undo and redo")
struct UndoTests {
    static func song(_ id: Int, batch: String) -> Record {
        ["title": .string("Song \(id) 🎵"), "batch": .string(batch), "plays": 0]
    }

    /// Imports `count` songs from `first` in chunks of 100, one undo group.
    static func importSongs(_ store: Store, from first: Int, count: Int, group: String) async throws {
        for start in stride(from: first, to: first + count, by: 100) {
            try await store.transact(
                message: "Import",
                significance: .significant,
                metadata: [Store.undoGroupKey: .string(group)]
            ) { builder in
                for id in start..<min(start + 100, first + count) {
                    try builder.insert(song(id, batch: group), id: RecordID(Int64(id)), into: "songs")
                }
            }
        }
    }

    static func playCount(_ store: Store, _ id: Int) async throws {
        try await store.transact(message: "Played", significance: .minor) { builder in
            let plays = builder.database.record(RecordID(Int64(id)), in: "songs")?["plays"]?.intValue ?? 0
            try builder.update(RecordID(Int64(id)), in: "songs", [.set("plays", .int(plays + 1))])
        }
    }

    @Test("520 songs imported where 41 were meant: undo, redo, undo, with unrelated edits between, across a reopen")
    func wrongImport() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var store = try await Store.open(at: path, options: testOptions())
        try await Self.importSongs(store, from: 0, count: 100, group: "library")
        try await store.transact(message: "Rename playlist") {
            try $0.upsert(["name": "Road trip"], id: 1, into: "playlists")
        }
        let before = store.current
        try await Self.importSongs(store, from: 1_000, count: 520, group: "import 2")
        #expect(store.current[table: "songs"].count == 620)
        #expect(try await store.undoAction()?.transactions.count == 6)
        #expect(try await store.undoAction()?.name == "Import")
        try await Self.playCount(store, 3)  // unrelated, minor: not an action

        let undo = try #require(try await store.undo())
        #expect(undo.transaction.message == "Undo “Import”")
        #expect(store.current[table: "songs"].count == 100)
        #expect(store.current[table: "songs"].records == before[table: "songs"].records.updating(3, plays: 1))
        #expect(store.current[table: "playlists"] == before[table: "playlists"])

        try await Self.playCount(store, 5)
        try await store.close()
        store = try await Store.open(at: path, options: testOptions())
        #expect(try await store.redoAction()?.name == "Import")
        let redo = try #require(try await store.redo())
        #expect(redo.transaction.message == "Redo “Import”")
        #expect(store.current[table: "songs"].count == 620)
        #expect(try await store.redoAction() == nil)

        try await Self.playCount(store, 7)
        _ = try #require(try await store.undo())
        #expect(store.current[table: "songs"].count == 100)
        #expect(store.current.record(5, in: "songs")?["plays"] == 1)
        #expect(store.current.record(7, in: "songs")?["plays"] == 1)

        // The import meant: 41 songs. A new action clears the redo stack.
        try await Self.importSongs(store, from: 2_000, count: 41, group: "import 3")
        #expect(try await store.redo() == nil)
        #expect(store.current[table: "songs"].count == 141)
        // Undo walks back: the 41, then (the 520 being undone) the rename.
        _ = try #require(try await store.undo())
        #expect(store.current[table: "songs"].count == 100)
        let rename = try #require(try await store.undo())
        #expect(rename.transaction.message == "Undo “Rename playlist”")
        #expect(store.current[table: "playlists"].isEmpty)
        #expect(store.current[table: "songs"].count == 100)
        // Then the library import: songs 3, 5 and 7 were played since.
        do {
            try await store.undo()
            Issue.record("the library import was undone over later plays")
        } catch UndoError.conflict(_, let records) {
            let ids: [RecordID] = records.map(\.id)
            #expect(ids == [RecordID(3), RecordID(5), RecordID(7)])
        }
        #expect(store.current[table: "songs"].count == 100)
        // The rename and the 41 come back in order.
        _ = try #require(try await store.redo())
        #expect(store.current[table: "playlists"].count == 1)
        _ = try #require(try await store.redo())
        #expect(try await store.redo() == nil)
        #expect(store.current[table: "songs"].count == 141)
        #expect(store.current[table: "playlists"].count == 1)
        try await store.close()
    }

    @Test("a later edit of the same fields: undo and redo throw naming the records, the store is unchanged")
    func conflicts() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await Self.importSongs(store, from: 0, count: 30, group: "import")
        try await Self.playCount(store, 4)
        try await Self.playCount(store, 17)
        let basis = store.current.basis
        do {
            try await store.undo()
            Issue.record("the undo committed")
        } catch UndoError.conflict(let action, let records) {
            #expect(action == "Import")
            #expect(
                records == [
                    UndoConflict(table: "songs", id: 4, fields: ["plays"]),
                    UndoConflict(table: "songs", id: 17, fields: ["plays"]),
                ]
            )
        }
        #expect(store.current.basis == basis)
        #expect(store.current[table: "songs"].count == 30)

        // An edit undone, then its field changed by a minor edit: redo refuses.
        try await store.transact(message: "Retitle") { try $0.update(9, in: "songs", [.set("title", "Nine")]) }
        _ = try #require(try await store.undo())
        try await store.transact(significance: .minor) { try $0.update(9, in: "songs", [.set("title", "Nueve")]) }
        let error = await #expect(throws: UndoError.self) { try await store.redo() }
        #expect("\(error!)".contains("songs 9 (title)"))
        #expect(store.current.record(9, in: "songs")?["title"] == "Nueve")
        try await store.close()
    }

    @Test("reverting an undo by hand is an action of its own, not another undo")
    func revertOfUndo() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "Add") { try $0.insert(["title": "A"], id: 1, into: "songs") }
        let undo = try #require(try await store.undo())
        try await store.revert(transaction: undo.transaction.id)
        #expect(store.current.record(1, in: "songs") != nil)
        // The redo stack was cleared by the revert; undo reverts the revert.
        #expect(try await store.redo() == nil)
        _ = try #require(try await store.undo())
        #expect(store.current.record(1, in: "songs") == nil)
        try await store.close()
    }

    @Test(
        "random actions, undos, redos and minor edits against a model of the two stacks",
        arguments: [UInt64(21), 22, 23]
    )
    func model(seed: UInt64) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var random = SeededRandom(seed: seed)
        var store = try await Store.open(at: path, options: testOptions())
        var undoStack: [(before: Table, after: Table)] = []
        var redoStack: [(before: Table, after: Table)] = []
        for step in 0..<250 {
            let songs = store.current[table: "songs"]
            switch random.int(below: 10) {
            case 0..<4:
                // An action of one to three transactions in a group.
                let group = Value.string("g\(step)")
                var changedAnything = false
                for _ in 0...random.int(below: 3) {
                    let report = try await store.transact(
                        message: "Edit \(step)",
                        metadata: [Store.undoGroupKey: group]
                    ) {
                        builder in
                        for _ in 0..<(1 + random.int(below: 4)) {
                            let id = RecordID(Int64(random.int(below: 20)))
                            if builder.database.record(id, in: "songs") != nil, random.chance(30) {
                                try builder.delete(id, from: "songs")
                            } else {
                                try builder.upsert(
                                    ["title": .string("t\(random.int(below: 5))")],
                                    id: id,
                                    into: "songs"
                                )
                            }
                        }
                    }
                    changedAnything = changedAnything || !report.transaction.isEmpty
                }
                // A group of transactions that changed nothing is no action.
                guard changedAnything else { continue }
                undoStack.append((songs, store.current[table: "songs"]))
                redoStack = []
            case 4..<6:
                let report = try await store.undo()
                guard let top = undoStack.popLast() else {
                    #expect(report == nil, "seed \(seed) step \(step)")
                    continue
                }
                #expect(report != nil && store.current[table: "songs"] == top.before, "seed \(seed) step \(step)")
                redoStack.append(top)
            case 6..<8:
                let report = try await store.redo()
                guard let top = redoStack.popLast() else {
                    #expect(report == nil, "seed \(seed) step \(step)")
                    continue
                }
                #expect(report != nil && store.current[table: "songs"] == top.after, "seed \(seed) step \(step)")
                undoStack.append(top)
            case 8:
                try await store.transact(significance: .minor) { builder in
                    try builder.upsert(
                        ["plays": .int(Int64(step))],
                        id: RecordID(Int64(random.int(below: 5))),
                        into: "stats"
                    )
                }
            default:
                try await store.close()
                store = try await Store.open(at: path, options: testOptions())
            }
        }
        try await store.close()
    }
}

extension PersistentMap where Key == RecordID, Value == Strata.Record {
    /// This map with record `id`'s plays set.
    func updating(_ id: RecordID, plays: Int64) -> Self {
        var copy = self
        copy[id]?["plays"] = .int(plays)
        return copy
    }
}
