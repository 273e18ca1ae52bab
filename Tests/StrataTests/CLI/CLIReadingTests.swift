import Foundation
import Strata
import Testing

/// The reading commands, run as a user runs them, over a library store.
@Suite("strata: reading commands")
struct CLIReadingTests {
    @Test("info: t, tables with record counts and indexes, files; --json says the same")
    func info() async throws {
        let path = temporaryStorePath("cli-info")
        defer { removeStore(path) }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let text = try await StrataRunner.run(["info", path])
        #expect(text.status == 0, "\(text)")
        #expect(text.output.contains("t          \(value.basis)"), "\(text)")
        #expect(text.output.contains("byPlays (plays)"), "\(text)")
        #expect(text.output.contains("songs"), "\(text)")
        let json = try await StrataRunner.run(["info", path, "--json"]).object()
        #expect(json["t"] as? Int == Int(value.basis))
        #expect(json["records"] as? Int == value.recordCount)
        let tables = try #require(json["tables"] as? [[String: Any]])
        #expect(tables.map { $0["name"] as? String } == value.tableNames.map(\.string))
        #expect(tables.map { $0["records"] as? Int } == value.tableNames.map { value[table: $0].count })
        let log = try #require(json["log"] as? [String: Any])
        #expect((log["count"] as? Int ?? 0) > 3, "segments of 4 KB: several")
    }

    @Test("show: a revert names what it reverts, in text and JSON")
    func showReverts() async throws {
        let path = temporaryStorePath("cli-show-reverts")
        defer { removeStore(path) }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let log = try await StoreLog.open(at: path)
        let all = try log.transactions(limit: Int(value.basis))
        let revert = try #require(all.first { $0.reverts != nil })
        let reverted = try #require(revert.reverts)
        let revertedT = try #require(log.t(of: reverted))
        let text = try await StrataRunner.run(["show", path, "\(revert.t)"])
        #expect(text.status == 0, "\(text)")
        #expect(text.output.contains("reverts       \(reverted.uuidString) (t \(revertedT))"), "\(text.output)")
        let json = try await StrataRunner.run(["show", path, "\(revert.t)", "--json"]).object()
        let reverts = try #require(json["reverts"] as? [String: Any])
        #expect(reverts["id"] as? String == reverted.uuidString && reverts["t"] as? Int == Int(revertedT))
        #expect((json["covers"] as? [Any])?.isEmpty == true)
        // An ordinary transaction reverts nothing.
        let plain = try await StrataRunner.run(["show", path, "1", "--json"]).object()
        #expect(plain["reverts"] is NSNull)
        #expect(!(try await StrataRunner.run(["show", path, "1"]).output.contains("reverts")))
    }

    @Test("log: separators and invisible characters in a message are escaped; emoji joiners are kept")
    func invisibleCharacters() async throws {
        let path = temporaryStorePath("cli-invisible")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}"
        try await store.transact(message: "a\u{2028}b\u{2029}c\u{200B}d\u{FEFF}e \(family)") {
            try $0.insert(["n": 1], id: 1, into: "t")
        }
        try await store.close()
        let log = try await StrataRunner.run(["log", path])
        #expect(log.status == 0, "\(log)")
        #expect(log.output.contains("a\\u{2028}b\\u{2029}c\\u{200B}d\\u{FEFF}e \(family)"), "\(log.output)")
        #expect(log.output.split(separator: "\n").count == 1)
    }

    @Test("log: newest first, one line each; --limit, --table, --record, --significant, --since/--until")
    func log() async throws {
        let path = temporaryStorePath("cli-log")
        defer { removeStore(path) }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let all = try await StrataRunner.run(["log", path, "--limit", "0"])
        #expect(all.status == 0, "\(all)")
        let lines = all.output.split(separator: "\n")
        #expect(lines.count == Int(value.basis))
        #expect(lines.first?.hasPrefix("\(value.basis) ") == true, "newest first: \(lines.first ?? "")")
        // A message's line break and escape sequence cannot break the line or recolour the terminal.
        #expect(lines.first?.contains("Line\\nbreak and \\u{1B}[31mescape") == true, "\(lines.first ?? "")")
        #expect(!all.output.contains("\u{1B}"))
        #expect(try await StrataRunner.run(["log", path, "--limit", "3"]).output.split(separator: "\n").count == 3)

        let json = try #require(
            try await StrataRunner.run(["log", path, "--limit", "0", "--json"]).json() as? [[String: Any]]
        )
        #expect(json.map { $0["t"] as? Int } == (1...Int(value.basis)).reversed().map { $0 })
        #expect(json.last?["message"] as? String == "Import ♫ library")
        #expect(json.last?["inserts"] as? Int == 44)

        let significant = try #require(
            try await StrataRunner.run(["log", path, "--significant", "--json", "--limit", "0"]).json()
                as? [[String: Any]]
        )
        #expect(significant.compactMap { $0["significance"] as? String }.allSatisfy { $0 == "significant" })
        #expect(significant.count == 2, "the import and the revert")

        let album = try #require(
            try await StrataRunner.run(["log", path, "--table", "albums", "--json", "--limit", "0"]).json()
                as? [[String: Any]]
        )
        #expect(album.count == 3, "import, rename, revert")
        let song7 = try #require(
            try await StrataRunner.run(["log", path, "--table", "songs", "--record", "7", "--json", "--limit", "0"])
                .json()
                as? [[String: Any]]
        )
        #expect(song7.count == 1 + (CLIFixtures.plays + 1) / 7, "inserted, then played at n = 6, 13, 20, …")
        let stringID = try #require(
            try await StrataRunner.run(["log", path, "--table", "albums", "--record", "é2", "--json"]).json()
                as? [[String: Any]]
        )
        #expect(stringID.count == 1)

        let future = try await StrataRunner.run(["log", path, "--since", "2999-01-01"])
        #expect(future.status == 0)
        #expect(future.output == "no transactions match\n")
        let past = try await StrataRunner.run(["log", path, "--until", "2000-01-01"])
        #expect(past.output == "no transactions match\n")
    }

    @Test("show: a transaction by t or ID, field by field before → after; --json")
    func show() async throws {
        let path = temporaryStorePath("cli-show")
        defer { removeStore(path) }
        _ = try await CLIFixtures.makeLibrary(at: path)
        let update = try await StrataRunner.run(["show", path, "2"])
        #expect(update.status == 0, "\(update)")
        #expect(update.output.contains("~ songs/2"), "\(update)")
        #expect(update.output.contains("plays  2 → 101"), "\(update)")
        // A t as `log` prints it, grouped by thousands, reads as the number.
        #expect(try await StrataRunner.run(["show", path, "0,002"]).output == update.output)
        // An edit between values that print alike shows what differs.
        let store = try await Store.open(at: path)
        let edit = try await store.transact { builder in
            try builder.update(RecordID(2), in: "songs", [.set("title", .string("caf\u{E9}"))])
        }
        let respelled = try await store.transact { builder in
            try builder.update(RecordID(2), in: "songs", [.set("title", .string("cafe\u{301}"))])
        }
        try await store.close()
        let renamed = try await StrataRunner.run(["show", path, "\(respelled.transaction.t)"])
        #expect(renamed.output.contains(#"title  "caf\u{E9}" → "cafe\u{301}""#), "\(renamed)")
        #expect(edit.transaction.t < respelled.transaction.t)
        for malformed in ["1,00", ",002", "1,0002", "1,,000", "1,00a"] {
            #expect(try await StrataRunner.run(["show", path, malformed]).status == 2, "\(malformed)")
        }
        let json = try await StrataRunner.run(["show", path, "1", "--json"]).object()
        let id = try #require(json["id"] as? String)
        let changes = try #require(json["changes"] as? [[String: Any]])
        #expect(changes.count == 44)
        #expect(changes.first?["kind"] as? String == "insert")
        let indexes = try #require(json["indexChanges"] as? [[String: Any]])
        #expect(indexes.count == 1)
        let byID = try await StrataRunner.run(["show", path, id, "--json"]).object()
        #expect(byID["t"] as? Int == 1)

        let missing = try await StrataRunner.run(["show", path, "999"])
        #expect(missing.status == 2, "\(missing)")
        #expect(missing.error.contains("no transaction 999"), "\(missing)")
        #expect(missing.error.split(separator: "\n").count == 1, "one line: \(missing.error)")
    }

    @Test("get: now and as of a past t; string, integer and UUID IDs; a missing record exits 1")
    func get() async throws {
        let path = temporaryStorePath("cli-get")
        defer { removeStore(path) }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let now = try await StrataRunner.run(["get", path, "songs", "2", "--json"]).object()
        let record = try #require(now["record"] as? [String: Any])
        #expect(record["plays"] as? Int == Self.plays(of: 2, in: value))
        let past = try await StrataRunner.run(["get", path, "songs", "2", "--as-of", "1", "--json"]).object()
        #expect((past["record"] as? [String: Any])?["plays"] as? Int == 2)
        #expect(past["t"] as? Int == 1)
        let album = try await StrataRunner.run(["get", path, "albums", "é2"])
        #expect(album.status == 0, "\(album)")
        #expect(album.output.contains("Zweite Ébène"))
        let person = try await StrataRunner.run(["get", path, "people", CLIFixtures.personID.uuidString])
        #expect(person.status == 0, "\(person)")
        #expect(person.output.contains("<4 bytes>"))
        let gone = try await StrataRunner.run(["get", path, "songs", "40"])
        #expect(gone.status == 1)
        #expect(gone.error.contains("no record 40 in table songs"), "\(gone)")
        let before = try await StrataRunner.run(["get", path, "songs", "40", "--as-of", "\(CLIFixtures.removal - 1)"])
        #expect(before.status == 0, "song 40 existed before its delete: \(before)")
        // Digits beyond 64 bits are no ID to guess at; `str:` names such a string.
        let huge = try await StrataRunner.run(["get", path, "songs", "99999999999999999999"])
        #expect(huge.status == 2, "\(huge)")
        let asString = try await StrataRunner.run(["get", path, "songs", "str:99999999999999999999"])
        #expect(asString.status == 1 && asString.error.contains("no record"), "\(asString)")
    }

    static func plays(of id: Int, in value: Database) -> Int? {
        if case .int(let plays)? = value.record(RecordID(id), in: "songs")?["plays"] { return Int(plays) }
        return nil
    }

    @Test("history: every version newest first, the delete included")
    func history() async throws {
        let path = temporaryStorePath("cli-history")
        defer { removeStore(path) }
        _ = try await CLIFixtures.makeLibrary(at: path)
        let versions = try #require(
            try await StrataRunner.run(["history", path, "songs", "40", "--json"]).json() as? [[String: Any]]
        )
        #expect(versions.count == 2)
        #expect(versions.first?["record"] is NSNull, "deleted last")
        #expect(versions.last?["t"] as? Int == 1)
        let album = try #require(
            try await StrataRunner.run(["history", path, "albums", "a1", "--json"]).json() as? [[String: Any]]
        )
        #expect(
            album.map { ($0["t"] as? Int).map(Int64.init) } == [CLIFixtures.revert, CLIFixtures.rename, 1],
            "import, rename, revert"
        )
        let text = try await StrataRunner.run(["history", path, "songs", "40"])
        #expect(text.output.contains("(deleted)"), "\(text)")
        #expect(text.output.hasPrefix("t \(CLIFixtures.removal)"), "\(text)")
        // A record no transaction made (a typo in the ID or the table)
        // fails as `get` does, with and without --json.
        for arguments in [["songs", "99999"], ["sogns", "40"]] {
            let missing = try await StrataRunner.run(["history", path] + arguments)
            #expect(missing.status == 1, "\(arguments): \(missing)")
            #expect(missing.output.isEmpty, "\(arguments): \(missing)")
            #expect(missing.error.contains("no transaction made record"), "\(arguments): \(missing)")
        }
        // With --json, the error as an object, as every command writes one.
        let missing = try await StrataRunner.run(["history", path, "songs", "99999", "--json"])
        #expect(missing.status == 1, "\(missing)")
        let error = try missing.object()
        #expect((error["error"] as? String)?.contains("no transaction made record 99999") == true, "\(missing)")
    }

    @Test("diff: the combined change between two values, in either direction; none for one value")
    func diff() async throws {
        let path = temporaryStorePath("cli-diff")
        defer { removeStore(path) }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let store = try await Store.open(
            at: path,
            options: {
                var o = StoreOptions(); o.readOnly = true; return o
            }()
        )
        let expected = Strata.diff(from: try await store.database(asOf: 5), to: value)
        try await store.close()
        let forward = try await StrataRunner.run(["diff", path, "5", "\(value.basis)", "--json"]).object()
        let changes = try #require(forward["changes"] as? [[String: Any]])
        #expect(changes.count == expected.changes.values.reduce(0) { $0 + $1.count })
        let backward = try await StrataRunner.run(["diff", path, "\(value.basis)", "5", "--json"]).object()
        let reversed = try #require(backward["changes"] as? [[String: Any]])
        #expect(reversed.count == changes.count)
        #expect(
            Set(changes.compactMap { $0["kind"] as? String }.filter { $0 == "insert" }).count
                == Set(reversed.compactMap { $0["kind"] as? String }.filter { $0 == "delete" }).count
        )
        let same = try await StrataRunner.run(["diff", path, "3", "3"])
        #expect(same.output == "no differences between t 3 and t 3\n")
    }
}
