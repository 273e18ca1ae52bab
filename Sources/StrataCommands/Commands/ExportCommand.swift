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
        let value: Database = try await common.failing {
            switch asOf?.kind {
            case nil: return store.current
            case .t(let t)?:
                guard t <= store.current.basis else {
                    throw CommandFailure.usage(
                        "\(common.path): no t \(t) (the history ends at t \(store.current.basis))"
                    )
                }
                return try await store.database(asOf: t)
            case .id(let id)?: return try await store.database(after: id)
            }
        }
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
            Self.write(
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
    /// written in order.
    static func write(
        _ records: PersistentMap<RecordID, Record>,
        table: String?,
        idField: String,
        json: Bool,
        to console: Console
    ) {
        let chunkSize = 16_384
        var chunk: [(RecordID, Record)] = []
        chunk.reserveCapacity(chunkSize)
        var first = true
        var pending: [[(RecordID, Record)]] = []
        let lanes = max(1, ProcessInfo.processInfo.activeProcessorCount)
        func drain() {
            let outputs = LaneResults<[UInt8]>(count: pending.count)
            let batches = pending
            DispatchQueue.concurrentPerform(iterations: batches.count) { index in
                var writer = JSONWriter(capacity: batches[index].count * 200)
                for (offset, (id, record)) in batches[index].enumerated() {
                    if json, offset > 0 { writer.byte(UInt8(ascii: ",")) }
                    writer.record(record, id: id, idField: idField, table: table)
                    if !json { writer.byte(0x0A) }
                }
                outputs.set(index, writer.bytes)
            }
            for index in 0..<batches.count {
                let output = outputs[index]
                if json, !first { console.write([UInt8(ascii: ",")]) }
                first = false
                console.write(output)
            }
            pending.removeAll(keepingCapacity: true)
        }
        // By ID: the same value exports the same bytes in every run (a
        // map's order follows a per-process hash seed).
        var sorted = Array(records)
        sorted.sort { $0.0 < $1.0 }
        for (id, record) in sorted {
            chunk.append((id, record))
            if chunk.count == chunkSize {
                pending.append(chunk)
                chunk.removeAll(keepingCapacity: true)
                if pending.count == lanes * 2 { drain() }
            }
        }
        if !chunk.isEmpty { pending.append(chunk) }
        if !pending.isEmpty { drain() }
    }
}
