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
    /// written in order: the records are sorted by ID first (the same
    /// value exports the same bytes in every run; a map's order follows a
    /// per-process hash seed). They are taken out of the map in one walk
    /// and sorted as pairs: a lookup per record costs a walk down the trie.
    static func write(
        _ records: PersistentMap<RecordID, Record>,
        table: String?,
        idField: String,
        json: Bool,
        to console: Console
    ) throws {
        // A field named like the ID member, or (in JSON lines, with or
        // without --table) like the table member, would be read back as it.
        let reserved = [Key(idField)] + (json ? [] : [RecordLineParser.tableField])
        let sorted = Self.sortedByID(records)
        let chunkSize = 16_384
        let lanes = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let chunkCount = (sorted.count + chunkSize - 1) / chunkSize
        var first = true
        // A few chunks per core at a time, written as soon as they are encoded.
        for batchStart in stride(from: 0, to: chunkCount, by: lanes * 2) {
            let batch = batchStart..<min(chunkCount, batchStart + lanes * 2)
            let outputs = LaneResults<[UInt8]>(count: batch.count)
            let clashes = LaneResults<(id: RecordID, field: Key)?>(count: batch.count)
            DispatchQueue.concurrentPerform(iterations: batch.count) { offset in
                let chunk = batch.lowerBound + offset
                let range = (chunk * chunkSize)..<min(sorted.count, (chunk + 1) * chunkSize)
                var writer = JSONWriter(capacity: range.count * 256)
                var clash: (id: RecordID, field: Key)?
                for index in range {
                    let (id, record) = sorted[index]
                    if clash == nil, let field = reserved.first(where: { record[$0] != nil }) { clash = (id, field) }
                    if json, index > range.lowerBound { writer.byte(UInt8(ascii: ",")) }
                    writer.record(record, id: id, idField: idField, table: table)
                    if !json { writer.byte(0x0A) }
                }
                outputs.set(offset, writer.bytes)
                clashes.set(offset, clash)
            }
            if let clash = (0..<batch.count).lazy.compactMap({ clashes[$0] }).first {
                let advice =
                    clash.field == Key(idField)
                    ? "which the export uses for IDs: choose another --id-field"
                    : "which JSON lines cannot carry (import reads it as the record's table); --format json keeps it"
                throw CommandFailure(
                    .failed,
                    "record \(Text.recordID(clash.id))\(table.map { " of \(Text.safe($0))" } ?? "") has a field named "
                        + "\(Text.safe(clash.field.string)), \(advice)"
                )
            }
            for offset in 0..<batch.count {
                if json, !first { console.write([UInt8(ascii: ",")]) }
                first = false
                console.write(outputs[offset])
            }
        }
    }

    /// The map's entries in ID order. Integer IDs (the common case) are
    /// sorted as plain integers beside their positions, then gathered.
    /// O(n log n).
    static func sortedByID(_ records: PersistentMap<RecordID, Record>) -> [(id: RecordID, record: Record)] {
        var entries: [(id: RecordID, record: Record)] = []
        entries.reserveCapacity(records.count)
        var integers: [(key: Int64, position: Int32)] = []
        integers.reserveCapacity(records.count)
        records.forEach { id, record in
            if case .integer(let key) = id.kind, integers.count == entries.count {
                integers.append((key, Int32(truncatingIfNeeded: entries.count)))
            }
            entries.append((id, record))
        }
        guard integers.count == entries.count, entries.count <= Int(Int32.max) else {
            entries.sort { $0.id < $1.id }
            return entries
        }
        integers.sort { $0.key < $1.key }
        return integers.map { entries[Int($0.position)] }
    }
}
