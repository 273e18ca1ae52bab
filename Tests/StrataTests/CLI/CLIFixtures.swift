import Foundation
import PersistentCollections
import Strata

/// A store shaped like an app's library, with every kind of value, ID and
/// history a real one has: several tables, integer, string and UUID IDs,
/// Unicode names and messages, a 6 KB record, an index, updates, deletes,
/// minor and significant transactions, a revert; many small segments and
/// snapshots.
enum CLIFixtures {
    /// The history: t 1 the import, t 2...121 plays, then the removal of
    /// song 40, an album rename, its revert, a late insert.
    static let plays = 120
    static var removal: Int64 { Int64(plays) + 2 }
    static var rename: Int64 { removal + 1 }
    static var revert: Int64 { removal + 2 }
    static var last: Int64 { removal + 3 }
    static let personID = UUID(uuidString: "6B1F36F8-55C0-4A3B-9C53-8E4E2C9A0D11")!

    /// Every kind of value, including the ones JSON cannot write plainly.
    static var awkwardValues: [Key: Value] {
        [
            "null": .null, "yes": true, "int": .int(.min), "big": .int(.max), "three": .double(3.0),
            "negativeZero": .double(-0.0), "nan": .double(.nan), "inf": .double(.infinity),
            "tiny": .double(.leastNonzeroMagnitude), "text": "tab\there \"quoted\" \\ é 日本 🎵 \u{1}\u{7F}",
            "empty": "", "bytes": .bytes([0, 1, 2, 255]), "date": .date(Date(timeIntervalSinceReferenceDate: 7.000001)),
            "ref": .reference(RecordReference(table: "albums", id: RecordID("é2"))),
            "refUUID": .reference(RecordReference(table: "people", id: RecordID(personID))),
            "list": [1, "two", [3.5, .null]], "dollars": .map(["$date": "not a date", "plain": 1]),
            "nested": .map(["a": .map(["b": [true, false]])]),
        ]
    }

    /// Builds the store at `path` and closes it; returns its value.
    @discardableResult
    static func makeLibrary(at path: String) async throws -> Database {
        var options = StoreOptions()
        options.createIfMissing = true
        options.durability = .none
        options.segmentSize = 4_096
        options.snapshotsKept = 4
        let store = try await Store.open(at: path, options: options)
        try await store.transact(message: "Import ♫ library", significance: .significant) { builder in
            for n in 1...40 {
                try builder.insert(
                    [
                        "title": .string("Song \(n) — Ünïcödé"), "plays": .int(Int64(n)),
                        "rating": .double(Double(n) / 8),
                        "tags": ["rock", .string("t\(n % 3)")],
                        "added": .date(Date(timeIntervalSince1970: 1.7e9 + Double(n))),
                        "album": .reference(RecordReference(table: "albums", id: RecordID("a\(n % 2 + 1)"))),
                    ],
                    id: RecordID(n),
                    into: "songs"
                )
            }
            try builder.insert(["name": "First"], id: RecordID("a1"), into: "albums")
            try builder.insert(["name": "Zweite Ébène"], id: RecordID("é2"), into: "albums")
            try builder.insert(Record(awkwardValues), id: RecordID(personID), into: "people")
            try builder.insert(
                ["blob": .string(String(repeating: "x", count: 6_000))],
                id: RecordID("big"),
                into: "people"
            )
            try builder.createIndex("byPlays", on: "songs", fields: ["plays"])
        }
        try await store.snapshot()
        for n in 1...plays {
            if n == plays / 2 { try await store.snapshot() }
            try await store.transact(
                message: "Play song \(n % 7 + 1) ♪ (a message long enough to fill segments)",
                significance: n % 3 == 0 ? .minor : .normal
            ) {
                builder in
                try builder.update(RecordID(n % 7 + 1), in: "songs", [.set("plays", .int(Int64(100 + n)))])
            }
        }
        try await store.transact(message: "Remove song 40") { try $0.delete(RecordID(40), from: "songs") }
        let rename = try await store.transact(message: "Rename album") { builder in
            try builder.update(RecordID("a1"), in: "albums", [.set("name", "Premier")])
        }
        try await store.revert(transaction: rename.transaction.id)
        try await store.transact(message: "Line\nbreak and \u{1B}[31mescape") { builder in
            try builder.insert(["title": "Late"], id: RecordID(41), into: "songs")
        }
        try await store.snapshot()
        let value = store.current
        try await store.close()
        return value
    }
}
