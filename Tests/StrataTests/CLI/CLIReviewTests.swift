import Foundation
import Strata
import Testing

/// What a review of `strata` as a user found: dates that moved a
/// millisecond or were guessed, a repair written into its source through
/// a link, an export import could not read, a BOM alone.
@Suite("strata: dates, repair through a link, the ID member, a BOM alone")
struct CLIReviewTests {
    @Test("a $date with milliseconds, alone or beside its seconds, comes back as written; invalid dates are refused")
    func dates() async throws {
        let path = temporaryStorePath("cli-review-dates")
        defer { removeStore(path) }
        let lines = [
            #"{"$id":1,"d":{"$seconds":817192800.001}}"#,
            #"{"$id":2,"d":{"$date":"2026-11-24T06:00:00.001Z","$seconds":817192800.001}}"#,
            #"{"$id":3,"d":{"$date":"2026-11-24T06:00:00.123Z"}}"#,
        ]
        let imported = try await StrataRunner.run(
            ["import", path, "-", "--table", "t", "--create"],
            input: lines.joined(separator: "\n")
        )
        #expect(imported.status == 0, "\(imported)")
        let exported = try await StrataRunner.run(["export", path, "--table", "t"])
        #expect(
            exported.output.contains(#""$date":"2026-11-24T06:00:00.001Z","$seconds":817192800.001}"#),
            "\(exported)"
        )
        #expect(exported.output.contains(#""$date":"2026-11-24T06:00:00.123Z""#), "\(exported)")
        // The same instant as text or as seconds is one value.
        let store = try await Store.open(at: path, options: CLIWritingTests.readOnly())
        #expect(store.current[table: "t"][1]?["d"] == store.current[table: "t"][2]?["d"])
        try await store.close()
        for bad in ["2026-02-30T00:00:00Z", "2026-11-28T24:00:00Z", "2026-11-28T23:00:00+25:00"] {
            let refused = try await StrataRunner.run(
                ["import", path, "-", "--table", "t"],
                input: #"{"$id":9,"d":{"$date":"\#(bad)"}}"#
            )
            #expect(refused.status == 1 && refused.error.contains("line 1"), "\(bad): \(refused)")
        }
        // An edit of milliseconds shows in the text of `show`.
        let writer = try await Store.open(at: path, options: StoreOptions())
        try await writer.transact {
            try $0.update(3, in: "t", [.set("d", .date(Date(timeIntervalSinceReferenceDate: 817_192_800.5)))])
        }
        let t = writer.current.basis
        try await writer.close()
        let shown = try await StrataRunner.run(["show", path, "\(t)"])
        #expect(shown.output.contains("2026-11-24T06:00:00.123Z → 2026-11-24T06:00:00.500Z"), "\(shown)")
        // Under a millisecond, in a list, and past the year 9999: every
        // edit reads as one.
        let editor = try await Store.open(at: path, options: StoreOptions())
        try await editor.transact {
            try $0.update(
                3,
                in: "t",
                [
                    .set("d", .date(Date(timeIntervalSinceReferenceDate: 817_192_800.5004))),
                    .set("l", .list([.date(Date(timeIntervalSinceReferenceDate: 10.5))])),
                    .set("far", .date(Date(timeIntervalSinceReferenceDate: 1e20))),
                ]
            )
        }
        try await editor.transact {
            try $0.update(
                3,
                in: "t",
                [
                    .set("l", .list([.date(Date(timeIntervalSinceReferenceDate: 10))])),
                    .set("far", .date(Date(timeIntervalSinceReferenceDate: .infinity))),
                ]
            )
        }
        let last = editor.current.basis
        try await editor.close()
        let fine = try await StrataRunner.run(["show", path, "\(last - 1)"])
        #expect(fine.output.contains("2026-11-24T06:00:00.500Z → 2026-11-24T06:00:00.5004Z"), "\(fine)")
        let nested = try await StrataRunner.run(["show", path, "\(last)"])
        #expect(nested.output.contains("[2001-01-01T00:00:10.5Z] → [2001-01-01T00:00:10Z]"), "\(nested)")
        #expect(
            nested.output.contains(
                "Date(timeIntervalSinceReferenceDate: 1e+20) → Date(timeIntervalSinceReferenceDate: inf)"
            ),
            "\(nested)"
        )
    }

    @Test("log --since and --until take ISO 8601, the time log prints, or a day, and refuse anything else")
    func logDates() async throws {
        let path = temporaryStorePath("cli-review-log")
        defer { removeStore(path) }
        _ = try await CLIFixtures.makeLibrary(at: path)
        let all = try await StrataRunner.run(["log", path, "--json"])
        #expect(all.status == 0, "\(all)")
        for late in ["9999-12-31 23:59:59", "9999-12-31T23:59:59", "9999-12-31T23:59:59Z", "9999-12-31"] {
            let none = try await StrataRunner.run(["log", path, "--since", late])
            #expect(none.status == 0 && none.output.contains("no transactions"), "\(late): \(none)")
        }
        for early in ["1970-01-01 00:00:00", "1970-01-01"] {
            let every = try await StrataRunner.run(["log", path, "--since", early, "--json"])
            #expect(every.output == all.output, "\(early)")
        }
        for bad in ["2026-11-28nonsense", "2026-02-30", "2026-11-28 24:00:00"] {
            let refused = try await StrataRunner.run(["log", path, "--since", bad])
            #expect(refused.status == 2, "\(bad): \(refused)")
        }
    }

    @Test("repair never writes into the store it reads, also through a symbolic link to it")
    func repairThroughLink() async throws {
        let path = temporaryStorePath("cli-review-repair")
        let link = temporaryStorePath("cli-review-link")
        defer {
            removeStore(path)
            try? FileManager.default.removeItem(atPath: link)
        }
        _ = try await CLIFixtures.makeLibrary(at: path)
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        for into in [
            link + "/copy", link + "/new/deeper", link + "/../" + URL(fileURLWithPath: path).lastPathComponent + "/x",
        ] {
            let refused = try await StrataRunner.run(["repair", path, "--into", into])
            #expect(refused.status == 2, "\(into): \(refused)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: path)
        #expect(!names.contains("copy") && !names.contains("new") && !names.contains("x"), "\(names)")
    }

    @Test("the ID member cannot be $table when lines name their tables; a BOM alone is a blank line")
    func idMemberAndBOM() async throws {
        let path = temporaryStorePath("cli-review-id")
        defer { removeStore(path) }
        _ = try await CLIFixtures.makeLibrary(at: path)
        let export = try await StrataRunner.run(["export", path, "--id-field", "$table"])
        #expect(export.status == 2 && export.output.isEmpty, "\(export)")
        let withTable = try await StrataRunner.run(["export", path, "--table", "songs", "--id-field", "$table"])
        #expect(withTable.status == 0, "\(withTable)")
        let importing = try await StrataRunner.run(["import", path, "-", "--id-field", "$table"], input: "{}")
        #expect(importing.status == 2, "\(importing)")
        for input in ["\u{FEFF}", "\u{FEFF}\r\n", "\u{FEFF}\r\n{\"$id\":1}\r\n"] {
            let bom = try await StrataRunner.run(["import", path, "-", "--table", "bom"], input: input)
            #expect(bom.status == 0, "\(Array(input.utf8)): \(bom)")
        }
    }

    @Test("a line's members are fields in any order: $map as the ID member, or first, round-trips (a helper's find)")
    func dollarMapMember() async throws {
        let path = temporaryStorePath("cli-review-map")
        let copy = temporaryStorePath("cli-review-map-copy")
        defer {
            removeStore(path)
            removeStore(copy)
        }
        let lines = #"{"v":1,"$map":5}"# + "\n" + #"{"v":{"$map":{"$date":1}},"$map":"abc"}"# + "\n"
        let first = try await StrataRunner.run(
            ["import", path, "-", "--create", "--table", "t", "--id-field", "$map"],
            input: lines
        )
        #expect(first.status == 0, "\(first)")
        // The export writes the ID member first.
        let exported = try await StrataRunner.run(["export", path, "--table", "t", "--id-field", "$map"])
        #expect(exported.status == 0 && exported.output.hasPrefix(#"{"$map":"#), "\(exported)")
        let second = try await StrataRunner.run(
            ["import", copy, "-", "--create", "--table", "t", "--id-field", "$map"],
            input: exported.output
        )
        #expect(second.status == 0, "\(second)")
        let again = try await StrataRunner.run(["export", copy, "--table", "t", "--id-field", "$map"])
        #expect(again.output == exported.output)
        // A field named $map first (the ID elsewhere) is a field, its map wrapped inside.
        let field = try await StrataRunner.run(
            ["import", path, "-", "--table", "u"],
            input: #"{"$map":{"$map":{"$date":1}},"$id":2}"# + "\n"
        )
        #expect(field.status == 0, "\(field)")
        let got = try await StrataRunner.run(["export", path, "--table", "u"])
        #expect(got.output == #"{"$id":2,"$map":{"$map":{"$date":1}}}"# + "\n", "\(got)")
    }
}
