import ArgumentParser
import Foundation
import Strata

struct RevertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revert",
        abstract: "Undoes a transaction, or returns to a past value, as a new transaction.",
        discussion: """
            Nothing is lost: the revert is recorded, and can itself be reverted. \
            --to T when the value after T is the current one commits nothing \
            (with --json: {"committed": false, "t": the current t}).
            """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The transaction to undo (its t or ID).")
    var transaction: TransactionReference?

    // Unconditional: `--to -1` is refused as a value, not read as an option.
    @Option(parsing: .unconditional, help: "Return the whole value to the one after this t instead.")
    var to: TransactionReference?

    @Option(help: "The revert's message.")
    var message: String?

    func validate() throws {
        guard (transaction == nil) != (to == nil) else {
            throw ValidationError("give either a transaction to undo or --to T")
        }
    }

    func run() async throws {
        let console = Console()
        let store = try await common.openWriting(console)
        var target: Int64 = 0
        let report: CommitReport? = try await common.failing {
            if let to {
                let t: Int64
                switch to.kind {
                case .t(let number): t = number
                case .id(let id):
                    guard let found = try await store.transaction(id: id) else {
                        throw CommandFailure.usage("\(common.path): no transaction \(id) in the history")
                    }
                    t = found.t
                }
                guard t <= store.current.basis else {
                    throw CommandFailure.usage(
                        "\(common.path): no t \(t) (the history ends at t \(store.current.basis))"
                    )
                }
                // Already there: no empty transaction.
                target = t
                if try await store.database(asOf: t).tables == store.current.tables { return nil }
                return try await store.revert(to: t, message: message)
            }
            let id: UUID
            switch transaction!.kind {
            case .id(let given): id = given
            case .t(let t):
                guard t >= 1, let found = try await store.transaction(at: t) else {
                    throw CommandFailure.usage(
                        "\(common.path): no transaction \(t) (the history ends at t \(store.current.basis))"
                    )
                }
                id = found.id
            }
            return try await store.revert(transaction: id, message: message)
        }
        let basis = store.current.basis
        try await common.failing { try await store.close() }
        guard let committed = report?.transaction else {
            if common.json {
                console.json(.object([("committed", .bool(false)), ("t", .int(basis))]))
            } else {
                console.line("nothing to revert: the value after t \(target) is the current one")
            }
            return
        }
        if common.json {
            console.json(.object(TransactionJSON.summary(committed)))
        } else {
            console.line(
                "committed t \(Text.count(committed.t)): \(Text.safe(committed.message)) (\(Text.changeSummary(committed)))"
            )
        }
    }
}

struct TruncateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "truncate",
        abstract: "Drops every transaction after t, for good (asks first unless --yes).",
        discussion: "The one command that loses history: prefer `strata revert --to T`, which keeps it."
    )

    @OptionGroup var common: CommonOptions

    @Option(
        name: .customLong("after"),
        parsing: .unconditional,
        help: "The last transaction to keep (its t, as `log` prints it, or its ID)."
    )
    var kept: TransactionReference

    @Flag(help: "Do not ask for confirmation.")
    var yes = false

    func run() async throws {
        let console = Console()
        let store = try await common.openWriting(console)
        let current = store.current.basis
        let after: Int64
        switch kept.kind {
        case .t(let t): after = t
        case .id(let id):
            // Its number from the history in memory: a damaged record can still be cut after.
            guard let found = await store.t(of: id) else {
                try? await store.close()
                throw CommandFailure.usage("\(common.path): no transaction \(id) in the history")
            }
            after = found
        }
        guard after <= current else {
            try? await store.close()
            throw CommandFailure.usage("\(common.path): no t \(after) (the history ends at t \(current))")
        }
        let dropped = current - after
        if dropped > 0, !yes {
            console.error(
                "This drops transactions \(after + 1)…\(current) (\(Text.count(dropped))) of \(common.path) for good. "
                    + "Type yes to go on:"
            )
            guard readLine()?.trimmingCharacters(in: .whitespaces).lowercased() == "yes" else {
                try? await store.close()
                throw CommandFailure(.failed, "\(common.path): not confirmed; nothing was changed")
            }
        }
        try await common.failing {
            try await store.truncate(after: after)
            try await store.close()
        }
        if common.json {
            console.json(.object([("t", .int(after)), ("dropped", .int(dropped))]))
        } else {
            console.line("truncated after t \(Text.count(after)): dropped \(Text.count(dropped, "transaction"))")
        }
    }
}

struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Writes a snapshot of the current value now (the next open starts from it)."
    )

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let console = Console()
        let store = try await common.openWriting(console)
        let written = try await common.failing {
            let written = try await store.snapshot()
            try await store.close()
            return written
        }
        if common.json {
            console.json(
                .object([
                    ("file", .string(written.name)), ("bytes", .int(written.size)), ("t", .int(store.current.basis)),
                ])
            )
        } else {
            console.line("wrote \(written.name) (\(Text.bytes(written.size))) at t \(Text.count(store.current.basis))")
        }
    }
}

struct CompactCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Builds every compaction block the history completes, so that as-of is fast everywhere."
    )

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let console = Console()
        let store = try await common.openWriting(console)
        let before = StoreFiles(path: common.path).blocks
        try await common.failing {
            try await store.compact()
            try await store.close()
        }
        let after = StoreFiles(path: common.path).blocks
        let bytes = after.reduce(0) { $0 + $1.bytes }
        if common.json {
            console.json(
                .object([("blocksBefore", .int(before.count)), ("blocks", .int(after.count)), ("bytes", .int(bytes))])
            )
        } else {
            console.line(
                "compaction blocks: \(Text.count(before.count)) before, \(Text.count(after.count)) now (\(Text.bytes(bytes)))"
            )
        }
    }
}
