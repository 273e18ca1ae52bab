import Foundation
import Strata
import Testing

/// Indexed queries against a model: the same question answered by filtering
/// and sorting every record in plain Swift.
@Suite("Indexes and queries")
struct IndexQueryTests {
    typealias Song = (id: RecordID, record: Record)

    /// A music library: albums of up to 14 tracks, artists, added dates,
    /// some titles missing, a few non-ASCII.
    static func library(songs: Int, seed: UInt64) throws -> Database {
        var random = SeededRandom(seed: seed)
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
        try builder.createIndex("byAdded", on: "songs", fields: ["added"])
        try builder.createIndex("byTitle", on: "songs", fields: ["title"])
        try builder.createIndex("byArtist", on: "songs", fields: ["artist", "album"])
        for n in 0..<songs {
            var song: Record = [
                "album": .string("Album \(n / 14)"),
                "track": .int(Int64(n % 14 + 1)),
                "artist": .string(["Ana", "Bo", "Cé", "Dee"][random.int(below: 4)]),
                "added": .date(Date(timeIntervalSinceReferenceDate: Double(random.int(below: 1_000_000)))),
            ]
            if random.int(below: 10) > 0 { song["title"] = .string("Title \(random.int(below: songs))") }
            try builder.insert(song, id: RecordID(n), into: "songs")
        }
        return try apply(Database(), builder.transaction(t: 1))
    }

    static func all(_ database: Database) -> [Song] {
        database[table: "songs"].records.map { ($0.key, $0.value) }
    }

    /// The model's order: by the given fields' values (Value order, null
    /// for missing), then by ID.
    static func sorted(_ songs: [Song], by fields: [FieldPath]) -> [Song] {
        songs.sorted { a, b in
            for field in fields {
                let x = a.record[path: field] ?? .null
                let y = b.record[path: field] ?? .null
                if x != y { return x < y }
            }
            return a.id < b.id
        }
    }

    static func ids(_ songs: [Song]) -> [RecordID] { songs.map(\.id) }

    @Test("the four front-end questions answer as the model does, on the current value and a past one")
    func frontEndQuestions() throws {
        var database = try Self.library(songs: 3_000, seed: 7)
        database._invariantCheck()
        let past = database
        // Later edits: moves between albums, deletes, new songs.
        var builder = TransactionBuilder(on: database)
        var random = SeededRandom(seed: 8)
        for _ in 0..<400 {
            let id = RecordID(random.int(below: 3_200))
            if builder.database.record(id, in: "songs") != nil {
                if random.chance(30) {
                    try builder.delete(id, from: "songs")
                } else {
                    try builder.update(id, in: "songs", [.set("album", .string("Album \(random.int(below: 50))"))])
                }
            } else {
                try builder.insert(
                    ["album": "Album 3", "track": .int(Int64(random.int(below: 20)))],
                    id: id,
                    into: "songs"
                )
            }
        }
        database = try apply(database, builder.transaction(t: 2))
        database._invariantCheck()
        for value in [past, database] {
            let all = Self.all(value)
            // (a) one album in track order.
            let album = try value.query("songs").where("album", equals: "Album 3").order(by: "track").records()
            let albumModel = Self.sorted(all.filter { $0.record["album"] == "Album 3" }, by: ["album", "track"])
            #expect(Self.ids(album) == Self.ids(albumModel))
            #expect(try value.query("songs").where("album", equals: "Album 3").explain().description == "index byAlbum")
            // (b) the 50 most recently added.
            let recent = try value.query("songs").order(by: "added", descending: true).limit(50).ids()
            #expect(recent == Array(Self.ids(Self.sorted(all, by: ["added"])).reversed().prefix(50)))
            // (c) count of one artist's songs.
            let count = try value.query("songs").where("artist", equals: "Cé").count()
            #expect(count == all.filter { $0.record["artist"] == "Cé" }.count)
            // (d) a page by title, at an offset.
            let page = try value.query("songs").order(by: "title").limit(25, offset: 1_000).ids()
            #expect(page == Array(Self.ids(Self.sorted(all, by: ["title"])).dropFirst(1_000).prefix(25)))
            // first / last, ranges, reversed.
            let byTrack = Self.sorted(all.filter { $0.record["album"] == "Album 3" }, by: ["track"])
            #expect(
                try value.query("songs").where("album", equals: "Album 3").order(by: "track").first()?.id
                    == byTrack.first?.id
            )
            #expect(
                try value.query("songs").where("album", equals: "Album 3").order(by: "track").last()?.id
                    == byTrack.last?.id
            )
            let middle = try value.query("songs").where("album", equals: "Album 3").where("track", in: 3...7).ids()
            #expect(
                middle
                    == Self.ids(byTrack.filter { ($0.record["track"]?.intValue).map { (3...7).contains($0) } ?? false })
            )
            let open = try value.query("songs").where("album", equals: "Album 3").where("track", in: 10...).reversed()
                .ids()
            #expect(open == Self.ids(byTrack.filter { ($0.record["track"]?.intValue ?? 0) >= 10 }).reversed())
            let below = try value.query("songs").where("album", equals: "Album 3").where("track", in: ..<4).count()
            #expect(below == byTrack.filter { ($0.record["track"]?.intValue).map { $0 < 4 } ?? false }.count)
            // A filter on top of an index, and a scan.
            let even = try value.query("songs").where("album", equals: "Album 3")
                .filter { ($0["track"]?.intValue ?? 1) % 2 == 0 }.ids()
            #expect(Set(even) == Set(byTrack.filter { ($0.record["track"]?.intValue ?? 1) % 2 == 0 }.map(\.id)))
            // One path named twice: the same value is one condition, two
            // different values select nothing (index and scan alike).
            let twice = value.query("songs").where("album", equals: "Album 3").where("album", equals: "Album 3")
                .order(by: "track")
            #expect(try twice.ids() == Self.ids(albumModel))
            #expect(try twice.explain().description == "index byAlbum")
            let contradiction = value.query("songs").where("album", equals: "Album 3").where("album", equals: "Album 4")
            #expect(try contradiction.count() == 0 && contradiction.ids().isEmpty)
            #expect(try contradiction.filter { _ in true }.ids().isEmpty)
            let scan = value.query("songs").filter { $0["title"] == nil }
            #expect(try scan.explain().description == "scan + filter + sort")
            #expect(try scan.count() == all.filter { $0.record["title"] == nil }.count)
        }
    }

    @Test("a unique index refuses a violating transaction, naming index, key and both records")
    func uniqueness() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byPath", on: "files", fields: ["path"], unique: true)
        try builder.insert(["path": "/a"], id: 1, into: "files")
        try builder.insert(["path": "/b"], id: 2, into: "files")
        try builder.insert(["name": "no path"], id: 3, into: "files")
        try builder.insert(["name": "no path either"], id: 4, into: "files")
        let before = builder.database
        #expect(
            throws: ApplyError.uniqueViolation(table: "files", index: "byPath", key: ["/a"], existing: 1, new: 5)
        ) {
            try builder.insert(["path": "/a"], id: 5, into: "files")
        }
        #expect(builder.database == before)
        // Moving a value from one record to another in one transaction is fine.
        let swap = Transaction(
            t: 1,
            basis: 0,
            changes: [
                "files": [
                    1: .update(["path": FieldChange(old: "/a", new: "/c")]),
                    2: .update(["path": FieldChange(old: "/b", new: "/a")]),
                ]
            ]
        )
        let swapped = try apply(before, swap)
        swapped._invariantCheck()
        #expect(try swapped.query("files").where("path", equals: "/a").ids() == [2])
        // A builder checks each edit at once (as the type's documentation
        // says): swapping two values by two updates is refused at the
        // first, and done in one batch upsert or through a third value.
        var stepwise = TransactionBuilder(on: before)
        #expect(
            throws: ApplyError.uniqueViolation(table: "files", index: "byPath", key: ["/b"], existing: 2, new: 1)
        ) {
            try stepwise.update(1, in: "files", [.set("path", "/b")])
        }
        var batch = TransactionBuilder(on: before)
        let swapping: [(id: RecordID, record: Record)] = [(1, ["path": "/b"]), (2, ["path": "/a"])]
        try batch.upsert(contentsOf: swapping, into: "files")
        var viaThird = TransactionBuilder(on: before)
        try viaThird.update(1, in: "files", [.set("path", "/tmp")])
        try viaThird.update(2, in: "files", [.set("path", "/a")])
        try viaThird.update(1, in: "files", [.set("path", "/b")])
        for builder in [batch, viaThird] {
            builder.database._invariantCheck()
            #expect(try builder.database.query("files").where("path", equals: "/a").ids() == [2])
            #expect(try builder.database.query("files").where("path", equals: "/b").ids() == [1])
            #expect(try apply(before, builder.transaction(t: 1)).tables == builder.database.tables)
        }
        // Creating a unique index over duplicates is refused.
        var duplicate = TransactionBuilder(on: Database())
        try duplicate.insert(["k": 1], id: 1, into: "t")
        try duplicate.insert(["k": 1], id: 2, into: "t")
        #expect(throws: ApplyError.self) { try duplicate.createIndex("byK", on: "t", fields: ["k"], unique: true) }
    }

    @Test("a refused edit leaves a builder's own value, indexes and changes as they were (edits applied in place)")
    func refusedEditInPlace() throws {
        // Two builders making the same edits; only one is refused an edit.
        // Nothing else holds either builder's value, so its edits change
        // its nodes in place and a refusal must undo them.
        func filled() throws -> TransactionBuilder {
            var builder = TransactionBuilder(on: Database())
            try builder.createIndex("aByName", on: "files", fields: ["name"])
            try builder.createIndex("byPath", on: "files", fields: ["path"], unique: true)
            try builder.createIndex("zBySize", on: "files", fields: ["size"])
            for n in 1...40 {
                try builder.insert(
                    ["path": .string("/\(n)"), "name": .string("f\(n % 7)"), "size": .int(Int64(n))],
                    id: RecordID(Int64(n)),
                    into: "files"
                )
            }
            try builder.update(3, in: "files", [.set("name", "renamed")])
            return builder
        }
        var refused = try filled()
        let control = try filled()
        #expect(throws: ApplyError.uniqueViolation(table: "files", index: "byPath", key: ["/1"], existing: 1, new: 41))
        {
            try refused.insert(["path": "/1", "name": "x", "size": 0], id: 41, into: "files")
        }
        #expect(throws: ApplyError.uniqueViolation(table: "files", index: "byPath", key: ["/2"], existing: 2, new: 3)) {
            try refused.update(3, in: "files", [.set("path", "/2"), .set("name", "moved"), .set("size", 99)])
        }
        #expect(throws: ApplyError.self) { try refused.insert(["path": "/9"], id: 9, into: "files") }
        refused.database._invariantCheck()
        #expect(refused.database == control.database)
        #expect(refused.changes == control.changes)
        // It goes on as the control does, and its transaction replays it.
        var twin = control
        try refused.update(3, in: "files", [.set("path", "/41")])
        try refused.delete(4, from: "files")
        try twin.update(3, in: "files", [.set("path", "/41")])
        try twin.delete(4, from: "files")
        refused.database._invariantCheck()
        #expect(refused.database == twin.database)
        #expect(try apply(Database(), refused.transaction(t: 1)).tables == refused.database.tables)

        // On a base with records: an insert of a record the base has is
        // refused by the table itself, after an edit made its path the
        // builder's own; and an edit of a table that did not exist.
        let base = try apply(Database(), control.transaction(t: 1))
        var onBase = TransactionBuilder(on: base)
        try onBase.update(5, in: "files", [.set("size", 500)])
        var baseControl = TransactionBuilder(on: base)
        try baseControl.update(5, in: "files", [.set("size", 500)])
        #expect(throws: ApplyError.recordExists(table: "files", id: 6)) {
            try onBase.insert(["path": "/new"], id: 6, into: "files")
        }
        #expect(throws: ApplyError.self) { try onBase.delete(1, from: "nothing") }
        #expect(throws: ApplyError.self) { try onBase.update(1, in: "nothing", [.set("a", 1)]) }
        onBase.database._invariantCheck()
        #expect(onBase.database == baseControl.database && onBase.changes == baseControl.changes)
        #expect(onBase.database.tableNames == ["files"])
    }

    @Test(
        "an edit of fields no index covers leaves the table's indexes shared with the value before; one that moves an entry does not"
    )
    func untouchedIndexesStayShared() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byTitle", on: "songs", fields: ["title"])
        try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
        for n in 0..<100 {
            try builder.insert(
                ["title": .string("t\(n)"), "album": .int(Int64(n % 7)), "plays": 0],
                id: RecordID(n),
                into: "songs"
            )
        }
        let before = try apply(Database(), builder.transaction(t: 1))
        func storage(_ database: Database) -> UnsafeRawPointer? {
            database[table: "songs"].indexes.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }
        var plays = TransactionBuilder(on: before)
        try plays.update(5, in: "songs", [.set("plays", 1)])
        let played = try apply(before, plays.transaction())
        // The index array was not copied: the same storage as the value before's.
        #expect(storage(played) == storage(before))
        #expect(played[table: "songs"].indexes == before[table: "songs"].indexes)
        var retitle = TransactionBuilder(on: played)
        try retitle.update(5, in: "songs", [.set("title", "new")])
        let retitled = try apply(played, retitle.transaction())
        #expect(storage(retitled) != storage(played))
        #expect(try retitled.query("songs").where("title", equals: "new").ids() == [5])
        #expect(try played.query("songs").where("title", equals: "new").ids() == [])
        retitled._invariantCheck()
    }

    @Test("bad queries throw errors naming what was wrong")
    func badQueries() throws {
        let database = try Self.library(songs: 100, seed: 1)
        #expect(throws: QueryError.unknownTable("song")) { try database.query("song").count() }
        #expect(throws: QueryError.invalidPath(FieldPath(field: "", keys: []))) {
            try database.query("songs").where(FieldPath(field: "", keys: []), equals: 1).ids()
        }
        #expect(throws: QueryError.self) { try database.query("songs").where("track", equals: 3).ids() }
        #expect(throws: QueryError.self) {
            try database.query("songs").where("album", equals: "Album 1").order(by: "title").ids()
        }
        #expect(throws: QueryError.invalidLimit(limit: -1, offset: 0)) { try database.query("songs").limit(-1).ids() }
        let error = try #require(
            (try? database.query("songs").where("track", equals: 3).ids()) == nil
                ? QueryError.noIndex(
                    table: "songs",
                    conditions: ["track"],
                    order: nil,
                    indexes: database[table: "songs"].indexDefinitions
                )
                : nil
        )
        #expect(error.description.contains("byAlbum(album, track)"))
        // Two conditions on one path, in either order, or two ranges.
        let conflicts: [Query] = [
            database.query("songs").where("track", in: 1...3).where("track", equals: 2),
            database.query("songs").where("track", equals: 2).where("track", in: 1...3),
            database.query("songs").where("track", in: 1...3).where("track", greaterThan: 5),
        ]
        for query in conflicts {
            // Refused by every way a query runs, not only the first tried.
            #expect(throws: QueryError.conflictingConditions("track")) { try query.ids() }
            #expect(throws: QueryError.conflictingConditions("track")) { try query.records() }
            #expect(throws: QueryError.conflictingConditions("track")) { try query.count() }
            #expect(throws: QueryError.conflictingConditions("track")) { try query.first() }
            #expect(throws: QueryError.conflictingConditions("track")) { try query.last() }
            #expect(throws: QueryError.conflictingConditions("track")) { try query.explain() }
        }
        // A range and an equality on different paths, in either order, are
        // one query.
        let rangeFirst = try database.query("songs").where("track", in: 1...3).where("album", equals: "Album 1").ids()
        let equalityFirst = try database.query("songs").where("album", equals: "Album 1").where("track", in: 1...3)
            .ids()
        #expect(rangeFirst == equalityFirst)
        #expect(!rangeFirst.isEmpty)
        // Several mistakes: the last one found in the conditions, then the
        // last limit's, then a range and an equality on one path, then the
        // table or index.
        let empty = FieldPath(field: "", keys: [])
        #expect(throws: QueryError.invalidPath(empty)) {
            try database.query("songs").where(empty, equals: 1).limit(-1).ids()
        }
        #expect(throws: QueryError.invalidPath(empty)) {
            try database.query("songs").limit(-1).where(empty, equals: 1).ids()
        }
        // A later limit replaces an earlier one, mistake included.
        #expect(try database.query("songs").order(by: "title").limit(-1).limit(3).ids().count == 3)
        #expect(try database.query("songs").order(by: "title").limit(2, offset: -4).limit(3, offset: 1).count() == 3)
        #expect(throws: QueryError.invalidLimit(limit: -2, offset: 0)) {
            try database.query("songs").order(by: "title").limit(3).limit(-2).ids()
        }
        #expect(throws: QueryError.invalidLimit(limit: 5, offset: -1)) {
            try database.query("songs").where("track", in: 1...3).where("track", equals: 2).limit(5, offset: -1).ids()
        }
        #expect(throws: QueryError.conflictingConditions("track")) {
            try database.query("nothing").where("track", in: 1...3).where("track", equals: 2).ids()
        }
    }

    @Test("a query is a value: refining it leaves it unchanged, and its refinements are independent")
    func queriesAreValues() throws {
        let database = try Self.library(songs: 100, seed: 3)
        let base = database.query("songs").order(by: "title")
        let all = try base.ids()
        let firstTen = base.limit(10)
        let reversed = base.reversed()
        let broken = base.where(FieldPath(field: "", keys: []), equals: 1)
        #expect(try base.ids() == all, "the base query is unchanged by its refinements")
        #expect(try firstTen.ids() == Array(all.prefix(10)))
        #expect(try reversed.ids() == all.reversed())
        #expect(try firstTen.limit(5, offset: 2).ids() == Array(all[2..<7]))
        #expect(throws: QueryError.self) { try broken.ids() }
        #expect(try base.count() == all.count, "an error deferred in a refinement stays there")
    }

    @Test("index declarations are transactions: undo, diff, flatten and the codec keep them")
    func declarationsAreHistory() throws {
        let start = try Self.library(songs: 200, seed: 3)
        var builder = TransactionBuilder(on: start)
        try builder.dropIndex("byTitle", on: "songs")
        try builder.createIndex("byTrack", on: "songs", fields: ["track", "album"])
        let change = builder.transaction(t: 2)
        let after = try apply(start, change)
        #expect(after[table: "songs"].indexDefinitions.map(\.name) == ["byAdded", "byAlbum", "byArtist", "byTrack"])
        #expect(try apply(after, inverse(change)) == start)
        let difference = diff(from: start, to: after)
        #expect(difference.indexChanges["songs"]?.count == 2)
        #expect(try apply(start, difference.transaction(t: 2)) == after)
        #expect(try BinaryCodec.decodeTransaction(BinaryCodec.encode(change)) == change)
        let decoded = try BinaryCodec.decodeDatabase(BinaryCodec.encode(after))
        #expect(decoded == after)
        decoded._invariantCheck()
        #expect(
            try decoded.query("songs").where("track", equals: 1).count()
                == after.query("songs").where("track", equals: 1).count()
        )
        // A table with an index and no records stays, and round-trips.
        var empty = TransactionBuilder(on: Database())
        try empty.createIndex("byName", on: "people", fields: ["name"])
        let declared = try apply(Database(), empty.transaction(t: 1))
        #expect(declared.tableNames == ["people"])
        #expect(try declared.query("people").where("name", equals: "x").count() == 0)
        #expect(try BinaryCodec.decodeDatabase(BinaryCodec.encode(declared)) == declared)
    }

    @Test("Value's order: by kind, then value; equal to the order of their index encodings")
    func valueOrder() {
        let ordered: [Value] = [
            .null, false, true, .int(.min), -65_536, -256, -255, -1, 0, 1, 255, 256, .int(.max),
            .double(-.infinity), -1.5, .double(-0.0), 0.0, 2.5, .double(.infinity), .double(.nan),
            "", "a", "a\u{0}", "a\u{1}", "ab", "b", "\u{E9}", .bytes([]), .bytes([0]), .bytes([0, 0]), .bytes([1]),
            .date(Date(timeIntervalSinceReferenceDate: -5)), .date(Date(timeIntervalSinceReferenceDate: 5)),
            .reference(RecordReference(table: "a", id: 1)), .reference(RecordReference(table: "a", id: "x")),
            .reference(RecordReference(table: "b", id: 0)),
            [], [.null], [1], [1, 2], [2], ["a": 1], ["a": 2], ["b": 0],
        ]
        for (i, a) in ordered.enumerated() {
            for (j, b) in ordered.enumerated() {
                #expect((a < b) == (i < j), "\(a) < \(b)")
            }
        }
    }
}
