import Foundation
import Strata
import Testing

@Suite("Descriptions and construction from records")
struct DescriptionTests {
    @Test("Database from records equals the same records inserted by a transaction; empty tables dropped")
    func databaseFromRecords() throws {
        let records: [Key: [RecordID: Record]] = [
            "songs": [7: ["title": "Blue River", "plays": 3], "x": ["title": "Night"]],
            "albums": [1: ["name": "Rivers"]],
            "empty": [:],
        ]
        let direct = Database(records, basis: 5)
        var builder = TransactionBuilder(on: Database())
        for (table, byID) in records {
            for (id, record) in byID { try builder.insert(record, id: id, into: table) }
        }
        #expect(direct.tables == builder.database.tables)
        #expect(direct.basis == 5)
        #expect(direct.tableNames == ["albums", "songs"])
        #expect(direct.record("x", in: "songs")?["title"] == "Night")
        #expect(Database([:]) == Database())

        // Sizes around the map's node boundaries build the same as one by one.
        var random = SeededRandom(seed: 41)
        for count in [1, 31, 32, 33, 1_025] {
            var byID: [RecordID: Record] = [:]
            for _ in 0..<count {
                byID[RecordID(Int64(random.int(below: 1 << 40)))] = ["n": .int(Int64(random.int(below: 100)))]
            }
            var built = TransactionBuilder(on: Database())
            for (id, record) in byID { try built.insert(record, id: id, into: "t") }
            #expect(Database(["t": byID]).tables == built.database.tables, "\(count) records")
        }
    }

    @Test("a change between values that print alike prints both in the form that tells them apart")
    func changesThatPrintAlike() throws {
        let nfc = Value.string("caf\u{E9}")
        let nfd = Value.string("cafe\u{301}")
        #expect(nfc.description == nfd.description)
        #expect(nfc.exactDescription == #""caf\u{E9}""#)
        #expect(nfd.exactDescription == #""cafe\u{301}""#)
        #expect(FieldChange(old: nfc, new: nfd).description == #""caf\u{E9}" → "cafe\u{301}""#)
        let bytes = FieldChange(old: .bytes([0x00, 0xAB]), new: .bytes([0x00, 0xAC]))
        #expect(bytes.description == "<00 ab> → <00 ac>")
        // In nested values and map keys, through the walk that any depth takes.
        let keyed = FieldChange(old: .map(["caf\u{E9}": 1]), new: .map(["cafe\u{301}": 1]))
        #expect(keyed.description == #"["caf\u{E9}": 1] → ["cafe\u{301}": 1]"#)
        let quoted = Value.list([.string("a\"b\\c\n"), .reference(RecordReference(table: "t\u{301}", id: 3))])
        #expect(quoted.exactDescription == #"["a\"b\\c\u{A}", @"t\u{301}"/3]"#)
        // A reference's string ID as much as its table.
        let referred = FieldChange(
            old: .reference(RecordReference(table: "songs", id: RecordID("caf\u{E9}"))),
            new: .reference(RecordReference(table: "songs", id: RecordID("cafe\u{301}")))
        )
        #expect(referred.description == #"@"songs"/"caf\u{E9}" → @"songs"/"cafe\u{301}""#)
        // Values that print apart keep their plain descriptions.
        #expect(FieldChange(old: "Blue", new: "Blue River").description == #""Blue" → "Blue River""#)
        #expect(FieldChange(old: nfc, new: nil).description == #""café" → absent"#)
        #expect(FieldChange(old: .double(-.nan), new: .double(.nan)).description == "-nan → nan")
    }

    @Test("errors tell apart IDs, values and paths that would print alike, and escape what would not show")
    func errorsThatWouldPrintAlike() throws {
        // Two IDs that differ only in normalization, in a unique violation.
        var unique = TransactionBuilder(on: Database())
        try unique.createIndex("u", on: "t", fields: ["k"], unique: true)
        try unique.insert(["k": "v"], id: RecordID("caf\u{E9}"), into: "t")
        let violation = try #require(throws: ApplyError.self) {
            try unique.insert(["k": "v"], id: RecordID("cafe\u{301}"), into: "t")
        }
        #expect(violation.description == #"unique index t.u: "cafe\u{301}" would have ("v"), which "caf\u{E9}" has"#)
        // IDs that print apart stay readable; quotes and NUL are escaped.
        try unique.insert(["k": "w"], id: RecordID("x\"y\0"), into: "t")
        let quoted = try #require(throws: ApplyError.self) {
            try unique.insert(["k": "w"], id: RecordID("é"), into: "t")
        }
        #expect(quoted.description == #"unique index t.u: "é" would have ("w"), which "x\"y\0" has"#)
        #expect(RecordID("a\u{85}b\u{200B}").description == #""a\u{85}b\u{200B}""#)

        // A field conflict between two spellings of one word.
        let conflict = ApplyError.conflict(
            table: "t",
            id: 1,
            field: "k",
            expected: .string("caf\u{E9}"),
            found: .string("cafe\u{301}")
        )
        #expect(conflict.description == #"conflict at t/1.k: expected "caf\u{E9}", found "cafe\u{301}""#)
        let plain = ApplyError.conflict(table: "t", id: 1, field: "k", expected: "a", found: nil)
        #expect(plain.description == #"conflict at t/1.k: expected "a", found nothing"#)

        // Dropping an index the table does not have.
        var drop = TransactionBuilder(on: Database())
        try drop.insert(["k": 1], id: 1, into: "t")
        let missing = try #require(throws: ApplyError.self) { try drop.dropIndex("byK", on: "t") }
        // A loss whose size is not known says so, not "at least 0".
        #expect(
            StoreWarning.lostTransactions(after: 5, atLeast: 0, reason: "log segment 7 is missing").description
                == "acknowledged history after t 5 may be lost: log segment 7 is missing"
        )
        #expect(
            StoreWarning.lostTransactions(after: 5, atLeast: 2, reason: "r").description.hasPrefix("lost at least 2")
        )
        #expect(missing.description == "cannot drop index t.byK: the table has no index of that name")

        // A field named "a.b" and the path a → b; a field in NFD against an index in NFC.
        #expect(FieldPath(field: "a.b", keys: []).description == #""a.b""#)
        #expect(FieldPath("a", "b").description == "a.b")
        #expect(FieldPath(field: "a", keys: [""]).description == "a.")
        var paths = TransactionBuilder(on: Database())
        try paths.createIndex("byDotted", on: "t", fields: [FieldPath(field: "a.b", keys: [])])
        try paths.createIndex("byCafe", on: "t", fields: [FieldPath(field: "caf\u{E9}", keys: [])])
        try paths.insert(["a": ["b": 1]], id: 1, into: "t")
        let dotted = try #require(throws: QueryError.self) {
            try paths.database.query("t").where("a.b", equals: 1).ids()
        }
        #expect(dotted.description.hasPrefix(#"no index of t serves (a.b); declared: byCafe(café); byDotted("a.b")."#))
        let nfd = FieldPath(field: "cafe\u{301}", keys: [])
        let accented = try #require(throws: QueryError.self) {
            try paths.database.query("t").where(nfd, equals: 1).ids()
        }
        #expect(
            accented.description.hasPrefix(
                #"no index of t serves ("cafe\u{301}"); declared: byCafe("caf\u{E9}"); byDotted("a.b")."#
            )
        )
    }

    @Test("descriptions read like the values they show")
    func descriptions() throws {
        let small = Database(["songs": [7: ["title": "Blue River", "plays": 1]], "albums": [1: ["name": "Rivers"]]])
        #expect(
            small.description
                == #"Database t 0 {albums: {1: {name: "Rivers"}}, songs: {7: {plays: 1, title: "Blue River"}}}"#
        )
        var many: [RecordID: Record] = [:]
        for n in 0..<40 { many[RecordID(Int64(n))] = ["n": .int(Int64(n))] }
        #expect(
            Database(["songs": many, "albums": [1: ["a": 1]]], basis: 9).description
                == "Database t 9 {albums: 1 record, songs: 40 records}"
        )

        #expect(Change.insert(["a": 1]).description == "insert {a: 1}")
        #expect(Change.delete(["a": "x"]).description == #"delete {a: "x"}"#)
        let update = Change.update(["b": FieldChange(old: nil, new: 2), "a": FieldChange(old: 1, new: nil)])
        #expect(update.description == "update {a: 1 → absent, b: absent → 2}")

        var builder = TransactionBuilder(on: small)
        try builder.update(7, in: "songs", [.set("plays", 2)])
        let edit = builder.transaction(id: UUID(), message: "Play", significance: .normal, metadata: [:])
        #expect(edit.description == #"Transaction t 1 (basis 0) "Play": songs 7 update {plays: 1 → 2}"#)

        var bulk = TransactionBuilder(on: Database())
        for n in 0..<20 { try bulk.insert(["n": .int(Int64(n))], id: RecordID(Int64(n)), into: "t") }
        let imported = bulk.transaction(id: UUID(), message: "", significance: .normal, metadata: [:])
        #expect(imported.description.hasPrefix(#"Transaction t 1 (basis 0) "": t 0 insert {n: 0}; t 1 insert {n: 1}"#))
        #expect(imported.description.hasSuffix("; … and 4 more changes"))
        let nothing = TransactionBuilder(on: Database()).transaction(
            id: UUID(),
            message: "",
            significance: .normal,
            metadata: [:]
        )
        #expect(nothing.description == #"Transaction t 1 (basis 0) "": no changes"#)
    }

    @Test("index declarations show in a transaction's and a value's description")
    func indexDescriptions() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
        try builder.createIndex("byPath", on: "files", fields: ["path"], unique: true)
        let declared = builder.transaction(id: UUID(), message: "Index", significance: .normal, metadata: [:])
        #expect(
            declared.description
                == #"Transaction t 1 (basis 0) "Index": files create index unique byPath(path); songs create index byAlbum(album, track)"#
        )
        #expect(
            builder.database.description
                == "Database t 0 {files: {} indexed unique byPath(path), songs: {} indexed byAlbum(album, track)}"
        )
        var change = TransactionBuilder(on: builder.database)
        try change.dropIndex("byAlbum", on: "songs")
        try change.createIndex("byAlbum", on: "songs", fields: ["album"])
        try change.dropIndex("byPath", on: "files")
        try change.insert(["album": 1], id: 7, into: "songs")
        let replaced = change.transaction(id: UUID(), message: "", significance: .normal, metadata: [:])
        #expect(
            replaced.description
                == #"Transaction t 1 (basis 0) "": files drop index unique byPath(path); songs replace index byAlbum(album, track) → byAlbum(album); songs 7 insert {album: 1}"#
        )
    }
}
