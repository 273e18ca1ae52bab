import ArgumentParser
import Foundation
import Strata

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "A record, now or as of a past t.",
        discussion: """
            IDs: digits are an integer ID, a UUID a UUID ID, anything else a string; \
            prefix int:, str: or uuid: to say which. A negative integer ID: int:-1 \
            (or put -- before the arguments).
            """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The table.")
    var table: String

    @Argument(help: "The record's ID.")
    var id: RecordIDArgument

    @Option(
        name: .customLong("as-of"),
        parsing: .unconditional,
        help: "The value after transaction t (a number or an ID)."
    )
    var asOf: TransactionReference?

    func run() async throws {
        let console = Console()
        let store = try await common.openReading(console)
        let value = try await common.value(of: store, asOf: asOf)
        try? await store.close()
        guard let record = value.record(id.id, in: Key(table)) else {
            throw CommandFailure(
                .failed,
                "\(common.path): no record \(Text.recordID(id.id)) in table \(Text.safe(table)) at t \(value.basis)"
            )
        }
        if common.json {
            console.json(
                .object([
                    ("t", .int(value.basis)), ("table", .string(table)), ("id", TransactionJSON.recordID(id.id)),
                    ("record", TransactionJSON.record(record)),
                ])
            )
            return
        }
        console.line(
            console.styled("\(Text.safe(table))/\(Text.recordID(id.id))", .bold) + " at t \(Text.count(value.basis))"
        )
        for line in TransactionText.fields(record, marker: "") { console.line(line) }
    }
}

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Every version of a record, newest first, with the transaction that made it."
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The table.")
    var table: String

    @Argument(help: "The record's ID.")
    var id: RecordIDArgument

    func run() async throws {
        let console = Console()
        let log = try await common.openLog(console)
        let versions = try await common.failing { try log.versions(of: id.id, in: Key(table)) }
        // As `get` of a record the value lacks: a typo in a table or an ID
        // fails a script instead of reading as an empty history.
        guard !versions.isEmpty else {
            let searched = log.count == 0 ? "the history is empty" : "t 1–\(log.count)"
            throw CommandFailure(
                .failed,
                "\(common.path): no transaction made record \(Text.recordID(id.id)) in table "
                    + "\(Text.safe(table)) (\(searched))"
            )
        }
        if common.json {
            console.json(
                .array(
                    versions.map { version in
                        .object([
                            ("t", .int(version.transaction.t)),
                            ("id", .string(version.transaction.id.uuidString)),
                            ("time", JSON.time(version.transaction.timestamp)),
                            ("message", .string(version.transaction.message)),
                            ("record", version.record.map(TransactionJSON.record) ?? .null),
                        ])
                    }
                )
            )
            return
        }
        for (index, version) in versions.enumerated() {
            if index > 0 { console.line() }
            let summary = version.transaction
            console.line(
                console.styled("t \(Text.count(summary.t))", .bold)
                    + "  \(Text.time(summary.timestamp))  \(Text.safe(summary.message))"
            )
            if let record = version.record {
                for line in TransactionText.fields(record, marker: "") { console.line(line) }
            } else {
                console.line(console.styled("    (deleted)", .red))
            }
        }
    }
}
