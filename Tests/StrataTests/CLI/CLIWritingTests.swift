import Foundation
import Strata
import Testing

/// Export, import and the writing commands, run as a user runs them.
@Suite("strata: export, import and writing commands")
struct CLIWritingTests {
    static func readOnly() -> StoreOptions {
        var options = StoreOptions()
        options.readOnly = true
        return options
    }

    /// The tables of `value` as plain dictionaries, for equality.
    static func records(_ value: Database) -> [Key: [RecordID: Record]] {
        var tables: [Key: [RecordID: Record]] = [:]
        for name in value.tableNames {
            tables[name] = Dictionary(uniqueKeysWithValues: value[table: name].records.map { ($0.key, $0.value) })
        }
        return tables
    }

    /// Runs `strata import STORE FILE` plus `arguments` on `lines`,
    /// written to a file beside the store and removed after.
    static func importLines(
        _ lines: String,
        into store: String,
        _ arguments: [String]
    ) async throws -> StrataRunner.Outcome {
        let file = store + ".jsonl"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try lines.write(toFile: file, atomically: true, encoding: .utf8)
        return try await StrataRunner.run(["import", store, file] + arguments)
    }

    /// The tables of the store at `path`, opened read-only.
    static func storedRecords(at path: String) async throws -> [Key: [RecordID: Record]] {
        let store = try await Store.open(at: path, options: readOnly())
        let value = store.current
        try await store.close()
        return records(value)
    }

    @Test("export then import copies every record exactly: every kind of value, every kind of ID")
    func roundTrip() async throws {
        let path = temporaryStorePath("cli-export")
        let imports = temporaryStorePath("cli-import")
        let copy = imports + "/copy"
        defer {
            removeStore(path)
            removeStore(imports)
        }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let exported = try await StrataRunner.run(["export", path])
        #expect(exported.status == 0, "\(exported)")
        #expect(exported.output.split(separator: "\n").count == value.recordCount)
        let imported = try await Self.importLines(exported.output, into: copy, ["--create", "--batch", "7", "--json"])
        #expect(imported.status == 0, "\(imported)")
        let summary = try imported.object()
        #expect(summary["records"] as? Int == value.recordCount)
        #expect(summary["transactions"] as? Int == (value.recordCount + 6) / 7)
        #expect(try await Self.storedRecords(at: copy) == Self.records(value))
        // Exports of equal values are equal bytes (records by ID, whatever the hash seed).
        #expect(try await StrataRunner.run(["export", copy]).output == exported.output)

        // One table, with the ID in a field of the user's choosing; and the json format.
        let songs = try await StrataRunner.run(["export", path, "--table", "songs", "--id-field", "id"])
        #expect(songs.output.split(separator: "\n").allSatisfy { $0.hasPrefix("{\"id\":") && !$0.contains("$table") })
        let json = try await StrataRunner.run(["export", path, "--format", "json"]).object()
        #expect((json["songs"] as? [Any])?.count == value[table: "songs"].count)
        #expect(Set(json.keys) == Set(value.tableNames.map(\.string)))
        // --json, as on every command, is one JSON document: the json format.
        let promised = try await StrataRunner.run(["export", path, "--json"])
        #expect(promised.output == (try await StrataRunner.run(["export", path, "--format", "json"])).output)
        let both = try await StrataRunner.run(["export", path, "--json", "--format", "jsonl"])
        #expect(both.status == 2 && both.output.contains("give one of them"), "\(both)")
    }

    @Test("a table named \"\" (which the engine takes) travels through export and import, with and without --table")
    func emptyTableName() async throws {
        let path = temporaryStorePath("cli-empty-table")
        let copies = temporaryStorePath("cli-empty-table-copies")
        let (copy, single) = (copies + "/copy", copies + "/single")
        defer {
            removeStore(path)
            removeStore(copies)
        }
        var options = StoreOptions()
        options.createIfMissing = true
        let store = try await Store.open(at: path, options: options)
        try await store.transact { builder in
            for n in 1...20 { try builder.insert(["x": .int(Int64(n))], id: RecordID(n), into: "") }
            try builder.insert(["y": "é"], id: "a", into: " ")
            try builder.insert(["z": true], id: 1, into: "t")
        }
        let value = store.current
        try await store.close()

        let exported = try await StrataRunner.run(["export", path])
        #expect(exported.status == 0, "\(exported)")
        #expect(exported.output.contains(#"{"$table":"","$id":1,"x":1}"#), "\(exported.output)")
        let imported = try await Self.importLines(exported.output, into: copy, ["--create", "--batch", "3"])
        #expect(imported.status == 0, "\(imported)")
        #expect(try await Self.storedRecords(at: copy) == Self.records(value))

        // One table: its lines name none, and `--table ""` names it again.
        let table = try await StrataRunner.run(["export", path, "--table", ""])
        #expect(table.status == 0, "\(table)")
        #expect(table.output.split(separator: "\n").count == 20)
        let back = try await Self.importLines(table.output, into: single, ["--create", "--table", ""])
        #expect(back.status == 0, "\(back)")
        #expect(try await Self.storedRecords(at: single) == [Key(""): Self.records(value)[Key("")]!])
    }

    @Test(
        "export of a table of 40,000 records (chunks of 16,384, batches written while the next encodes) in both formats"
    )
    func largeExport() async throws {
        let path = temporaryStorePath("cli-export-large")
        defer { removeStore(path) }
        var options = StoreOptions()
        options.createIfMissing = true
        options.durability = .none
        let store = try await Store.open(at: path, options: options)
        // IDs inserted out of order, and one table of a single record.
        try await store.transact(message: "large") { builder in
            for n in (0..<40_000).reversed() {
                try builder.insert(
                    ["n": .int(Int64(n)), "s": .string("é\(n)")],
                    id: RecordID(Int64(n) * 3),
                    into: "big"
                )
            }
            try builder.insert(["n": 1], id: RecordID("only"), into: "one")
        }
        try await store.close()
        let lines = try await StrataRunner.run(["export", path, "--table", "big"])
        #expect(lines.status == 0, "\(lines.error)")
        let ids = lines.output.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["$id"] as? Int
        }
        #expect(ids == (0..<40_000).map { $0 * 3 })
        let json = try await StrataRunner.run(["export", path, "--format", "json"]).object()
        let big = try #require(json["big"] as? [[String: Any]])
        #expect(big.map { $0["$id"] as? Int } == (0..<40_000).map { $0 * 3 })
        #expect(big.map { $0["s"] as? String } == (0..<40_000).map { "é\($0)" })
        #expect((json["one"] as? [[String: Any]])?.map { $0["$id"] as? String } == ["only"])
    }

    @Test("export --as-of writes the past value")
    func exportAsOf() async throws {
        let path = temporaryStorePath("cli-export-asof")
        defer { removeStore(path) }
        _ = try await CLIFixtures.makeLibrary(at: path)
        let first = try await StrataRunner.run(["export", path, "--as-of", "1", "--table", "songs"])
        #expect(first.status == 0, "\(first)")
        #expect(first.output.split(separator: "\n").count == 40)
        #expect(first.output.contains("\"plays\":2,"))
        #expect(try await StrataRunner.run(["export", path, "--as-of", "999"]).status == 2)
        let missing = try await StrataRunner.run(["export", path, "--table", "nope"])
        #expect(missing.status == 1)
        #expect(missing.error.contains("no table nope"))
    }

    @Test("import: the batches of one run are one undo action; another run is another")
    func importIsOneUndoAction() async throws {
        let path = temporaryStorePath("cli-import-undo")
        defer { removeStore(path) }
        let lines = (1...5).map { "{\"$id\":\($0),\"v\":\($0)}" }.joined(separator: "\n") + "\n"
        let first = try await StrataRunner.run(
            ["import", path, "-", "--table", "t", "--batch", "2", "--create"],
            input: lines
        )
        #expect(first.status == 0, "\(first)")
        let more = (6...7).map { "{\"$id\":\($0),\"v\":\($0)}" }.joined(separator: "\n") + "\n"
        let second = try await StrataRunner.run(["import", path, "-", "--table", "t", "--batch", "1"], input: more)
        #expect(second.status == 0, "\(second)")
        let store = try await Store.open(at: path, options: testOptions())
        #expect(store.current.basis == 5)
        #expect(try await store.undoAction()?.transactions.count == 2, "the second run: two batches")
        try await store.undo()
        #expect(store.current[table: "t"].count == 5)
        #expect(try await store.undoAction()?.transactions.count == 3, "the first run: three batches")
        try await store.undo()
        #expect(store.current[table: "t"].count == 0)
        try await store.close()
    }

    @Test("import: a malformed line is named by its number and nothing of its batch is committed")
    func malformedLine() async throws {
        let path = temporaryStorePath("cli-import-bad")
        defer { removeStore(path) }
        let file = path + ".jsonl"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let lines = [
            #"{"$id": 1, "title": "one"}"#, #"{"$id": 2, "title": "two"}"#, "", #"{"$id": 3, "title": "three"}"#,
            #"{"$id": 4, "title": "four""#, #"{"$id": 5}"#,
        ]
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let outcome = try await StrataRunner.run(["import", path, file, "--table", "songs", "--batch", "3", "--create"])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.error.contains("line 5"), "\(outcome)")
        #expect(outcome.error.contains("lines 4–6"), "\(outcome)")
        let store = try await Store.open(at: path, options: Self.readOnly())
        #expect(store.current[table: "songs"].count == 2, "the first batch (lines 1–3) only")
        #expect(store.current.basis == 1)
        try await store.close()
        // From a pipe, the input is named as such.
        let piped = try await StrataRunner.run(
            ["import", path, "-", "--table", "songs"],
            input: #"{"$id": 7, "title": "seven"}"# + "\n" + #"{"$id": 8, "title": "#
        )
        #expect(piped.status == 1 && piped.error.contains("standard input line 2"), "\(piped)")
        // A JSON document of tables, and UTF-16 text: named for what they are.
        let document = try await StrataRunner.run(
            ["import", path, "-"],
            input: #"{"songs": [{"$id": 1, "title": "one"}], "albums": []}"# + "\n"
        )
        #expect(document.status == 1 && document.error.contains("looks like a JSON document"), "\(document)")
        let utf16 = path + ".utf16"
        defer { try? FileManager.default.removeItem(atPath: utf16) }
        try #"{"$id": 1, "title": "one"}"#.write(toFile: utf16, atomically: true, encoding: .utf16)
        let wide = try await StrataRunner.run(["import", path, utf16, "--table", "songs"])
        #expect(wide.status == 1 && wide.error.contains("looks like UTF-16"), "\(wide)")

        for (line, reason) in [
            (#"{"title": "no id"}"#, "no $id member"), (#"[1, 2]"#, "expected an object"),
            (#"{"$id": 1.5}"#, "$id must be"), ("{\"$id\": 1, \"bad\": \"\u{1}\"}", "control character"),
            (#"{"$id": 1, "$table": 3}"#, "$table must be"), (#"{"$id": 1}"#, "no $table member"),
            (
                #"{"$id": 1, "$table": "t", "deep": "# + String(repeating: "[", count: 65)
                    + String(repeating: "]", count: 65)
                    + "}", "field deep nests 65 levels"
            ),
        ] {
            try line.write(toFile: file, atomically: true, encoding: .utf8)
            let failed = try await StrataRunner.run(["import", path, file])
            #expect(failed.status == 1, "\(line): \(failed)")
            #expect(failed.error.contains("line 1: ") && failed.error.contains(reason), "\(line): \(failed)")
        }
        let after = try await Store.open(at: path, options: Self.readOnly())
        #expect(after.current.basis == 1, "nothing committed by the failed imports")
        try await after.close()
    }

    @Test("import skips blank lines (spaces, CRLF), refuses a $table member beside --table and a directory as input")
    func awkwardInput() async throws {
        let path = temporaryStorePath("cli-import-awkward")
        defer { removeStore(path) }
        let input = "{\"$id\": 1, \"a\": 1}\r\n   \r\n\r\n\t\n{\"$id\": 2, \"a\": 2}\r\n{\"$id\": 3}"
        let outcome = try await StrataRunner.run(
            ["import", path, "-", "--table", "t", "--create", "--json"],
            input: input
        )
        #expect(outcome.status == 0, "\(outcome)")
        #expect(try outcome.object()["records"] as? Int == 3)
        let again = try await StrataRunner.run(["import", path, "-", "--table", "t", "--json"], input: input)
        #expect(try again.object()["transactions"] as? Int == 0, "nothing changed, nothing committed: \(again)")
        let clash = try await StrataRunner.run(
            ["import", path, "-", "--table", "t"],
            input: #"{"$id": 4, "$table": "u"}"#
        )
        #expect(clash.status == 1 && clash.error.contains("line 1"), "\(clash)")
        let directory = try await StrataRunner.run([
            "import", path, FileManager.default.temporaryDirectory.path, "--table", "t",
        ])
        #expect(directory.status == 1, "\(directory)")
        let exportClash = try await StrataRunner.run(["export", path, "--id-field", "a"])
        #expect(exportClash.status == 1 && exportClash.error.contains("choose another --id-field"), "\(exportClash)")
        // A field named $table cannot be carried by JSON lines, --table or
        // not (import would read it as the table); JSON keeps it.
        let named = try await StrataRunner.run(["import", path, "-", "--json"], input: #"{"$id": 9, "$table": "u"}"#)
        #expect(named.status == 0, "\(named)")
        let writer = try await Store.open(at: path, options: StoreOptions())
        try await writer.transact { try $0.upsert(["$table": "mine"], id: 9, into: "u") }
        try await writer.close()
        for arguments in [["export", path], ["export", path, "--table", "u"]] {
            let refused = try await StrataRunner.run(arguments)
            #expect(refused.status == 1 && refused.error.contains("JSON lines cannot carry"), "\(refused)")
        }
        let json = try await StrataRunner.run(["export", path, "--table", "u", "--format", "json"])
        #expect(json.status == 0 && json.output.contains(#""$table":"mine""#), "\(json)")
        let store = try await Store.open(at: path, options: Self.readOnly())
        #expect(store.current.basis == 3)
        #expect(store.current[table: "t"].count == 3)
        try await store.close()
    }

    @Test("import reads standard input, replaces records with the same ID, and needs --create for a new store")
    func importFromStandardInput() async throws {
        let path = temporaryStorePath("cli-import-stdin")
        defer { removeStore(path) }
        let missing = try await StrataRunner.run(["import", path + "/new", "-", "--table", "t"], input: "")
        #expect(missing.status == 4, "\(missing)")
        let input = (1...2_500).map { #"{"$id": \#($0 % 1_000), "n": \#($0)}"# }.joined(separator: "\n") + "\n"
        let outcome = try await StrataRunner.run(["import", path, "-", "--table", "t", "--create"], input: input)
        #expect(outcome.status == 0, "\(outcome)")
        let store = try await Store.open(at: path, options: Self.readOnly())
        #expect(store.current[table: "t"].count == 1_000)
        #expect(store.current.record(RecordID(0), in: "t")?["n"] == .int(2_000), "the last line of an ID wins")
        #expect(store.current.record(RecordID(500), in: "t")?["n"] == .int(2_500))
        try await store.close()
    }

    @Test("revert a transaction, revert --to a past t; truncate asks first; snapshot and compact")
    func writingCommands() async throws {
        let path = temporaryStorePath("cli-write")
        defer { removeStore(path) }
        _ = try await CLIFixtures.makeLibrary(at: path)
        let deleteT = CLIFixtures.removal
        let revert = try await StrataRunner.run(["revert", path, "\(deleteT)", "--json"])
        #expect(revert.status == 0, "\(revert)")
        var store = try await Store.open(at: path, options: Self.readOnly())
        #expect(store.current.record(RecordID(40), in: "songs") != nil, "the delete undone")
        let t = store.current.basis
        try await store.close()

        let back = try await StrataRunner.run(["revert", path, "--to", "1"])
        #expect(back.status == 0, "\(back)")
        store = try await Store.open(at: path, options: Self.readOnly())
        #expect(Self.records(store.current) == Self.records(try await store.database(asOf: 1)))
        #expect(store.current.basis == t + 1, "recorded, nothing lost")
        try await store.close()
        // Back to where it is (the current t, or t 1 again): nothing to commit.
        for target in ["\(t + 1)", "1"] {
            let again = try await StrataRunner.run(["revert", path, "--to", target])
            #expect(again.status == 0 && again.output.contains("nothing to revert"), "\(again)")
        }
        let againJSON = try await StrataRunner.run(["revert", path, "--to", "1", "--json"])
        #expect(againJSON.status == 0 && againJSON.output.contains(#""committed":false"#), "\(againJSON)")
        store = try await Store.open(at: path, options: Self.readOnly())
        #expect(store.current.basis == t + 1, "no empty transaction")
        try await store.close()
        #expect(try await StrataRunner.run(["revert", path]).status == 2, "needs a transaction or --to")
        #expect(try await StrataRunner.run(["revert", path, "1", "--to", "2"]).status == 2)

        let refused = try await StrataRunner.run(["truncate", path, "--after", "5"], input: "no\n")
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.error.contains("Type yes"), "\(refused)")
        let noInput = try await StrataRunner.run(["truncate", path, "--after", "5"])
        #expect(noInput.status == 1, "no answer is no: \(noInput)")
        store = try await Store.open(at: path, options: Self.readOnly())
        #expect(store.current.basis == t + 1, "nothing changed")
        try await store.close()
        let confirmed = try await StrataRunner.run(["truncate", path, "--after", "5"], input: "yes\n")
        #expect(confirmed.status == 0, "\(confirmed)")
        store = try await Store.open(at: path, options: Self.readOnly())
        #expect(store.current.basis == 5)
        try await store.close()
        #expect(try await StrataRunner.run(["truncate", path, "--after", "3", "--yes"]).status == 0)
        #expect(try await StrataRunner.run(["truncate", path, "--after", "9", "--yes"]).status == 2, "past the end")

        let snapshot = try await StrataRunner.run(["snapshot", path, "--json"]).object()
        #expect(snapshot["t"] as? Int == 3)
        #expect(FileManager.default.fileExists(atPath: path + "/snapshots/" + (snapshot["file"] as? String ?? "?")))
        let compact = try await StrataRunner.run(["compact", path])
        #expect(compact.status == 0, "\(compact)")
        #expect(try await StrataRunner.run(["verify", path]).status == 0)
    }
}
