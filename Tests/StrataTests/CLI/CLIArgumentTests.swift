import Foundation
import Strata
import Testing

/// What a user's session with `strata` found in how arguments are read: a
/// `+` that made a string ID an integer, negative numbers read as options,
/// `truncate --after` narrower than the other commands' T, a revert of a
/// "revert to t N" that still said it returned to t N, a path that is not
/// UTF-8.
@Suite("strata: record IDs with a sign, negative T, truncate's T forms, reverts' metadata, non-UTF-8 paths")
struct CLIArgumentTests {
    @Test("a record ID with a leading + is a string ID, as import reads it; digits alone are an integer")
    func plusSignIsString() async throws {
        let path = temporaryStorePath("cli-args-plus")
        defer { removeStore(path) }
        let lines = [#"{"$id":"+15551234","name":"phone"}"#, #"{"$id":15551234,"name":"int"}"#]
        let imported = try await StrataRunner.run(
            ["import", path, "-", "--table", "c", "--create"],
            input: lines.joined(separator: "\n")
        )
        #expect(imported.status == 0, "\(imported)")
        let string = try await StrataRunner.run(["get", path, "c", "+15551234", "--json"])
        #expect(string.status == 0 && string.output.contains(#""phone""#), "\(string)")
        let integer = try await StrataRunner.run(["get", path, "c", "15551234", "--json"])
        #expect(integer.status == 0 && integer.output.contains(#""int""#), "\(integer)")
        let history = try await StrataRunner.run(["history", path, "c", "+15551234", "--json"])
        #expect(history.status == 0 && history.output.contains("phone") && !history.output.contains(#""int""#))
        // A t is digits: `+1` is no transaction.
        let signed = try await StrataRunner.run(["show", path, "+1"])
        #expect(signed.status == 2, "\(signed)")
    }

    @Test("str:, int: and uuid: are read as bytes (before a combining mark too); a UUID only in its written form")
    func prefixes() async throws {
        let path = temporaryStorePath("cli-args-prefixes")
        defer { removeStore(path) }
        let mark = "\u{301}x"
        let lines = [
            #"{"$id":"\#(mark)","name":"mark"}"#, #"{"$id":"+621E1F8-C36C-495A-93FC-0C247A3E6E5F","name":"signed"}"#,
            #"{"$id":{"$uuid":"0621E1F8-C36C-495A-93FC-0C247A3E6E5F"},"name":"uuid"}"#,
        ]
        let imported = try await StrataRunner.run(
            ["import", path, "-", "--table", "c", "--create"],
            input: lines.joined(separator: "\n")
        )
        #expect(imported.status == 0, "\(imported)")
        for (argument, name) in [
            ("str:" + mark, "mark"), (mark, "mark"), ("+621E1F8-C36C-495A-93FC-0C247A3E6E5F", "signed"),
            ("str:+621E1F8-C36C-495A-93FC-0C247A3E6E5F", "signed"), ("0621e1f8-c36c-495a-93fc-0c247a3e6e5f", "uuid"),
            ("uuid:0621E1F8-C36C-495A-93FC-0C247A3E6E5F", "uuid"),
        ] {
            let got = try await StrataRunner.run(["get", path, "c", argument, "--json"])
            #expect(got.status == 0 && got.output.contains(#""\#(name)""#), "\(argument): \(got)")
        }
        // `uuid:` with no UUID in its written form is a usage error.
        let malformed = try await StrataRunner.run(["get", path, "c", "uuid:+621E1F8-C36C-495A-93FC-0C247A3E6E5F"])
        #expect(malformed.status == 2, "\(malformed)")
    }

    @Test("a negative T is refused as a value of its option, naming it, not read as an option")
    func negativeT() async throws {
        let path = temporaryStorePath("cli-args-negative")
        defer { removeStore(path) }
        let imported = try await StrataRunner.run(
            ["import", path, "-", "--table", "t", "--create"],
            input: #"{"$id":1,"a":1}"#
        )
        #expect(imported.status == 0, "\(imported)")
        for arguments in [
            ["get", path, "t", "1", "--as-of", "-1"], ["export", path, "--as-of", "-1"],
            ["revert", path, "--to", "-1"], ["truncate", path, "--after", "-1", "--yes"],
        ] {
            let refused = try await StrataRunner.run(arguments)
            #expect(refused.status == 2, "\(arguments): \(refused)")
            #expect(
                refused.error.contains("'-1'") && !refused.error.contains("Missing value"),
                "\(arguments): \(refused)"
            )
        }
    }

    @Test("truncate --after takes a t as log prints it and a transaction's ID, like the other commands")
    func truncateForms() async throws {
        let path = temporaryStorePath("cli-args-truncate")
        defer { removeStore(path) }
        for n in 1...4 {
            let imported = try await StrataRunner.run(
                ["import", path, "-", "--table", "t", "--create"],
                input: #"{"$id":\#(n),"a":\#(n)}"#
            )
            #expect(imported.status == 0, "\(imported)")
        }
        var store = try await Store.open(at: path, options: CLIWritingTests.readOnly())
        let third = try #require(try await store.transaction(at: 3))
        try await store.close()
        let byID = try await StrataRunner.run(["truncate", path, "--after", third.id.uuidString, "--yes", "--json"])
        #expect(byID.status == 0, "\(byID)")
        #expect(try byID.object()["t"] as? Int == 3, "\(byID)")
        store = try await Store.open(at: path, options: CLIWritingTests.readOnly())
        #expect(store.current.basis == 3)
        try await store.close()
        let unknown = try await StrataRunner.run(["truncate", path, "--after", UUID().uuidString, "--yes"])
        #expect(unknown.status == 2 && unknown.error.contains("no transaction"), "\(unknown)")
        let grouped = try await StrataRunner.run(["truncate", path, "--after", "1,000", "--yes"])
        #expect(grouped.status == 2 && grouped.error.contains("no t 1000"), "read as t 1000: \(grouped)")
        #expect(try await StrataRunner.run(["truncate", path, "--after", "1", "--yes"]).status == 0)
        store = try await Store.open(at: path, options: CLIWritingTests.readOnly())
        #expect(store.current.basis == 1)
        try await store.close()
    }

    @Test("reverting a return to t N (and reverting that) does not say it returned to t N")
    func revertOfRevertTo() async throws {
        let path = temporaryStorePath("cli-args-revert")
        defer { removeStore(path) }
        var options = StoreOptions()
        options.createIfMissing = true
        let store = try await Store.open(at: path, options: options)
        try await store.transact { try $0.insert(["a": 1], id: 1, into: "t") }
        let back = try await store.revert(to: 0)
        #expect(back.transaction.metadata["revertedTo"] == .int(0))
        let redo = try await store.revert(transaction: back.transaction.id)
        #expect(redo.transaction.metadata["revertedTo"] == nil, "\(redo.transaction.metadata)")
        #expect(store.current[table: "t"][1] == ["a": 1])
        let again = try await store.revert(transaction: redo.transaction.id)
        #expect(again.transaction.metadata["revertedTo"] == nil)
        #expect(store.current.tables.isEmpty)
        try await store.close()
        let shown = try await StrataRunner.run(["show", path, "3", "--json"])
        #expect(shown.status == 0 && !shown.output.contains("revertedTo"), "\(shown)")
        let first = try await StrataRunner.run(["show", path, "2", "--json"])
        #expect(first.status == 0 && first.output.contains(#""revertedTo":0"#), "\(first)")
    }

    @Test("a mistyped command is named as unknown, with --json too")
    func unknownCommand() async throws {
        let text = try await StrataRunner.run(["lgo", "/tmp/none"])
        #expect(text.status == 2 && text.error.contains("unknown command 'lgo'") && text.error.contains("log"))
        let json = try await StrataRunner.run(["lgo", "/tmp/none", "--json"])
        #expect(json.status == 2, "\(json)")
        #expect((try json.object()["error"] as? String)?.contains("unknown command 'lgo'") == true, "\(json)")
        #expect(try await StrataRunner.run(["help", "log"]).status == 0)
        #expect(try await StrataRunner.run(["--help"]).status == 0)
    }

    @Test("an argument that is not UTF-8 is refused (exit 2), never read as another path")
    func nonUTF8Path() async throws {
        let path = temporaryStorePath("cli-args-utf8")
        defer { removeStore(path) }
        let bad = Array(path.utf8) + [0xFF]
        let refused = try await StrataRunner.run(
            bytes: [
                Array("import".utf8), bad, Array("-".utf8), Array("--table".utf8), Array("t".utf8),
                Array("--create".utf8),
            ],
            input: #"{"$id":1}"#
        )
        #expect(refused.status == 2 && refused.error.contains("not valid UTF-8"), "\(refused)")
        let replaced = path + "\u{FFFD}"
        #expect(!FileManager.default.fileExists(atPath: replaced), "no store at the path with a replacement character")
    }
}
