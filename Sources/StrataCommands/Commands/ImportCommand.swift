import ArgumentParser
import Foundation
import Strata

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Reads JSON lines, one record a line, and commits them in batches.",
        discussion: """
            Each line is an object: its ID in the --id-field member, its table in \
            "$table" unless --table is given; the other members are its fields (the \
            Strata JSON convention, as `strata export` writes). A record replaces one \
            with the same ID. Each batch is one transaction (or several, when the \
            records it replaces would make it larger than a store takes), and the \
            batches of one run are one undo action (one undo group); a malformed line is \
            reported with its line number and nothing of its batch is committed \
            (earlier batches stay committed). Blank lines are skipped.
            """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The JSON lines file (- for standard input).")
    var file: String

    @Option(help: "The table of every record (else each line's \"$table\" member).")
    var table: String?

    @Option(name: .customLong("id-field"), help: "The member that holds each record's ID.")
    var idField = "$id"

    @Option(parsing: .unconditional, help: "Records per transaction.")
    var batch = 10_000

    @Option(help: "The transactions' message.")
    var message: String?

    @Flag(help: "Create the store when the path does not exist (or is an empty directory).")
    var create = false

    func validate() throws {
        if batch < 1 { throw ValidationError("--batch must be at least 1") }
        try RecordLineParser.validate(idField: idField, linesNameTables: table == nil)
    }

    /// Frees each batch's report, one after another, off the committing task.
    private static let releaser = DispatchQueue(label: "strata.import.release")

    func run() async throws {
        let console = Console()
        let input: Int32
        if file == "-" {
            input = STDIN_FILENO
        } else {
            var info = stat()
            input = open(file, O_RDONLY | O_CLOEXEC)
            guard input >= 0, fstat(input, &info) == 0 else {
                throw CommandFailure(.failed, "\(file): cannot be read (\(String(cString: strerror(errno))))")
            }
            guard (info.st_mode & S_IFMT) != S_IFDIR else {
                throw CommandFailure(.failed, "\(file): is a directory, not a file of JSON lines")
            }
        }
        defer { if input != STDIN_FILENO { close(input) } }
        let totalBytes =
            file == "-" ? nil : (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue
        let store = try await common.openWriting(console, create: create, bulk: true)
        let progress = Progress(console: console, total: totalBytes)
        let source = BatchSource(
            lines: LineReader(input),
            parser: RecordLineParser(table: table.map { Key($0) }, idField: Key(idField)),
            size: batch
        )
        let message =
            self.message ?? "Import from \(file == "-" ? "standard input" : (file as NSString).lastPathComponent)"
        // Every batch of one run in one undo group: an app's Undo takes
        // back the whole import, not its last batch.
        let undoGroup = Value.string("strata import \(UUID().uuidString)")
        var imported = 0
        var changed = 0
        var committed: [Int64] = []
        var failure: CommandFailure?
        // The next batch is read and parsed while this one commits.
        var next = Task.detached { source.next() }
        reading: while true {
            let parsed: ParsedBatch
            switch await next.value {
            case .success(let batch?): parsed = batch
            case .success(nil): break reading
            case .failure(let error):
                failure = CommandFailure(
                    .failed,
                    "\(file == "-" ? "standard input" : file) line \(error.line): \(error.reason); "
                        + "nothing of its batch (lines \(error.lines)) was committed"
                )
                break reading
            }
            next = Task.detached { source.next() }
            if parsed.records.isEmpty { continue }
            // A batch whose records replace large ones carries both: past
            // the store's limit on a transaction, it commits in parts.
            var parts = [parsed.records[...]]
            var done = 0
            while let part = parts.popLast() {
                do {
                    let report = try await store.transact(
                        message: message,
                        significance: .significant,
                        metadata: [Store.undoGroupKey: undoGroup]
                    ) { builder in
                        for (table, records) in ParsedRecord.byTable(Array(part)) {
                            try builder.upsert(contentsOf: records, into: table)
                        }
                        // Records equal to the stored ones: no empty transaction.
                        if builder.transaction().changes.isEmpty { throw NothingChanged() }
                    }
                    committed.append(report.transaction.t)
                    changed += report.transaction.changeCount
                    // The value before the batch (the paths the batch copied)
                    // is freed beside the next commit, not before it.
                    let parcel = Parcel(consume report)
                    Self.releaser.async { parcel.drop() }
                } catch is NothingChanged {
                } catch StoreError.transactionTooLarge where part.count > 1 {
                    let middle = part.startIndex + part.count / 2
                    parts += [part[middle...], part[..<middle]]
                    continue
                } catch {
                    let outcome =
                        done == 0
                        ? "was not committed"
                        : "was committed only in part (its first \(done) records, in transactions of their own)"
                    failure = CommandFailure(
                        .failed,
                        "\(common.path): the batch of lines \(parsed.lines) \(outcome): \(error)"
                    )
                    break reading
                }
                done += part.count
                imported += part.count
                progress.update(bytes: parsed.bytesRead, records: imported)
            }
        }
        // A batch read ahead after a failure is not committed; its task is
        // not waited for (on a pipe it may wait for input).
        next.cancel()
        progress.finish()
        do {
            // The records are durable once closed; the snapshot makes the
            // next open read them whole instead of replaying the import.
            if !committed.isEmpty { try await store.snapshot() }
            try await store.close()
        } catch {
            throw CommandFailure(
                .failed,
                "\(common.path): the imported batches could not be made durable (\(error)); reopen the store and check"
            )
        }
        let range = committed.first.map { "t \(Text.count($0))–\(Text.count(committed.last!))" } ?? "nothing committed"
        if common.json {
            console.json(
                .object([
                    ("records", .int(imported)), ("changed", .int(changed)), ("transactions", .int(committed.count)),
                    ("first", committed.first.map { .int($0) } ?? .null),
                    ("last", committed.last.map { .int($0) } ?? .null),
                    ("error", failure.map { .string($0.message) } ?? .null),
                ])
            )
        } else {
            console.line(
                "imported \(Text.count(imported, "record")) (\(Text.count(changed)) new or changed) in "
                    + "\(Text.count(committed.count, "transaction")) (\(range))"
            )
        }
        console.flush()
        if let failure {
            if imported > 0 {
                // Lines equal to what the store holds are counted as imported
                // without a commit.
                console.error(
                    committed.isEmpty
                        ? "strata: \(Text.count(imported, "record")) before it: already stored, nothing committed"
                        : "strata: \(Text.count(imported, "record")) before it: committed or already stored (\(range))"
                )
            }
            throw failure
        }
    }
}

/// A batch whose records are all equal to the stored ones.
private struct NothingChanged: Error {}

/// The records of one batch of lines.
struct ParsedBatch: Sendable {
    var records: [ParsedRecord]
    /// `first–last`, the batch's line numbers.
    var lines: String
    /// Input bytes read so far.
    var bytesRead: Int
}

/// Reads and parses batch after batch: used by one task at a time (each
/// batch's task starts after the previous one's result was taken).
final class BatchSource: @unchecked Sendable {
    /// A malformed line (or the input failing), with its batch's line numbers.
    struct Failure: Error {
        var line: Int
        var reason: String
        var lines: String
    }

    private var lines: LineReader
    private let parser: RecordLineParser
    private let size: Int

    init(lines: LineReader, parser: RecordLineParser, size: Int) {
        self.lines = lines
        self.parser = parser
        self.size = size
    }

    /// The next batch; nil at the end of the input.
    func next() -> Result<ParsedBatch?, Failure> {
        let batch: LineReader.Batch
        do {
            batch = try lines.next(size)
        } catch let error as LineReader.LineTooLong {
            return .failure(
                Failure(
                    line: error.line,
                    reason: "no line break within its first \(Text.bytes(error.limit)) (import reads JSON lines, "
                        + "one record a line; export --format json writes one document, which import does not read)",
                    lines: "\(lines.nextLine)–\(error.line)"
                )
            )
        } catch {
            return .failure(
                Failure(line: lines.nextLine, reason: "the input cannot be read: \(error)", lines: "\(lines.nextLine)–")
            )
        }
        if batch.lines.isEmpty { return .success(nil) }
        let range = "\(batch.firstLine)–\(batch.firstLine + batch.lines.count - 1)"
        do {
            let records = try parser.parse(batch)
            return .success(ParsedBatch(records: records, lines: range, bytesRead: lines.bytesRead))
        } catch let error as RecordLineParser.Failure {
            return .failure(Failure(line: error.line, reason: error.reason, lines: range))
        } catch {
            return .failure(Failure(line: batch.firstLine, reason: "\(error)", lines: range))
        }
    }
}

/// Lines of a file descriptor, read in large blocks: a pipe's lines come
/// as they are written (a read returns what is there).
package struct LineReader {
    /// Lines of one batch: byte ranges into `bytes`, and the first line's number (1-based).
    package struct Batch: Sendable {
        package var bytes: [UInt8]
        package var lines: [Range<Int>]
        package var firstLine: Int
    }

    struct ReadError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    /// A line longer than a reader holds: no line break within `limit` bytes.
    package struct LineTooLong: Error {
        package var line: Int
        package var limit: Int
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// Where the unread lines start in `buffer`.
    private var start = 0
    private var ended = false
    private(set) var bytesRead = 0
    private(set) var nextLine = 1

    /// Bytes of lines after which a batch ends early.
    private let batchBytes: Int
    /// The longest line read: input without line breaks (a JSON document,
    /// /dev/zero) is refused there instead of filling the memory.
    private let lineLimit: Int

    /// Lines of `descriptor` (not closed here). A batch ends early once its
    /// lines hold `batchBytes`: a batch is one transaction, and a store
    /// refuses one over 1 GiB (large records); a line longer than
    /// `lineLimit` (1 GiB: no record of a store is larger) throws
    /// ``LineTooLong``.
    package init(_ descriptor: Int32, batchBytes: Int = 256 << 20, lineLimit: Int = 1 << 30) {
        self.descriptor = descriptor
        self.batchBytes = batchBytes
        self.lineLimit = lineLimit
    }

    /// Up to `count` lines (fewer at the end of the input, when a pipe has
    /// no more for now and some are ready, or past the byte budget; at
    /// least one), their bytes copied out.
    package mutating func next(_ count: Int) throws -> Batch {
        var lines: [Range<Int>] = []
        var scan = start
        // Where the search for the next newline goes on: a long line is
        // scanned once, not again after every read.
        var searched = start
        while lines.count < count {
            if let first = lines.first, scan - first.lowerBound >= batchBytes { break }
            if let newline = buffer[Swift.max(scan, searched)...].firstIndex(of: 0x0A) {
                if newline - scan > lineLimit { throw LineTooLong(line: nextLine + lines.count, limit: lineLimit) }
                lines.append(scan..<newline)
                scan = newline + 1
                continue
            }
            searched = buffer.count
            if buffer.count - scan > lineLimit { throw LineTooLong(line: nextLine + lines.count, limit: lineLimit) }
            if ended {
                if scan < buffer.count { lines.append(scan..<buffer.count) }
                scan = buffer.count
                break
            }
            // Lines ready and a pipe that would make us wait: commit them first.
            if !lines.isEmpty, !hasInput() { break }
            // Moved down only when most of the buffer is read: O(input) in all.
            if start > buffer.count / 2 {
                buffer.removeFirst(start)
                lines = lines.map { ($0.lowerBound - start)..<($0.upperBound - start) }
                scan -= start
                searched -= start
                start = 0
            }
            let read = try readChunk()
            if read == 0 { ended = true }
        }
        let base = lines.first?.lowerBound ?? scan
        let batch = Batch(
            bytes: Array(buffer[base..<scan]),
            lines: lines.map { ($0.lowerBound - base)..<($0.upperBound - base) },
            firstLine: nextLine
        )
        nextLine += lines.count
        start = scan
        return batch
    }

    private static let zeros = [UInt8](repeating: 0, count: 4 << 20)

    private mutating func readChunk() throws -> Int {
        let chunk = Self.zeros.count
        let old = buffer.count
        // From an array: a copy even unoptimized (element by element from
        // `repeatElement`, a debug build took seconds a chunk).
        buffer.append(contentsOf: Self.zeros)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + old, chunk) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else {
                let code = errno
                buffer.removeLast(chunk)
                throw ReadError(code: code)
            }
            buffer.removeLast(chunk - n)
            bytesRead += n
            return n
        }
    }

    /// Whether a read would return without waiting.
    private func hasInput() -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }
}

/// A progress bar on standard error, drawn only when it is a terminal.
final class Progress {
    let console: Console
    let total: Int?
    private var drawn = false

    init(console: Console, total: Int?) {
        self.console = console
        self.total = total
    }

    func update(bytes: Int, records: Int) {
        guard console.errorIsTerminal else { return }
        var line = "\r\(Text.count(records)) records"
        if let total, total > 0 {
            let fraction = min(1, Double(bytes) / Double(total))
            let width = 30
            let filled = Int(fraction * Double(width))
            line =
                "\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] "
                + String(format: "%3.0f%%  ", fraction * 100) + "\(Text.count(records)) records"
        }
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    func finish() {
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
