import Foundation
import Strata
import Testing

/// A generic record: its `value` may be an optional behind the parameter,
/// which Swift encodes through `encode(_:forKey:)`, nil included.
struct Setting<V: Codable & Sendable & Equatable>: StoredRecord, Equatable {
    static var table: Key { "settings" }
    var id: String
    var value: V
}

/// The third version of a song whose title field was renamed twice.
struct ThirdVersionSong: StoredRecord, Equatable {
    static let table: Key = "songs"
    static var schema: RecordSchema { RecordSchema(renamedFields: ["title": "name", "name": "heading"]) }
    var id: Int
    var heading: String
}

@Suite("Typed records and undo: cases found in review")
struct TypedReviewTests {
    @Test("a nil behind a generic parameter round-trips; a required field that is missing still throws")
    func genericOptional() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.save(Setting<String?>(id: "theme", value: nil))
        try builder.save(Setting<String?>(id: "font", value: "Mono"))
        try builder.save(Setting<Int??>(id: "size", value: .some(nil)))
        let database = builder.database
        #expect(try database.record(Setting<String?>.self, id: "theme") == Setting(id: "theme", value: nil))
        #expect(try database.record(Setting<String?>.self, id: "font") == Setting(id: "font", value: "Mono"))
        #expect(try database.record(Setting<Int??>.self, id: "size")?.value == .none)
        #expect(try database.records(Setting<String?>.self).count == 3)
        #expect(throws: RecordDecodingError.self) { try database.record(Setting<String>.self, id: "theme") }
        #expect(throws: RecordDecodingError.self) { try database.record(Setting<[Int]>.self, id: "theme") }
    }

    @Test("renames chain across versions: a first version's field reads into the third")
    func renameChain() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["title": "Blue River"], id: 1, into: "songs")
        try builder.insert(["name": "Red Sky"], id: 2, into: "songs")
        try builder.insert(["heading": "Echo", "name": "stale"], id: 3, into: "songs")
        let database = builder.database
        #expect(try database.record(ThirdVersionSong.self, id: 1) == ThirdVersionSong(id: 1, heading: "Blue River"))
        #expect(try database.record(ThirdVersionSong.self, id: 2) == ThirdVersionSong(id: 2, heading: "Red Sky"))
        #expect(try database.record(ThirdVersionSong.self, id: 3) == ThirdVersionSong(id: 3, heading: "Echo"))
        // Saved, the record takes the current shape: the old names go.
        var resave = TransactionBuilder(on: database)
        try resave.save(ThirdVersionSong(id: 1, heading: "Blue River"))
        #expect(resave.database.record(1, in: "songs") == ["heading": "Blue River"])
    }

    @Test("undo of a group whose members a skipped minor edit separated is a named conflict")
    func undoAcrossSkippedEdits() async throws {
        let path = temporaryStorePath("undo-review")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(metadata: [Store.undoGroupKey: "import"]) { try $0.insert(["a": 1], id: 1, into: "t") }
        try await store.transact(significance: .minor) { try $0.delete(1, from: "t") }
        try await store.transact(metadata: [Store.undoGroupKey: "import"]) { try $0.insert(["a": 2], id: 1, into: "t") }
        let basis = store.current.basis
        do {
            try await store.undo()
            Issue.record("undone over a skipped edit")
        } catch UndoError.conflict(_, let records) {
            #expect(records == [UndoConflict(table: "t", id: 1, fields: [])])
        }
        #expect(store.current.basis == basis)

        try await store.transact(metadata: [Store.undoGroupKey: "indexes"]) {
            try $0.createIndex("byA", on: "t", fields: ["a"])
        }
        try await store.transact(significance: .minor) { try $0.dropIndex("byA", on: "t") }
        try await store.transact(metadata: [Store.undoGroupKey: "indexes"]) {
            try $0.createIndex("byA", on: "t", fields: ["a"])
        }
        do {
            try await store.undo()
            Issue.record("undone over a skipped index change")
        } catch UndoError.indexChanged(_, let table, let index) {
            #expect(table == "t" && index == "byA")
        }
        try await store.close()
    }
}
