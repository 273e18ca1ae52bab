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
            with the same ID. Each batch is one transaction; a malformed line is \
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

    @Option(help: "Records per transaction.")
    var batch = 10_000

    @Option(help: "The transactions' message.")
    var message: String?

    @Flag(help: "Create the store when the path does not exist (or is an empty directory).")
    var create = false

    func validate() throws {
        if batch < 1 { throw ValidationError("--batch must be at least 1") }
    }

    func run() async throws {
        let console = Console()
        let input: FileHandle
        if file == "-" {
            input = FileHandle.standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: file) else {
                throw CommandFailure(.failed, "\(file): cannot be read (\(String(cString: strerror(errno))))")
            }
            input = handle
        }
        let totalBytes = file == "-" ? nil : (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue
        let store = try await common.openWriting(console, create: create)
        var lines = LineReader(input)
        let progress = Progress(console: console, total: totalBytes)
        let parser = RecordLineParser(table: table.map { Key($0) }, idField: Key(idField))
        let message = self.message ?? "Import from \(file == "-" ? "standard input" : (file as NSString).lastPathComponent)"
        var imported = 0
        var committed: [Int64] = []
        var failure: CommandFailure?
        while failure == nil {
            let batchLines = lines.next(batch)
            if batchLines.lines.isEmpty { break }
            let parsed: [ParsedRecord]
            do {
                parsed = try parser.parse(batchLines)
            } catch let error as RecordLineParser.Failure {
                failure = CommandFailure(
                    .failed,
                    "\(file) line \(error.line): \(error.reason); nothing of its batch (lines \(batchLines.firstLine)–\(batchLines.firstLine + batchLines.lines.count - 1)) was committed"
                )
                break
            }
            if parsed.isEmpty { continue }
            do {
                let report = try await store.transact(message: message, significance: .significant) { builder in
                    for record in parsed { try builder.upsert(record.record, id: record.id, into: record.table) }
                }
                committed.append(report.transaction.t)
                imported += parsed.count
                progress.update(bytes: lines.bytesRead, records: imported)
            } catch {
                failure = CommandFailure(
                    .failed,
                    "\(common.path): the batch of lines \(batchLines.firstLine)–\(batchLines.firstLine + batchLines.lines.count - 1) was not committed: \(error)"
                )
            }
        }
        progress.finish()
        try? await store.close()
        let range = committed.first.map { "t \(Text.count($0))–\(Text.count(committed.last!))" } ?? "nothing committed"
        if common.json {
            console.json(
                .object([
                    ("records", .int(imported)), ("transactions", .int(committed.count)),
                    ("first", committed.first.map { .int($0) } ?? .null), ("last", committed.last.map { .int($0) } ?? .null),
                    ("error", failure.map { .string($0.message) } ?? .null),
                ])
            )
        } else {
            console.line("imported \(Text.count(imported)) records in \(Text.count(committed.count)) transaction(s) (\(range))")
        }
        console.flush()
        if let failure {
            if imported > 0 { console.error("strata: the \(Text.count(imported)) records before it were committed (\(range))") }
            throw failure
        }
    }
}

/// A record read from a line.
struct ParsedRecord: Sendable {
    var table: Key
    var id: RecordID
    var record: Record
}

/// Reads records from JSON lines, a batch at a time on every core.
struct RecordLineParser: Sendable {
    struct Failure: Error {
        var line: Int
        var reason: String
    }

    let table: Key?
    let idField: Key
    static let tableField: Key = "$table"

    /// The records of a batch's lines, in order; the first bad line (in
    /// line order) throws.
    func parse(_ batch: LineReader.Batch) throws -> [ParsedRecord] {
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, batch.lines.count / 1_000))
        let per = (batch.lines.count + lanes - 1) / lanes
        let results = LaneResults<Result<[ParsedRecord], Failure>>(count: lanes)
        DispatchQueue.concurrentPerform(iterations: lanes) { lane in
            let range = (lane * per)..<min(batch.lines.count, (lane + 1) * per)
            results.set(lane, Result { () throws(Failure) in try parse(batch, range) })
        }
        var records: [ParsedRecord] = []
        records.reserveCapacity(batch.lines.count)
        for lane in 0..<lanes { records += try results[lane].get() }
        return records
    }

    private func parse(_ batch: LineReader.Batch, _ range: Range<Int>) throws(Failure) -> [ParsedRecord] {
        var records: [ParsedRecord] = []
        records.reserveCapacity(range.count)
        for index in range {
            let line = batch.lines[index]
            let number = batch.firstLine + index
            guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else { continue }
            let members: [(Key, Value)]
            do {
                members = try batch.bytes.withUnsafeBufferPointer { buffer throws(JSONReader.Failure) in
                    try JSONReader.object(UnsafeBufferPointer(rebasing: buffer[line]))
                }
            } catch {
                throw Failure(line: number, reason: "not a JSON object: \(error)")
            }
            var fields: [Key: Value] = [:]
            fields.reserveCapacity(members.count)
            var id: RecordID?
            var lineTable = table
            for (name, value) in members {
                if name == idField {
                    guard let recordID = JSONReader.recordID(value) else {
                        throw Failure(line: number, reason: "\(idField) must be an integer, a string or {\"$uuid\": …}")
                    }
                    id = recordID
                } else if table == nil, name == Self.tableField {
                    guard case .string(let text) = value, !text.isEmpty else {
                        throw Failure(line: number, reason: "$table must be a table name")
                    }
                    lineTable = Key(text)
                } else {
                    fields[name] = value
                }
            }
            guard let id else { throw Failure(line: number, reason: "no \(idField) member (the record's ID)") }
            guard let lineTable else {
                throw Failure(line: number, reason: "no $table member (or give --table)")
            }
            records.append(ParsedRecord(table: lineTable, id: id, record: Record(fields)))
        }
        return records
    }
}

/// Lines of a file read in large blocks.
struct LineReader {
    /// Lines of one batch: byte ranges into `bytes`, and the first line's number (1-based).
    struct Batch: Sendable {
        var bytes: [UInt8]
        var lines: [Range<Int>]
        var firstLine: Int
    }

    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false
    private(set) var bytesRead = 0
    private var nextLine = 1

    init(_ handle: FileHandle) { self.handle = handle }

    /// Up to `count` lines (fewer at the end of the input), their bytes
    /// copied out of the read buffer.
    mutating func next(_ count: Int) -> Batch {
        var lines: [Range<Int>] = []
        var scan = start
        while lines.count < count {
            if let newline = buffer[scan...].firstIndex(of: 0x0A) {
                lines.append(scan..<newline)
                scan = newline + 1
            } else if ended {
                if scan < buffer.count { lines.append(scan..<buffer.count) }
                scan = buffer.count
                break
            } else if let chunk = try? handle.read(upToCount: 4 << 20), !chunk.isEmpty {
                bytesRead += chunk.count
                buffer.append(contentsOf: chunk)
            } else {
                ended = true
            }
        }
        let base = lines.first?.lowerBound ?? scan
        let batch = Batch(
            bytes: Array(buffer[base..<scan]),
            lines: lines.map { ($0.lowerBound - base)..<($0.upperBound - base) },
            firstLine: nextLine
        )
        nextLine += lines.count
        buffer.removeFirst(scan)
        start = 0
        return batch
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
