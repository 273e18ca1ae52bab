import Foundation
import PersistentCollections

extension StoredRecord {
    /// The decoder of this type's records: its ``schema`` and ``idKey``.
    static var decoder: RecordDecoder { RecordDecoder(schema: schema, idKey: idKey) }
}

extension Database {
    /// The record of type `R` with `id`, decoded; nil when there is none.
    /// O(log16 n + the record's size).
    ///
    ///     let song = try store.current.record(Song.self, id: 7)
    ///
    /// - Throws: ``RecordDecodingError`` when the record does not decode.
    public func record<R: StoredRecord>(_ type: R.Type, id: R.ID) throws -> R? {
        let recordID = id.recordID
        guard let record = record(recordID, in: R.table) else { return nil }
        return try R.decoder.decodeStored(type, from: record, id: recordID, table: R.table)
    }

    /// Every record of type `R`, decoded, in the table's order (by ID
    /// hash: stable for a value, not sorted; sort or use a query for an
    /// order). O(n · record size); a large table decodes on every core.
    /// - Throws: ``RecordDecodingError`` for the first record (in that
    ///   order) that does not decode.
    public func records<R: StoredRecord>(_ type: R.Type) throws -> [R] {
        _reads?.noteTable(R.table)
        guard let table = _tables[R.table] else { return [] }
        let workers = ProcessInfo.processInfo.activeProcessorCount
        guard workers > 1, table.count >= Self.parallelDecodeMinimum else {
            return try Self.decode(type, table.records)
        }
        // The table cut into runs of its order, up to 16 per core (with
        // fewer, a core finishing early waited up to one part's time for
        // the other; a part holds at least one of the root's 16 subtries):
        // each decodes with its own context, straight into its slots of
        // the result.
        let decoder = R.decoder
        return try table.records.concurrentMap(maximumParts: workers * 16) { part, yield in
            let context = _DecodingContext(schema: decoder.schema, idKey: decoder.idKey)
            defer { context.endBatch() }
            try part.forEach { id, record in
                yield(try decoder.decodeStored(type, from: record, id: id, table: R.table, context: context))
            }
        }
    }

    /// Tables smaller than this decode on the calling thread.
    static let parallelDecodeMinimum = 16_384

    /// `rows` decoded as `R`, in order, with one context. O(rows · record size).
    static func decode<R: StoredRecord>(
        _ type: R.Type,
        _ rows: some Collection<(key: RecordID, value: Record)>
    ) throws -> [R] {
        let decoder = R.decoder
        let context = _DecodingContext(schema: decoder.schema, idKey: decoder.idKey)
        defer { context.endBatch() }
        var result: [R] = []
        result.reserveCapacity(rows.count)
        for (id, record) in rows {
            result.append(try decoder.decodeStored(type, from: record, id: id, table: R.table, context: context))
        }
        return result
    }
}

extension Query {
    /// The matching records decoded as `R`, in the query's order.
    /// O(the query's cost + matches · record size).
    ///
    ///     let album = try db.query("songs").where("album", equals: "Blue").order(by: "track").records(Song.self)
    ///
    /// - Throws: ``QueryError`` as ``records()``; ``RecordDecodingError``
    ///   (also when the query is on another table than `R`'s).
    public func records<R: StoredRecord>(_ type: R.Type) throws -> [R] {
        try checkTable(of: type)
        return try Database.decode(type, records().lazy.map { (key: $0.id, value: $0.record) })
    }

    /// The first matching record decoded as `R`, if any.
    /// - Throws: ``QueryError`` as ``first()``; ``RecordDecodingError``.
    public func first<R: StoredRecord>(_ type: R.Type) throws -> R? {
        try checkTable(of: type)
        guard let row = try first() else { return nil }
        return try R.decoder.decodeStored(type, from: row.record, id: row.id, table: table)
    }
}

extension Query {
    /// Throws when the query is on another table than `R`'s.
    private func checkTable<R: StoredRecord>(of type: R.Type) throws {
        guard table == R.table else {
            throw RecordDecodingError(
                table: table,
                id: nil,
                path: "",
                expected: "\(R.self)",
                found: "a query on \(table)",
                reason: "\(R.self) is stored in \(R.table)"
            )
        }
    }
}

extension TransactionBuilder {
    /// Inserts `record` into its table. O(log16 n + its size).
    /// - Throws: ``ApplyError/recordExists(table:id:)`` when its ID is
    ///   taken; `EncodingError` when it does not encode.
    public mutating func insert<R: StoredRecord>(_ record: R) throws {
        try insert(try Self.encoded(record), id: record.recordID, into: R.table)
    }

    /// Inserts `record`, or makes the existing one equal to it storing
    /// only the fields that differ (a field-level update: history, diffs
    /// and reverts show what changed). Fields the type does not have
    /// (an older version's, a renamed field's old name) are removed: the
    /// record takes the type's current shape. O(log16 n + its size).
    /// - Throws: `EncodingError` when it does not encode.
    public mutating func save<R: StoredRecord>(_ record: R) throws {
        try upsert(try Self.encoded(record), id: record.recordID, into: R.table)
    }

    /// Deletes the record of type `R` with `id`. O(log16 n).
    /// - Throws: ``ApplyError/recordMissing(table:id:change:)`` when there is none.
    public mutating func delete<R: StoredRecord>(_ type: R.Type, id: R.ID) throws {
        try delete(id.recordID, from: R.table)
    }

    private static func encoded<R: StoredRecord>(_ record: R) throws -> Record {
        try RecordEncoder(skippedKey: R.idKey).encode(record)
    }

}
