import ArgumentParser
import Foundation
import Strata

/// `strata`: look inside a store, verify it, repair it, script it.
public struct StrataCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Look inside a Strata store, verify it, repair it, script it.",
        discussion: """
            Reading commands (info, log, show, get, history, diff, export, verify) open \
            the store read-only, without its lock: they work while an app has it open \
            for writing, and see every transaction on disk when they start.

            Exit status: 0 ok (verify: the store is sound); 1 damage found, or the \
            operation failed; 2 usage error; 3 the store is open for writing elsewhere \
            (writing commands); 4 not a store (or a store of a newer format).
            """,
        subcommands: [
            InfoCommand.self, LogCommand.self, ShowCommand.self, GetCommand.self, HistoryCommand.self,
            DiffCommand.self, ExportCommand.self, ImportCommand.self, RevertCommand.self, TruncateCommand.self,
            SnapshotCommand.self, CompactCommand.self, VerifyCommand.self, RepairCommand.self,
        ]
    )

    public init() {}

    /// Parses `arguments` (without the program name), runs the command and
    /// returns the exit status; errors are one line on standard error.
    public static func run(_ arguments: [String]) async -> Int32 {
        let console = Console()
        // Options end at `--`; after it, `--json` would be an argument.
        let json = arguments.prefix { $0 != "--" }.contains("--json")
        /// One line on standard error for people and, with `--json`, one
        /// document on standard output for scripts, unless the command's
        /// output already began there (a report that says what failed, or an
        /// export cut short: a second document would make it unreadable).
        func fail(_ status: ExitStatus, _ line: String, message: String) -> Int32 {
            console.error(line)
            if json, !Console.hasWritten {
                console.json(.object([("error", .string(message)), ("status", .int(Int64(status.rawValue)))]))
                console.flush()
            }
            return status.rawValue
        }
        // A mistyped command is named as such: the parser would first
        // refuse an option of the command meant (`strata lgo PATH --json`).
        let names = configuration.subcommands.compactMap { $0.configuration.commandName }
        if let first = arguments.first, !first.hasPrefix("-"), first != "help", !names.contains(first) {
            let line = "unknown command '\(first)' (the commands: \(names.joined(separator: ", ")))"
            return fail(.usage, "strata: " + line, message: line)
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            // Help and version requests, and the parser's usage errors.
            if exitCode(for: error) == .success {
                console.line(fullMessage(for: error))
                return ExitStatus.ok.rawValue
            }
            return fail(.usage, fullMessage(for: error), message: message(for: error))
        }
        do {
            if var runnable = command as? any AsyncParsableCommand {
                try await runnable.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            return fail(failure.status, "strata: " + failure.message, message: failure.message)
        } catch {
            switch exitCode(for: error) {
            case .success:
                // `--help` and `help <command>` run as commands that exit cleanly.
                console.line(fullMessage(for: error))
                return ExitStatus.ok.rawValue
            case .validationFailure:
                return fail(.usage, fullMessage(for: error), message: message(for: error))
            default:
                return fail(.failed, "strata: \(error)", message: "\(error)")
            }
        }
        if let code = Console.writeFailure {
            // Standard output failed: the document could not be written either.
            console.error("strata: cannot write the output: \(String(cString: strerror(code)))")
            return ExitStatus.failed.rawValue
        }
        return ExitStatus.ok.rawValue
    }
}

/// The options every command takes.
struct CommonOptions: ParsableArguments {
    @Argument(help: "The store's directory.")
    var path: String

    @Flag(help: "Print JSON for scripts instead of text for people.")
    var json = false
}

extension CommonOptions {
    /// Opens the store read-only (no lock; the whole current value).
    func openReading(_ console: Console) async throws -> Store {
        var options = Self.options
        options.readOnly = true
        do {
            let store = try await Store.open(at: path, options: options)
            ProcessEnd.keep(store)
            report(store.warnings, console)
            return store
        } catch {
            throw CommandFailure(error, path: path)
        }
    }

    /// What every command opens a store with: a fixed memory budget (a
    /// command lives seconds; measuring the value to size a proportional
    /// one would cost more than it saves).
    static var options: StoreOptions {
        var options = StoreOptions()
        options.memoryBudget = .bytes(256 << 20)
        return options
    }

    /// Reads the store's history only (no value is built).
    func openLog(_ console: Console) async throws -> StoreLog {
        do {
            let log = try await StoreLog.open(at: path)
            report(log.warnings, console)
            return log
        } catch {
            throw CommandFailure(error, path: path)
        }
    }

    /// Opens the store for writing (its lock taken; exit 3 when held).
    func openWriting(_ console: Console, create: Bool = false, bulk: Bool = false) async throws -> Store {
        var options = Self.options
        options.createIfMissing = create
        if bulk {
            // Synced once, when the store closes (a sync per batch costs
            // more than the batch), and one snapshot at the end instead of
            // one for every stretch of the log written on the way.
            options.durability = .none
            options.rebuildBudget = nil
            options.snapshotEveryLogBytes = nil
            // No past values kept for as-of: the command ends with the import.
            options.checkpointsKept = 0
            // The final snapshot at zstd's level 1, not 3: an import of 1M
            // songs 3.60–3.81 s against 3.68–4.18 s, for a snapshot of
            // 56 MB against 51 MB that opens as fast (0.27 s `strata get`).
            // The store's next snapshot goes back to its own level.
            options.compressionLevel = 1
        }
        do {
            let store = try await Store.open(at: path, options: options)
            ProcessEnd.keep(store)
            report(store.warnings, console)
            return store
        } catch {
            throw CommandFailure(error, path: path)
        }
    }

    /// The value after `asOf` (the current one when nil).
    func value(of store: Store, asOf: TransactionReference?) async throws -> Database {
        try await failing {
            switch asOf?.kind {
            case nil: return store.current
            case .t(let t)?:
                guard t <= store.current.basis else {
                    throw CommandFailure.usage("\(path): no t \(t) (the history ends at t \(store.current.basis))")
                }
                return ProcessEnd.kept(try await store.database(asOf: t))
            case .id(let id)?: return ProcessEnd.kept(try await store.database(after: id))
            }
        }
    }

    /// Runs `body`, reporting what the engine throws as this store's failure.
    func failing<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw CommandFailure(error, path: path)
        }
    }

    /// What opening recovered from, on standard error (a partial last
    /// record is a write in progress elsewhere: not worth a word).
    private func report(_ warnings: [StoreWarning], _ console: Console) {
        for warning in warnings {
            if case .tornTail = warning { continue }
            console.error("strata: warning: \(path): \(warning)")
        }
    }
}

/// Whether `text` is one or more ASCII digits (no sign, no separator).
private func isDigits(_ text: some StringProtocol) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
}

/// A transaction named on the command line: its number t, or its ID.
struct TransactionReference: ExpressibleByArgument, CustomStringConvertible {
    enum Kind {
        case t(Int64)
        case id(UUID)
    }

    var kind: Kind

    /// A t as `strata log` prints it (`1,002`) is read too.
    init?(argument: String) {
        if let t = Self.digits(argument) ?? Self.grouped(argument) {
            kind = .t(t)
        } else if let id = JSONReader.uuid(argument) {
            kind = .id(id)
        } else {
            return nil
        }
    }

    /// Plain digits (no sign: `+3` is not a t).
    private static func digits(_ argument: String) -> Int64? {
        isDigits(argument) ? Int64(argument) : nil
    }

    /// `1,002`: digits in groups of three after the first one to three.
    private static func grouped(_ argument: String) -> Int64? {
        let groups = argument.split(separator: ",", omittingEmptySubsequences: false)
        guard groups.count > 1, (1...3).contains(groups[0].count), groups.dropFirst().allSatisfy({ $0.count == 3 }),
            groups.allSatisfy(isDigits)
        else { return nil }
        return Int64(groups.joined())
    }

    var description: String {
        switch kind {
        case .t(let t): return "\(t)"
        case .id(let id): return id.uuidString
        }
    }

    /// The transaction's number in `log`.
    func t(in log: StoreLog) throws -> Int64 {
        switch kind {
        case .t(let t):
            guard t <= log.count else {
                throw CommandFailure.usage("\(log.path): no transaction \(t) (the history ends at t \(log.count))")
            }
            return t
        case .id(let id):
            guard let t = log.t(of: id) else {
                throw CommandFailure.usage("\(log.path): no transaction \(id) in the history")
            }
            return t
        }
    }
}

/// A record ID on the command line: digits are an integer ID (refused
/// beyond 64 bits), a UUID is a UUID ID, anything else a string ID; `int:`,
/// `str:` and `uuid:` say which.
struct RecordIDArgument: ExpressibleByArgument {
    var id: RecordID

    /// Whether `text` is an optional minus and one or more digits.
    static func isInteger(_ text: String) -> Bool {
        isDigits(text.hasPrefix("-") ? text.dropFirst() : text[...])
    }

    init?(argument: String) {
        // Prefixes matched on bytes: as characters, `str:` and a combining
        // mark after it (an ID starting with one) are one character.
        if let rest = Self.dropping("str:", from: argument) {
            id = RecordID(rest)
        } else if let rest = Self.dropping("int:", from: argument) {
            guard let number = Int64(rest) else { return nil }
            id = RecordID(number)
        } else if let rest = Self.dropping("uuid:", from: argument) {
            guard let uuid = JSONReader.uuid(rest) else { return nil }
            id = RecordID(uuid)
        } else if Self.isInteger(argument) {
            // Digits beyond a 64-bit integer: no ID of either kind was
            // meant by guessing (`str:` names a string of digits). A sign
            // other than `-` makes a string ID (`+15551234`), as on import.
            guard let number = Int64(argument) else { return nil }
            id = RecordID(number)
        } else if let uuid = JSONReader.uuid(argument) {
            id = RecordID(uuid)
        } else {
            id = RecordID(argument)
        }
    }

    /// `argument` without its first bytes when they are `prefix`'s.
    private static func dropping(_ prefix: String, from argument: String) -> String? {
        guard argument.utf8.starts(with: prefix.utf8) else { return nil }
        return String(decoding: argument.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }
}

/// A date on the command line: ISO 8601 (`2026-11-24T06:00:00Z`, an
/// offset, a fraction), the same without a zone or with a space for the `T`
/// (`2026-11-24 06:00:00`, as `log` prints it: UTC), or a day
/// (`2026-11-24`, its midnight UTC). Anything else is a usage error, never
/// a guess.
struct DateArgument: ExpressibleByArgument {
    var date: Date

    init?(argument: String) {
        guard let date = JSONDates.commandLine(argument) else { return nil }
        self.date = date
    }
}
