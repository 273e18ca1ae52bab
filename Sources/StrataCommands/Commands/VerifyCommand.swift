import ArgumentParser
import Foundation
import Strata

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "The deep check: every checksum of every file, and the log replayed against every snapshot.",
        discussion: """
            Reads every log segment, segment summary, snapshot and block file and \
            checks its checksums; decodes every transaction, replays the log from \
            the empty value, and compares the replay with every snapshot and checks \
            every index. Changes nothing; works while an app has the store open. \
            Exits 0 when the store is sound, 1 when damage was found (each named \
            with its file and offset).
            """
    )

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let console = Console()
        let started = ContinuousClock.now
        let report: VerificationReport = try await common.failing { try Store.verify(at: common.path) }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if common.json {
            console.json(
                .object([
                    ("sound", .bool(report.isSound)),
                    (
                        "problems",
                        .array(
                            report.problems.map { problem in
                                .object([
                                    ("file", .string(problem.file)),
                                    ("offset", problem.offset.map { .int($0) } ?? .null),
                                    ("reason", .string(problem.reason)),
                                ])
                            }
                        )
                    ),
                    ("notes", .array(report.notes.map(JSON.string))),
                    ("transactions", .int(report.transactions)),
                    ("segments", .int(report.segments)), ("summaries", .int(report.summaries)),
                    ("snapshots", .int(report.snapshots)), ("blocks", .int(report.blocks)),
                    ("bytes", .int(report.bytes)), ("seconds", .double(seconds)),
                ])
            )
        } else {
            for problem in report.problems {
                console.line(console.styled("damage", .red) + "  \(Text.safe(problem.description))")
            }
            for note in report.notes { console.line(console.styled("note", .dim) + "    \(Text.safe(note))") }
            let rate = seconds > 0 ? Double(report.bytes) / seconds : 0
            let verdict = report.isSound ? console.styled("sound", .green) : console.styled("damaged", .red)
            console.line(
                "\(verdict): \(Text.count(report.transactions, "transaction")); "
                    + "\(Text.count(report.segments, "log segment")), "
                    + "\(Text.count(report.summaries, "segment summary", plural: "segment summaries")), "
                    + "\(Text.count(report.snapshots, "snapshot")), \(Text.count(report.blocks, "block")); "
                    + "\(Text.bytes(report.bytes)) in \(Text.duration(elapsed)) (\(Text.bytes(Int(rate)))/s)"
            )
        }
        console.flush()
        if !report.isSound {
            throw CommandFailure(
                .failed,
                "\(common.path): damage found in \(Text.count(report.problems.count, "place")); "
                    + "`strata repair \(common.path) --into NEWPATH` copies the sound history into a new store"
            )
        }
    }
}

struct RepairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Copies the longest sound prefix of a damaged store's history into a new store.",
        discussion: """
            Reads the store with damage tolerance (never modifying it), commits \
            every transaction that reads back and checks, in order, keeping their \
            IDs, times, messages and metadata, into NEWPATH (which must not hold \
            anything), and reports what was dropped. A transaction whose record \
            in a sealed segment (one known by its summary: the log's last segment \
            is read record by record, and cut at its first damaged one) \
            does not read back is rebuilt from the next sound snapshot after it \
            and the transactions between, when they read back (its metadata, \
            and what it reverts or covers, are lost); the copy then goes on.
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "The new store's directory (missing or empty).")
    var into: String

    /// `path` absolute, with every symbolic link resolved as the kernel
    /// resolves it, also when its last components do not exist yet: the
    /// deepest existing ancestor of the path as given is resolved by
    /// `realpath` (a link first, then any `..` after it), and the missing
    /// rest, which holds no link, is appended with its `.` and `..` tidied.
    /// (`URL.resolvingSymlinksInPath` leaves a missing path as it is, and
    /// tidying `link/..` as text first points somewhere the kernel does not.)
    static func realPath(_ path: String) -> String {
        var existing = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var missing: [String] = []
        while true {
            if let resolved = realpath(existing, nil) {
                defer { free(resolved) }
                var components = String(cString: resolved).split(separator: "/").map(String.init)
                for component in missing.reversed() where component != "." && !component.isEmpty {
                    if component == ".." {
                        if !components.isEmpty { components.removeLast() }
                    } else {
                        components.append(component)
                    }
                }
                return "/" + components.joined(separator: "/")
            }
            guard let slash = existing.lastIndex(of: "/"), existing != "/" else { return existing }
            missing.append(String(existing[existing.index(after: slash)...]))
            existing = slash == existing.startIndex ? "/" : String(existing[..<slash])
        }
    }

    func run() async throws {
        let console = Console()
        let log: StoreLog = try await common.failing {
            try await StoreLog.open(at: common.path, recovery: .truncateAtDamage)
        }
        let source = Self.realPath(common.path)
        let destination = Self.realPath(into)
        if destination == source || destination.hasPrefix(source + "/") {
            throw CommandFailure.usage("\(into) is inside \(common.path); repair never writes into the store it reads")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: into, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw CommandFailure.usage("\(into) is a file; repair writes a new store into a new directory")
        }
        if let names = try? FileManager.default.contentsOfDirectory(atPath: into), !names.isEmpty {
            throw CommandFailure.usage("\(into) is not empty; repair writes only into a new store")
        }
        // The fixed budget every command opens with (no measuring job that
        // holds the store weakly).
        var options = CommonOptions.options
        options.createIfMissing = true
        options.durability = .none
        let target: Store
        do {
            target = try await Store.open(at: into, options: options)
            ProcessEnd.keep(target)
        } catch {
            throw CommandFailure(error, path: into)
        }
        // History the log lost is dropped; a manifest rebuilt or a snapshot
        // skipped loses nothing (the copy replays the log).
        var dropped: [String] = []
        var notes: [String] = []
        for warning in log.warnings {
            switch warning {
            case .tornTail: continue
            case .rebuiltManifest, .skippedSnapshot: notes.append("\(warning)")
            case let .truncatedAtDamage(segment, offset, reason):
                dropped.append("the log from offset \(offset) of segment \(segment): \(reason)")
            case .lostTransactions: dropped.append("\(warning)")
            }
        }
        // Damaged snapshots are not copied (the copy replays the log and
        // makes its own), but the user learns they were there.
        var skipped: Set<String> = []
        for case .skippedSnapshot(let file, _) in log.warnings { skipped.insert(file) }
        for (file, reason) in log.unreadableSnapshots() where !skipped.contains(file) {
            notes.append("snapshot \(file) does not read back, and is not copied: \(reason)")
        }
        var copied: Int64 = 0
        var rebuilt: [String] = []
        for t in stride(from: Int64(1), through: log.count, by: 1) {
            let transaction: Transaction
            do {
                transaction = try log.transaction(at: t)
            } catch {
                // A later snapshot may hold what the damaged record did.
                do {
                    transaction = try log.rebuiltTransaction(at: t, applyingTo: target.current)
                    rebuilt.append(
                        "t \(t) rebuilt from a later snapshot (its record does not read back: \(error)); "
                            + "its changes are whole; its metadata, and what it reverts or covers, are lost"
                    )
                } catch let rebuildError {
                    dropped.append(
                        "transactions \(t)…\(log.count) (\(Text.count(log.count - t + 1))): \(error); \(rebuildError)"
                    )
                    break
                }
            }
            do {
                try await target.commit(transaction)
            } catch {
                dropped.append(
                    "transactions \(t)…\(log.count) (\(Text.count(log.count - t + 1))): t \(t) does not apply: \(error)"
                )
                break
            }
            copied = t
        }
        do {
            // Every copied transaction durable, and a snapshot to open from.
            if copied > 0 { try await target.snapshot() }
            try await target.close()
        } catch {
            throw CommandFailure(error, path: into)
        }
        if common.json {
            console.json(
                .object([
                    ("into", .string(into)), ("transactions", .int(copied)),
                    ("dropped", .array(dropped.map(JSON.string))), ("rebuilt", .array(rebuilt.map(JSON.string))),
                    ("notes", .array(notes.map(JSON.string))),
                ])
            )
        } else {
            let range = copied > 0 ? " (t 1…\(Text.count(copied)))" : ""
            console.line("copied \(Text.count(copied, "transaction"))\(range) into \(into)")
            if dropped.isEmpty {
                console.line("dropped nothing: the history read back whole")
            } else {
                for line in dropped { console.line(console.styled("dropped", .yellow) + "  \(Text.safe(line))") }
            }
            for line in rebuilt { console.line(console.styled("rebuilt", .yellow) + "  \(Text.safe(line))") }
            for line in notes { console.line(console.styled("note", .dim) + "     \(Text.safe(line))") }
        }
        console.flush()
        if !dropped.isEmpty {
            // Repaired, but not whole: scripts must not take it for a full copy.
            throw CommandFailure(
                .failed,
                "\(into) holds the \(Text.count(copied, "transaction")) that \(copied == 1 ? "was" : "were") sound; the rest was dropped (above)"
            )
        }
    }
}
