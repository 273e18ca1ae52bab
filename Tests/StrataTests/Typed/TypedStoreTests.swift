import Foundation
import Strata
import Testing

/// Three versions of one model, as an app ships them.
enum SongV1 {
    struct Song: StoredRecord, Equatable {
        static let table: Key = "songs"
        var id: Int
        var title: String
        var plays: String  // v1 kept counts as text
        var lyrics: String?
    }
}

enum SongV2 {
    struct Song: StoredRecord, Equatable {
        static let table: Key = "songs"
        var id: Int
        var title: String
        var plays: Int  // now a number
        var rating: Int  // new, defaulted
        var album: String?  // new, optional
        var lyrics: String?

        static var schema: RecordSchema {
            RecordSchema(defaults: ["rating": 0], upcasters: ["plays": SongV2.playsFromText])
        }
    }

    @Sendable static func playsFromText(_ value: Value) throws -> Value {
        if case .string(let text) = value { return .int(Int64(text) ?? 0) }
        return value
    }
}

enum SongV3 {
    struct Song: StoredRecord, Equatable {
        static let table: Key = "songs"
        var id: Int
        var name: String  // renamed from title
        var plays: Int
        var rating: Int
        var album: String?
        // lyrics removed

        static var schema: RecordSchema {
            RecordSchema(
                renamedFields: ["title": "name"],
                defaults: ["rating": 0],
                upcasters: ["plays": SongV2.playsFromText]
            )
        }
    }
}

@Suite("Typed records in a store")
struct TypedStoreTests {
    @Test("three versions of a model over one store, reopened between versions, current and past values")
    func schemaEvolution() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let lyrics = String(repeating: "la la 🎵 ", count: 700)  // over 4 KB
        var store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "v1 import") { builder in
            for id in 0..<50 {
                try builder.save(
                    SongV1.Song(id: id, title: "Song \(id)", plays: "\(id * 3)", lyrics: id == 7 ? lyrics : nil)
                )
            }
        }
        let v1Basis = store.current.basis
        try await store.close()

        store = try await Store.open(at: path, options: testOptions())
        let old = try #require(try store.current.record(SongV2.Song.self, id: 7))
        #expect(old == SongV2.Song(id: 7, title: "Song 7", plays: 21, rating: 0, album: nil, lyrics: lyrics))
        let report = try await store.transact(message: "v2 edit") { builder in
            try builder.save(SongV2.Song(id: 7, title: "Song 7", plays: 22, rating: 5, album: "Blue", lyrics: lyrics))
            try builder.save(SongV2.Song(id: 100, title: "New", plays: 1, rating: 3, album: nil, lyrics: nil))
        }
        // Saving stores only what changed: plays (now a number), rating, album.
        guard case .update(let fields) = report.transaction.changes["songs"]?[7] else {
            Issue.record("song 7's change: \(String(describing: report.transaction.changes["songs"]?[7]))")
            return
        }
        #expect(Set(fields.keys) == ["plays", "rating", "album"])
        #expect(try store.current.records(SongV2.Song.self).count == 51)
        try await store.close()

        store = try await Store.open(at: path, options: testOptions())
        let songs = try store.current.records(SongV3.Song.self).sorted { $0.id < $1.id }
        #expect(songs.count == 51)
        #expect(songs.first == SongV3.Song(id: 0, name: "Song 0", plays: 0, rating: 0, album: nil))
        #expect(
            try store.current.record(SongV3.Song.self, id: 7)
                == SongV3.Song(id: 7, name: "Song 7", plays: 22, rating: 5, album: "Blue")
        )
        // A past value reads through the same path.
        let past = try await store.database(asOf: v1Basis)
        #expect(
            try past.record(SongV3.Song.self, id: 7)
                == SongV3.Song(id: 7, name: "Song 7", plays: 21, rating: 0, album: nil)
        )
        #expect(try past.record(SongV1.Song.self, id: 7)?.plays == "21")
        // Saving in v3 writes the current shape: the new name, no lyrics.
        try await store.transact(message: "v3 save") { builder in
            try builder.save(SongV3.Song(id: 7, name: "Seven", plays: 23, rating: 5, album: "Blue"))
        }
        let saved = try #require(store.current.record(7, in: "songs"))
        #expect(saved["name"] == "Seven" && saved["title"] == nil && saved["lyrics"] == nil)
        // v1 cannot read what v3 wrote, and says why.
        #expect {
            _ = try store.current.record(SongV1.Song.self, id: 7)
        } throws: { error in
            guard let error = error as? RecordDecodingError else { return false }
            return error.path == "title" && error.found == "nothing" && error.id == 7 && error.table == "songs"
        }
        try await store.close()
    }

    @Test("typed queries through an index, typed delete, and undo of a typed import")
    func queriesAndDelete() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "index") { builder in
            try builder.createIndex("byAlbum", on: "songs", fields: ["album", "plays"])
        }
        let report = try await store.transact(message: "import") { builder in
            for id in 0..<40 {
                try builder.insert(
                    SongV2.Song(
                        id: id,
                        title: "S\(id)",
                        plays: 40 - id,
                        rating: 1,
                        album: id % 2 == 0 ? "Even" : "Odd",
                        lyrics: nil
                    )
                )
            }
        }
        let even = try store.current.query("songs").where("album", equals: "Even").order(by: "plays").records(
            SongV2.Song.self
        )
        #expect(even.map(\.id) == stride(from: 38, through: 0, by: -2).map { $0 })
        #expect(try store.current.query("songs").where("album", equals: "Odd").first(SongV2.Song.self)?.album == "Odd")
        try await store.transact(message: "delete") { builder in try builder.delete(SongV2.Song.self, id: 3) }
        #expect(try store.current.record(SongV2.Song.self, id: 3) == nil)
        // The whole import undone, the later delete with it.
        try await store.revert(to: report.transaction.t - 1)
        #expect(try store.current.records(SongV2.Song.self).isEmpty)
        try await store.close()
    }
}

@Suite("Typed fetch of a large table")
struct TypedLargeFetchTests {
    struct Song: StoredRecord, Equatable {
        static let table: Key = "songs"
        var id: Int
        var title: String
        var plays: Int
    }

    @Test(
        "a table decoded on every core gives the records in the table's order; the first bad record in that order throws"
    )
    func parallelFetch() throws {
        var builder = TransactionBuilder(on: Database())
        for id in 0..<40_000 { try builder.insert(Song(id: id, title: "Song \(id) 🎵", plays: id % 7)) }
        let database = builder.database
        let order = database[table: "songs"].records.map(\.key)
        let songs = try database.records(Song.self)
        #expect(songs.map { RecordID(Int64($0.id)) } == order)
        #expect(songs.allSatisfy { $0.title == "Song \($0.id) 🎵" && $0.plays == $0.id % 7 })

        // Two records that do not fit, far apart in the table's order.
        var damaged = TransactionBuilder(on: database)
        let first = order[order.count / 5]
        let second = order[order.count * 4 / 5]
        try damaged.update(second, in: "songs", [.set("plays", "many")])
        try damaged.update(first, in: "songs", [.set("plays", "lots")])
        do {
            _ = try damaged.database.records(Song.self)
            Issue.record("records that do not fit decoded")
        } catch let error as RecordDecodingError {
            #expect(error.id == first)
            #expect(error.path == "plays")
        }
    }
}
