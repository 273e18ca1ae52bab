import ArgumentParser
import Foundation
import PersistentCollections
import Strata

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Writes the records of the value (now, or as of t) as JSON on standard output.",
        discussion: """
            jsonl: one record a line, its ID in the --id-field member and, unless \
            --table is given, its table in "$table": what `strata import` reads. \
            json: one object of tables, each an array of such records. Values \
            follow the Strata JSON convention (README): a double always has a \
            point, bytes are {"$bytes": base64}, dates {"$date": ISO 8601, \
            "$seconds": exact}, references {"$ref": {"table", "id"}}.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case jsonl, json
    }

    @OptionGroup var common: CommonOptions

    @Option(
        name: .customLong("as-of"),
        parsing: .unconditional,
        help: "The value after transaction t (a number or an ID)."
    )
    var asOf: TransactionReference?

    @Option(help: "Only this table.")
    var table: String?

    @Option(help: "jsonl or json (with --json, json).")
    var format: Format?

    @Option(name: .customLong("id-field"), help: "The member that holds each record's ID.")
    var idField = "$id"

    /// The format written: `--json` promises one JSON document on stdout,
    /// which JSON lines are not.
    var written: Format { format ?? (common.json ? .json : .jsonl) }

    func validate() throws {
        if common.json, format == .jsonl {
            throw ValidationError("--json writes one JSON document and --format jsonl writes lines: give one of them")
        }
        try RecordLineParser.validate(idField: idField, linesNameTables: written == .jsonl && table == nil)
    }

    func run() async throws {
        let console = Console()
        let store = try await common.openReading(console)
        let value = try await common.value(of: store, asOf: asOf)
        try await store.close()
        var tables = value.tableNames
        if let table {
            guard tables.contains(Key(table)) else {
                throw CommandFailure(.failed, "\(common.path): no table \(Text.safe(table)) at t \(value.basis)")
            }
            tables = [Key(table)]
        }
        let named = table == nil
        if written == .json {
            // Refused before a byte is written: a refusal after the opening
            // brace left a fragment that no JSON reader takes.
            for name in tables {
                if let clash = Self.firstClash(in: value[table: name], idField: idField, json: true) {
                    throw Self.refusal(clash, table: name.string, idField: idField)
                }
            }
            console.write(Array("{".utf8))
        }
        for (tableIndex, name) in tables.enumerated() {
            if written == .json {
                var writer = JSONWriter()
                if tableIndex > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.string(name.string)
                writer.raw(":[")
                console.write(writer.bytes)
            }
            try Self.write(
                value[table: name],
                table: named && written == .jsonl ? name.string : nil,
                idField: idField,
                json: written == .json,
                to: console
            )
            if written == .json { console.write(Array("]".utf8)) }
        }
        if written == .json { console.write(Array("}\n".utf8)) }
        console.flush()
    }

    /// Every record of a table by ID, encoded on every core in chunks
    /// written in order: the IDs are sorted first (the same value exports
    /// the same bytes in every run; a map's order follows a per-process
    /// hash seed). Each chunk fetches its records in one batched lookup,
    /// whose memory reads overlap, just before it encodes them: a record
    /// is brought into cache once, not once to be gathered and again to
    /// be written. Each batch of chunks is written while the next one is
    /// encoded.
    static func write(
        _ source: Table,
        table: String?,
        idField: String,
        json: Bool,
        to console: Console
    ) throws {
        // A JSON export was checked whole before its first byte.
        let reserved = json ? [] : reservedFields(idField: idField, json: json)
        let sorted = source.sortedIDs()
        let chunkSize = 16_384
        let lanes = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let chunkCount = (sorted.count + chunkSize - 1) / chunkSize
        // The encoded batch not yet written, with the commas between its
        // chunks (JSON arrays) already in place.
        var pending: [[UInt8]] = []
        for batchStart in stride(from: 0, to: chunkCount, by: lanes * 2) {
            // The reader went away (`| head`): what is left would be
            // encoded for no one.
            if console.isClosed { return }
            let batch = batchStart..<min(chunkCount, batchStart + lanes * 2)
            let outputs = LaneResults<[UInt8]>(count: batch.count)
            let clashes = LaneResults<(id: RecordID, field: Key)?>(count: batch.count)
            let previous = pending
            // Only iteration 0 touches the console, while this thread
            // waits for the loop: one thread at a time.
            nonisolated(unsafe) let output = console
            // Iteration 0 writes the previous batch; the others encode.
            DispatchQueue.concurrentPerform(iterations: batch.count + 1) { iteration in
                guard iteration > 0 else {
                    for chunk in previous { output.writeLarge(chunk) }
                    return
                }
                let offset = iteration - 1
                let chunk = batch.lowerBound + offset
                let range = (chunk * chunkSize)..<min(sorted.count, (chunk + 1) * chunkSize)
                var writer = JSONWriter(capacity: range.count * 384)
                if json, chunk > 0 { writer.byte(UInt8(ascii: ",")) }
                var names = JSONFieldNames()
                var clash: (id: RecordID, field: Key)?
                // A few hundred records at a time: fetched together, then
                // written while they are still in cache.
                for start in stride(from: range.lowerBound, to: range.upperBound, by: 256) {
                    let ids = sorted[start..<min(range.upperBound, start + 256)]
                    for (id, record) in zip(ids, source.records.values(forKeys: ids)) {
                        let record = record!
                        if !reserved.isEmpty, clash == nil, let field = reserved.first(where: { record[$0] != nil }) {
                            clash = (id, field)
                        }
                        if json, start > range.lowerBound || id != ids.first { writer.byte(UInt8(ascii: ",")) }
                        writer.record(record, id: id, idField: idField, table: table, names: &names)
                        if !json { writer.byte(0x0A) }
                    }
                }
                outputs.set(offset, writer.bytes)
                clashes.set(offset, clash)
            }
            if let clash = (0..<batch.count).lazy.compactMap({ clashes[$0] }).first {
                throw refusal(clash, table: table, idField: idField)
            }
            pending = (0..<batch.count).map { outputs[$0] }
        }
        for output in pending { console.writeLarge(output) }
    }

    /// The field names a record cannot have in this export: the ID member's,
    /// and (in JSON lines, with or without --table) the table member's,
    /// which would be read back as them. A name no record holds needs no
    /// check.
    static func reservedFields(idField: String, json: Bool) -> [Key] {
        ([Key(idField)] + (json ? [] : [RecordLineParser.tableField])).filter { RecordTokens.fieldID(of: $0) != nil }
    }

    /// The first record of `source` (in ID order) holding a reserved
    /// field, and the field. O(n).
    static func firstClash(in source: Table, idField: String, json: Bool) -> (id: RecordID, field: Key)? {
        let reserved = reservedFields(idField: idField, json: json)
        guard !reserved.isEmpty else { return nil }
        var first: (id: RecordID, field: Key)?
        for (id, record) in source.records {
            guard let field = reserved.first(where: { record[$0] != nil }) else { continue }
            if first.map({ id < $0.id }) ?? true { first = (id, field) }
        }
        return first
    }

    /// The failure for a record holding a reserved field.
    static func refusal(_ clash: (id: RecordID, field: Key), table: String?, idField: String) -> CommandFailure {
        let advice =
            clash.field == Key(idField)
            ? "which the export uses for IDs: choose another --id-field"
            : "which JSON lines cannot carry (import reads it as the record's table); --format json keeps it"
        return CommandFailure(
            .failed,
            "record \(Text.recordID(clash.id))\(table.map { " of \(Text.safe($0))" } ?? "") has a field named "
                + "\(Text.safe(clash.field.string)), \(advice)"
        )
    }
}
