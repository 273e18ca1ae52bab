import ArgumentParser
import Foundation
import Strata

/// A record read from a line.
package struct ParsedRecord: Sendable, Equatable {
    package var table: Key
    package var id: RecordID
    package var record: Record

    /// The records of each table, in line order, tables in order of first appearance.
    static func byTable(_ records: [ParsedRecord]) -> [(Key, [(id: RecordID, record: Record)])] {
        var groups: [(Key, [(id: RecordID, record: Record)])] = []
        var position: [Key: Int] = [:]
        for record in records {
            // Lines of one table mostly follow each other: no lookup for those.
            if let last = groups.indices.last, groups[last].0 == record.table {
                groups[last].1.append((record.id, record.record))
            } else if let index = position[record.table] {
                groups[index].1.append((record.id, record.record))
            } else {
                position[record.table] = groups.count
                groups.append((record.table, [(record.id, record.record)]))
            }
        }
        return groups
    }
}

/// Reads records from JSON lines, a batch at a time on every core.
package struct RecordLineParser: Sendable {
    /// Why a line is not a record: its number and what.
    package struct Failure: Error {
        package var line: Int
        package var reason: String
    }

    let table: Key?
    let idField: Key
    static let tableField: Key = "$table"

    /// Refuses an `--id-field` that no line could carry: empty, or the
    /// member that names each line's table when lines name their tables
    /// (import and export without `--table`, in JSON lines).
    static func validate(idField: String, linesNameTables: Bool) throws {
        if idField.isEmpty { throw ValidationError("--id-field must name a member") }
        if linesNameTables, Key(idField) == tableField {
            throw ValidationError(
                "--id-field \"$table\" is the member that names each line's table: choose another, or give --table"
            )
        }
    }

    /// Records in `table` (else each line's `$table` member's), their IDs
    /// in member `idField`.
    package init(table: Key?, idField: Key) {
        self.table = table
        self.idField = idField
    }

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
        let format = RecordLineFormat(idField: idField, table: table)
        var writer = RecordWriter()
        try batch.bytes.withUnsafeBufferPointer { buffer throws(Failure) in
            for index in range {
                var line = batch.lines[index]
                // A CRLF file's lines end in a carriage return; blank lines are skipped.
                if line.upperBound > line.lowerBound, buffer[line.upperBound - 1] == 0x0D { line = line.dropLast() }
                // A byte order mark alone (an empty file saved as "UTF-8
                // with BOM") is blank too; the readers skip one before a value.
                let content = line.dropFirst(
                    JSONReader.byteOrderMarkLength(UnsafeBufferPointer(rebasing: buffer[line]))
                )
                guard !buffer[content].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else { continue }
                let text = UnsafeBufferPointer(rebasing: buffer[line])
                // Lines in the shape `strata export` writes are read straight
                // into records; any other line (and any error) the general way.
                if let direct = JSONReader.record(text, format, into: &writer) {
                    records.append(direct)
                } else {
                    records.append(try generalRecord(text, line: batch.firstLine + index))
                }
            }
        }
        return records
    }

    /// What a line that is no JSON object may be instead: UTF-16 (every
    /// other byte zero, or its byte-order mark), which import does not read.
    static func hint(_ text: UnsafeBufferPointer<UInt8>) -> String {
        let utf16Mark = text.count >= 2 && (text[0] == 0xFF && text[1] == 0xFE || text[0] == 0xFE && text[1] == 0xFF)
        let zeros = text.prefix(64).filter { $0 == 0 }.count
        guard utf16Mark || (text.count >= 4 && zeros * 3 >= min(text.count, 64)) else { return "" }
        return "; this looks like UTF-16 text: import reads UTF-8 (convert it first, e.g. iconv -f UTF-16 -t UTF-8)"
    }

    /// The record of `text`, line number `line`, read the general way:
    /// members as values, then packed. Any line the direct reading
    /// (`JSONReader.record`) reads, this reads to the same record.
    package func generalRecord(_ text: UnsafeBufferPointer<UInt8>, line number: Int) throws(Failure) -> ParsedRecord {
        let members: [(Key, Value)]
        do {
            members = try JSONReader.object(text)
        } catch {
            throw Failure(line: number, reason: "not a record's JSON object: \(error)" + Self.hint(text))
        }
        var fields: [(Key, Value)] = []
        fields.reserveCapacity(members.count)
        var names: Set<Key> = []
        var id: RecordID?
        var lineTable = table
        for (name, value) in members {
            if name == idField {
                guard let recordID = JSONReader.recordID(value) else {
                    throw Failure(line: number, reason: "\(idField) must be an integer, a string or {\"$uuid\": …}")
                }
                // A repeated ID would pick one record silently (JSON readers differ on which).
                guard id == nil else { throw Failure(line: number, reason: "two \(idField) members: which ID?") }
                id = recordID
            } else if name == Self.tableField {
                guard table == nil else {
                    throw Failure(line: number, reason: "a $table member, and --table was given: which table?")
                }
                guard lineTable == nil else { throw Failure(line: number, reason: "two $table members: which table?") }
                // "" names a table too: the engine takes it, and export writes it.
                guard case .string(let text) = value else {
                    throw Failure(line: number, reason: "$table must be a string (a table name)")
                }
                lineTable = Key(text)
            } else {
                // JSON readers differ on which value of a repeated name counts.
                guard names.insert(name).inserted else {
                    throw Failure(line: number, reason: "two members named \"\(Text.safe(name.string))\": which value?")
                }
                fields.append((name, value))
            }
        }
        // Too deep for the store: refused here, where the line is known,
        // not when the batch commits.
        for (name, value) in fields where value.nestingDepth > Value.maximumNesting {
            throw Failure(
                line: number,
                reason: "field \(Text.safe(name.string)) nests \(value.nestingDepth) levels of lists and maps; "
                    + "a value may nest at most \(Value.maximumNesting)"
            )
        }
        guard let id else {
            // A whole JSON document (`export --format json`): tables of records.
            let document =
                !members.isEmpty && members.allSatisfy { if case .list = $0.1 { true } else { false } }
                ? "; this looks like a JSON document of tables (export --format json): import reads JSON lines, "
                    + "one record a line (export's default format)"
                : ""
            throw Failure(line: number, reason: "no \(idField) member (the record's ID)" + document)
        }
        guard let lineTable else {
            throw Failure(line: number, reason: "no $table member (or give --table)")
        }
        return ParsedRecord(table: lineTable, id: id, record: Record(fields: fields))
    }
}
