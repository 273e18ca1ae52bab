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

    @Option(name: .customLong("as-of"), help: "The value after transaction t (a number or an ID).")
    var asOf: TransactionReference?

    @Option(help: "Only this table.")
    var table: String?

    @Option(help: "jsonl or json.")
    var format: Format = .jsonl

    @Option(name: .customLong("id-field"), help: "The member that holds each record's ID.")
    var idField = "$id"

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
        if format == .json { console.write(Array("{".utf8)) }
        for (tableIndex, name) in tables.enumerated() {
            if format == .json {
                var writer = JSONWriter()
                if tableIndex > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.string(name.string)
                writer.raw(":[")
                console.write(writer.bytes)
            }
            let records = value[table: name].records
            try Self.write(
                records,
                table: named && format == .jsonl ? name.string : nil,
                idField: idField,
                json: format == .json,
                to: console
            )
            if format == .json { console.write(Array("]".utf8)) }
        }
        if format == .json { console.write(Array("}\n".utf8)) }
        console.flush()
    }

    /// Every record of a table by ID, encoded on every core in chunks
    /// written in order: the IDs are sorted first (the same value exports
    /// the same bytes in every run; a map's order follows a per-process
    /// hash seed), each chunk's records looked up by the core encoding it.
    static func write(
        _ records: PersistentMap<RecordID, Record>,
        table: String?,
        idField: String,
        json: Bool,
        to console: Console
    ) throws {
        // A field named like the ID (or table) member would be read back as it.
        let reserved = [Key(idField)] + (table == nil ? [] : [RecordLineParser.tableField])
        let ids = Array(records.keys).sorted()
        let chunkSize = 16_384
        let lanes = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let chunkCount = (ids.count + chunkSize - 1) / chunkSize
        var first = true
        // A few chunks per core at a time, written as soon as they are encoded.
        for batchStart in stride(from: 0, to: chunkCount, by: lanes * 2) {
            let batch = batchStart..<min(chunkCount, batchStart + lanes * 2)
            let outputs = LaneResults<[UInt8]>(count: batch.count)
            let clashes = LaneResults<RecordID?>(count: batch.count)
            DispatchQueue.concurrentPerform(iterations: batch.count) { offset in
                let chunk = batch.lowerBound + offset
                let range = (chunk * chunkSize)..<min(ids.count, (chunk + 1) * chunkSize)
                var writer = JSONWriter(capacity: range.count * 256)
                var clash: RecordID?
                for index in range {
                    let record = records[ids[index]]!
                    if clash == nil, reserved.contains(where: { record[$0] != nil }) { clash = ids[index] }
                    if json, index > range.lowerBound { writer.byte(UInt8(ascii: ",")) }
                    writer.record(record, id: ids[index], idField: idField, table: table)
                    if !json { writer.byte(0x0A) }
                }
                outputs.set(offset, writer.bytes)
                clashes.set(offset, clash)
            }
            if let clash = (0..<batch.count).lazy.compactMap({ clashes[$0] }).first {
                throw CommandFailure(
                    .failed,
                    "record \(Text.recordID(clash))\(table.map { " of \(Text.safe($0))" } ?? "") has a field named "
                        + "\(reserved.map { Text.safe($0.string) }.joined(separator: " or ")), which the export uses: "
                        + "choose another --id-field (or export one --table at a time)"
                )
            }
            for offset in 0..<batch.count {
                if json, !first { console.write([UInt8(ascii: ",")]) }
                first = false
                console.write(outputs[offset])
            }
        }
    }
}
