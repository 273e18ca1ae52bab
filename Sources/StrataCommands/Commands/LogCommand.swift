import ArgumentParser
import Foundation
import Strata

struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "The history, newest first, one line per transaction.",
        discussion: """
            Each line: t, time (UTC), significance, message, and the changes \
            (+inserts ~updates -deletes). Reads only the transactions it prints \
            (and, with --table or --record, those it checks).
            """
    )

    @OptionGroup var common: CommonOptions

    @Flag(help: "Only significant transactions (imports, bulk edits, reverts).")
    var significant = false

    @Option(help: "Only transactions that change this table.")
    var table: String?

    @Option(help: "Only transactions that change this record (of --table).")
    var record: RecordIDArgument?

    @Option(
        help: """
            Only transactions at or after this time: ISO 8601 (2026-11-24T06:00:00Z), \
            the time as log prints it (2026-11-24 06:00:00, UTC), or a day (2026-11-24).
            """
    )
    var since: DateArgument?

    @Option(help: "Only transactions before this time (the same forms).")
    var until: DateArgument?

    // Unconditional: `--limit -1` reaches validate() instead of reading as an option.
    @Option(parsing: .unconditional, help: "At most this many transactions (0: all).")
    var limit = 50

    func validate() throws {
        if record != nil, table == nil { throw ValidationError("--record needs --table") }
        if limit < 0 { throw ValidationError("--limit must be 0 or more") }
    }

    func run() async throws {
        let console = Console()
        let log = try await common.openLog(console)
        let filter = HistoryFilter(
            minimumSignificance: significant ? .significant : nil,
            from: since?.date,
            until: until?.date,
            table: table.map { Key($0) },
            record: record?.id
        )
        let transactions = try await common.failing {
            try log.transactions(filter, limit: limit == 0 ? .max : limit)
        }
        if common.json {
            console.json(.array(transactions.map { JSON.object(TransactionJSON.summary($0)) }))
            return
        }
        var lines = TextTable([
            ("t", .right), ("time", .left), ("significance", .left), ("changes", .left), ("message", .left),
        ])
        for transaction in transactions {
            lines.add([
                Text.count(transaction.t), Text.time(transaction.timestamp),
                Text.significance(transaction.significance), Text.changeSummary(transaction),
                Text.safe(transaction.message),
            ])
        }
        if transactions.isEmpty {
            console.line(log.count == 0 ? "no transactions" : "no transactions match")
        } else {
            for line in lines.lines(console).dropFirst() { console.line(line) }
        }
    }
}

struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "A transaction: its metadata and every change, field by field, before → after."
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The transaction: its number t, or its ID.")
    var transaction: TransactionReference

    func run() async throws {
        let console = Console()
        let log = try await common.openLog(console)
        let t = try transaction.t(in: log)
        guard t >= 1 else { throw CommandFailure.usage("\(common.path): t 0 is the empty value, not a transaction") }
        let shown = try await common.failing { try log.transaction(at: t) }
        // What it reverts (an undo, a revert) and the transactions it
        // stands for (a combined one), with their numbers where known.
        let reverts = shown.reverts.map { id in (id: id, t: log.t(of: id)) }
        if common.json {
            let revertsJSON: JSON =
                reverts.map {
                    .object([("id", .string($0.id.uuidString)), ("t", $0.t.map { JSON.int(Int64($0)) } ?? .null)])
                }
                ?? .null
            let covers = JSON.array(
                shown.covers.map { .object([("t", .int($0.t)), ("id", .string($0.id.uuidString))]) }
            )
            console.json(
                .object(
                    TransactionJSON.summary(shown) + [("metadata", TransactionJSON.metadata(shown.metadata))]
                        + [("reverts", revertsJSON), ("covers", covers)]
                        + TransactionJSON.changes(shown.changes, indexChanges: shown.indexChanges)
                )
            )
            return
        }
        console.line(console.styled("transaction \(Text.count(shown.t))", .bold) + "  \(shown.id.uuidString)")
        console.line("time          \(Text.time(shown.timestamp)) UTC")
        console.line("significance  \(Text.significance(shown.significance))")
        console.line("message       \(Text.safe(shown.message))")
        for (key, value) in shown.metadata.sorted(by: { $0.key < $1.key }) {
            console.line("meta          \(Text.safe(key.string)): \(Text.safe(Text.value(value)))")
        }
        if let reverts {
            let at = reverts.t.map { " (t \(Text.count($0)))" } ?? ""
            console.line("reverts       \(reverts.id.uuidString)\(at)")
        }
        if !shown.covers.isEmpty {
            let first = shown.covers.map(\.t).min()!
            let last = shown.covers.map(\.t).max()!
            console.line("covers        \(Text.count(shown.covers.count, "transaction")) (t \(first)…\(last))")
        }
        console.line("changes       \(Text.changeSummary(shown))")
        console.line()
        for line in TransactionText.changes(shown.changes, indexChanges: shown.indexChanges, console: console) {
            console.line(line)
        }
    }
}

struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "What changed from the value at T1 to the value at T2, record by record.",
        discussion: "The combined change of the transactions between them (read from the log; no value is built)."
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The older value's t (or a transaction ID: the value after it).")
    var from: TransactionReference

    @Argument(help: "The newer value's t (or a transaction ID).")
    var to: TransactionReference

    func run() async throws {
        let console = Console()
        let log = try await common.openLog(console)
        let (a, b) = (try from.t(in: log), try to.t(in: log))
        let combined: Transaction? = try await common.failing {
            guard a != b else { return nil }
            let run = try (min(a, b) + 1...max(a, b)).map { try log.transaction(at: $0) }
            let forward = try flatten(run)
            return a < b ? forward : inverse(forward)
        }
        let changes = combined?.changes ?? [:]
        let indexChanges = combined?.indexChanges ?? [:]
        if common.json {
            console.json(
                .object(
                    [("from", .int(a)), ("to", .int(b))] + TransactionJSON.changes(changes, indexChanges: indexChanges)
                )
            )
            return
        }
        let lines = TransactionText.changes(changes, indexChanges: indexChanges, console: console)
        if lines.isEmpty {
            console.line("no differences between t \(Text.count(a)) and t \(Text.count(b))")
        } else {
            for line in lines { console.line(line) }
        }
    }
}
