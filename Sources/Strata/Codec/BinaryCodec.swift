import Foundation
import PersistentCollections

/// The binary encoding of values, records, transactions and whole databases.
///
/// Every top-level encoding starts with the magic `STR`, a kind byte and the
/// format version, so a reader refuses data from a newer format instead of
/// misreading it. Integers are varints (zigzag for signed), strings are
/// length-prefixed UTF-8, field names and the table names of references are
/// interned within one top-level encoding, and record fields, map keys,
/// table names and metadata keys are written sorted by their UTF-8 bytes
/// (``Key`` order) so equal values encode to equal bytes — except whole
/// databases (see `encode(_: Database)`). A record's encoding is its
/// in-memory packed form with names in place of process-wide name IDs (see
/// `PackedReader.swift`), so encoding and decoding records is a validated
/// copy, not a rebuild.
///
/// A whole database (format ``databaseFormatVersion``) is laid out as a
/// store's snapshot file is, its chunks stored without compression: a
/// directory, then runs of records in their packed form and runs of each
/// index's entries, each run checksummed. Encoding and decoding run on
/// every core (a million records decode and build in well under a second),
/// and decoding checks what opening a snapshot checks, plus that each
/// index's entries are the ones its records give.
///
/// Decoding is total: any byte string decodes or throws ``CodecError`` with
/// the offset. Lengths are checked against the remaining input before
/// anything is allocated, nesting is bounded, and every loop consumes input,
/// so a decoder never crashes, never allocates unboundedly and never hangs.
public enum BinaryCodec {
    /// The format version this build writes for values, records and
    /// transactions, and the newest it reads for them (whole databases:
    /// ``databaseFormatVersion``). Version 2 adds index declarations to
    /// transactions and databases; version 3 adds each index's entries to
    /// databases, so a snapshot opens without rebuilding its indexes. Older
    /// encodings are read as before (a version 2 database rebuilds its
    /// indexes from the records).
    public static let formatVersion: UInt64 = 3

    /// The format version this build writes for whole databases, and the
    /// newest it reads for them. Version 4 lays a database out as a
    /// snapshot does (version 3 of the snapshot file: a directory of
    /// chunks, each a run of records in their packed form or of one
    /// index's entries), its chunks stored without compression, so that
    /// every core decodes its share. Versions 2 and 3 (one stream) are
    /// read as before, and written by ``encode(_:version:)``.
    public static let databaseFormatVersion: UInt64 = 4

    static let magic: [UInt8] = Array("STR".utf8)

    enum Kind: UInt8 {
        case value = 0x56  // "V"
        case record = 0x52  // "R"
        case transaction = 0x54  // "T"
        case database = 0x44  // "D"
    }

    // MARK: Top level

    /// The encoding of a value.
    public static func encode(_ value: Value) -> [UInt8] {
        var writer = header(.value)
        writer.value(value)
        return writer.bytes
    }

    /// The encoding of a record.
    public static func encode(_ record: Record) -> [UInt8] {
        var writer = header(.record)
        writer.record(record)
        return writer.bytes
    }

    /// The encoding of a transaction (a log record's payload).
    public static func encode(_ transaction: Transaction) -> [UInt8] {
        var writer = header(.transaction)
        writer.transaction(transaction)
        return writer.bytes
    }

    /// The encoding of a whole database, in ``databaseFormatVersion``:
    /// chunks of records and index entries behind a directory, built and
    /// decoded on every core. O(size).
    ///
    /// The bytes are **not canonical**: tables are written in name order
    /// and each table's records in ID order, but the field names are
    /// numbered in the order of this process's IDs for them (given as
    /// names are first met, and reused once a refused input's names are
    /// released). Equal databases decode to equal values, but may encode
    /// to different bytes in different processes, or after decoding
    /// another process's encoding; compare decoded values, never encodings.
    public static func encode(_ database: Database) -> [UInt8] {
        var bytes = header(.database, capacity: 0, version: databaseFormatVersion).bytes
        bytes.append(contentsOf: SnapshotFile.encodeRaw(database))
        return bytes
    }

    /// The encoding of a database in an earlier format `version` (2 or 3:
    /// one stream, decoded on one core), which builds that read only those
    /// formats can read; ``databaseFormatVersion`` gives `encode(_:)`'s
    /// bytes. Records are written in the order of the table's hash trie
    /// (random per process). O(size).
    /// - Throws: ``CodecError/unsupportedVersion(kind:found:supported:)``
    ///   for a version other than 2, 3 and ``databaseFormatVersion``.
    public static func encode(_ database: Database, version: UInt64) throws(CodecError) -> [UInt8] {
        if version == databaseFormatVersion { return encode(database) }
        guard version == 2 || version == 3 else {
            throw CodecError.unsupportedVersion(
                kind: "\(Kind.database)",
                found: version,
                supported: databaseFormatVersion
            )
        }
        var writer = header(.database, capacity: 64 + database.recordCount * 64, version: version)
        writer.database(database, version: version)
        return writer.bytes
    }

    /// Decodes a value. - Throws: ``CodecError``.
    public static func decodeValue(_ bytes: [UInt8]) throws -> Value {
        try decode(bytes, .value) { try $0.value() }
    }

    /// Decodes a record. - Throws: ``CodecError``.
    public static func decodeRecord(_ bytes: [UInt8]) throws -> Record {
        try decode(bytes, .record) { try $0.record() }
    }

    /// Decodes a transaction. - Throws: ``CodecError``.
    public static func decodeTransaction(_ bytes: [UInt8]) throws -> Transaction {
        try decode(bytes, .transaction) { try $0.transaction() }
    }

    /// The summary and basis at the head of an encoded transaction, its
    /// changes left unread: the store indexes its log with these and decodes
    /// whole transactions only when asked for them. `bytes` may be a prefix
    /// of the encoding. - Throws: ``CodecError``.
    static func decodeTransactionSummary(_ bytes: [UInt8]) throws -> (summary: TransactionSummary, basis: Int64) {
        try decode(bytes, .transaction, toEnd: false) { reader in
            let id = try reader.uuid()
            let t = try reader.zigzag()
            let basis = try reader.zigzag()
            let timestamp = try reader.date()
            let message = try reader.string()
            let significance = try reader.significance()
            return (
                TransactionSummary(id: id, t: t, timestamp: timestamp, message: message, significance: significance),
                basis
            )
        }
    }

    /// Decodes a database. - Throws: ``CodecError``.
    public static func decodeDatabase(_ bytes: [UInt8]) throws -> Database {
        // The chunked format's header is the codec's; what follows is read
        // as a snapshot's layout is, on every core. Any other version goes
        // to `decode`, which reads 2 and 3 and refuses the rest.
        var reader = ByteReader(bytes)
        if bytes.starts(with: magic + [Kind.database.rawValue]), (try? reader.take(4)) != nil,
            let version = try? reader.varint(), version == databaseFormatVersion
        {
            let start = reader.offset
            do {
                return try SnapshotFile.decodeRaw(bytes, from: start) { try checkIndexEntries(of: $0, offset: start) }
            } catch let error as FormatError {
                // The layout's own header speaks of a snapshot: said as the codec's.
                throw CodecError.damaged(offset: start + error.offset, reason: "its chunked layout: \(error.reason)")
            }
        }
        return try decode(bytes, .database) { try $0.database() }
    }

    static func header(_ kind: Kind, capacity: Int = 256, version: UInt64 = formatVersion) -> ByteWriter {
        var writer = ByteWriter(capacity: capacity)
        for b in magic { writer.byte(b) }
        writer.byte(kind.rawValue)
        writer.varint(version)
        return writer
    }

    static func decode<T>(
        _ bytes: [UInt8],
        _ kind: Kind,
        toEnd: Bool = true,
        _ body: (inout ByteReader) throws -> T
    ) throws -> T {
        var reader = ByteReader(bytes)
        let found = Array(bytes.prefix(4))
        let expected = magic + [kind.rawValue]
        guard found == expected else {
            if found.count < 4 && found == Array(expected.prefix(found.count)) {
                throw CodecError.truncated(offset: found.count, needed: 4 - found.count)
            }
            throw CodecError.badMagic(expected: expected, found: found)
        }
        _ = try reader.take(4)
        let version = try reader.varint()
        guard version <= formatVersion, version > 0 else {
            // A database's newest (4) is read before this, by `decodeDatabase`.
            let newest = kind == .database ? databaseFormatVersion : formatVersion
            throw CodecError.unsupportedVersion(kind: "\(kind)", found: version, supported: newest)
        }
        reader.version = version
        do {
            let result = try body(&reader)
            if toEnd { try reader.expectEnd() }
            FieldNames.commit(reader.heldNames)
            return result
        } catch {
            // Nothing of a rejected input stays in the process.
            FieldNames.release(reader.heldNames)
            throw error
        }
    }
}

// MARK: Writing

extension ByteWriter {
    mutating func change(_ change: Change) {
        switch change {
        case .insert(let r):
            tag(ChangeTag.insert)
            record(r)
        case .delete(let r):
            tag(ChangeTag.delete)
            record(r)
        case .update(let fields):
            tag(ChangeTag.update)
            varint(fields.count)
            for name in fields.keys.sorted() {
                let field = fields[name]!
                fieldName(name)
                byte((field.old == nil ? 0 : 1) | (field.new == nil ? 0 : 2))
                if let old = field.old { value(old) }
                if let new = field.new { value(new) }
            }
        }
    }

    mutating func transaction(_ t: Transaction) {
        uuid(t.id)
        zigzag(t.t)
        zigzag(t.basis)
        fixed64(t.timestamp.timeIntervalSinceReferenceDate.bitPattern)
        string(t.message)
        byte(UInt8(t.significance.rawValue))
        metadata(t.metadata)
        varint(t.changes.count)
        for table in t.changes.keys.sorted() {
            let changes = t.changes[table]!
            string(table.string)
            varint(changes.count)
            if changes.count < 256 {
                for (id, change) in changes.sorted(by: { $0.key < $1.key }) {
                    recordID(id)
                    self.change(change)
                }
                continue
            }
            // Many: the IDs sorted alone (integers by a radix sort), then
            // their changes looked up together. Sorting (ID, change) pairs
            // copied each change at every step of the merge (a fifth of an
            // import's commit); for a few, that costs less than the radix
            // sort's buffers.
            let ids = changes._sortedKeys()
            for (id, change) in zip(ids, changes.values(forKeys: ids)) {
                recordID(id)
                self.change(change!)
            }
        }
        varint(t.covers.count)
        for summary in t.covers {
            uuid(summary.id)
            zigzag(summary.t)
            fixed64(summary.timestamp.timeIntervalSinceReferenceDate.bitPattern)
            string(summary.message)
            byte(UInt8(summary.significance.rawValue))
        }
        if let reverts = t.reverts {
            byte(1)
            uuid(reverts)
        } else {
            byte(0)
        }
        indexChanges(t.indexChanges)
    }

    mutating func metadata(_ metadata: [Key: Value]) {
        varint(metadata.count)
        for key in metadata.keys.sorted() {
            string(key.string)
            value(metadata[key]!)
        }
    }

    mutating func database(_ database: Database, version: UInt64) {
        zigzag(database.basis)
        varint(database.tables.count)
        for name in database.tables.keys.sorted() {
            let table = database.tables[name]!
            string(name.string)
            varint(table.count)
            for (id, record) in table.records {
                recordID(id)
                self.record(record)
            }
            varint(table.indexes.count)
            for index in table.indexes { indexDefinition(index.definition) }
            if version >= 3 {
                for index in table.indexes { indexEntries(index) }
            }
        }
    }
}

// MARK: Reading

extension ByteReader {
    mutating func value() throws -> Value {
        let start = offset
        switch try valueTag() {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(try zigzag())
        case .double: return .double(Double(bitPattern: try fixed64()))
        case .string: return .string(try string())
        case .bytes: return .bytes(try raw())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed64())))
        case .reference: return .reference(RecordReference(table: try fieldName(), id: try recordID()))
        case .list:
            try enter(at: start)
            defer { depth -= 1 }
            let count = try self.count()
            var elements: [Value] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try value()) }
            return .list(PersistentVector(elements))
        case .map:
            try enter(at: start)
            defer { depth -= 1 }
            let count = try self.count(minimumSize: 2)
            var map = PersistentMap<Key, Value>.Builder()
            for _ in 0..<count {
                let keyOffset = offset
                let key = Key(try string())
                if map.updateValue(try value(), forKey: key) != nil {
                    throw CodecError.duplicateKey(offset: keyOffset, key: key.string)
                }
            }
            return .map(map.build())
        }
    }

    mutating func enter(at start: Int) throws {
        depth += 1
        if depth > Self.maximumDepth {
            depth -= 1
            throw CodecError.nestingTooDeep(offset: start, limit: Self.maximumDepth)
        }
    }

    mutating func recordID() throws -> RecordID {
        let start = offset
        let tag = try byte()
        switch RecordIDTag(rawValue: tag) {
        case .integer: return RecordID(try zigzag())
        case .string: return RecordID(try string())
        case .uuid: return RecordID(try uuid())
        case nil: throw CodecError.invalidTag(offset: start, tag: tag, context: "record ID")
        }
    }

    mutating func change() throws -> Change {
        let start = offset
        let tag = try byte()
        switch ChangeTag(rawValue: tag) {
        case .insert: return .insert(try record())
        case .delete: return .delete(try record())
        case .update:
            let count = try self.count(minimumSize: 2)
            var fields: [Key: FieldChange] = [:]
            for _ in 0..<count {
                let nameOffset = offset
                let name = try fieldName()
                let flagsOffset = offset
                let flags = try byte()
                guard flags <= 3 else {
                    throw CodecError.invalidTag(offset: flagsOffset, tag: flags, context: "field change")
                }
                let old = flags & 1 != 0 ? try value() : nil
                let new = flags & 2 != 0 ? try value() : nil
                guard fields.updateValue(FieldChange(old: old, new: new), forKey: name) == nil else {
                    throw CodecError.duplicateKey(offset: nameOffset, key: name.string)
                }
            }
            return .update(fields)
        case nil:
            throw CodecError.invalidTag(offset: start, tag: tag, context: "change")
        }
    }

    mutating func significance() throws -> Significance {
        let start = offset
        let raw = try byte()
        guard let value = Significance(rawValue: Int(raw)) else {
            throw CodecError.invalidTag(offset: start, tag: raw, context: "significance")
        }
        return value
    }

    mutating func date() throws -> Date {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed64()))
    }

    mutating func transaction() throws -> Transaction {
        let id = try uuid()
        let t = try zigzag()
        let basis = try zigzag()
        let timestamp = try date()
        let message = try string()
        let significance = try self.significance()
        let metadata = try self.metadata()
        let tableCount = try count(minimumSize: 2)
        var changes = PersistentMap<Key, PersistentMap<RecordID, Change>>()
        for _ in 0..<tableCount {
            let nameOffset = offset
            let table = Key(try string())
            let changeCount = try count(minimumSize: 3)
            var tableChanges = PersistentMap<RecordID, Change>.Builder()
            for _ in 0..<changeCount {
                let idOffset = offset
                let recordID = try recordID()
                if tableChanges.updateValue(try change(), forKey: recordID) != nil {
                    throw CodecError.duplicateKey(offset: idOffset, key: "\(table)/\(recordID)")
                }
            }
            guard changes.updateValue(tableChanges.build(), forKey: table) == nil else {
                throw CodecError.duplicateKey(offset: nameOffset, key: table.string)
            }
        }
        // A summary takes at least 27 bytes: ID 16, t 1, timestamp 8, an
        // empty message's length 1, significance 1.
        let coverCount = try count(minimumSize: 27)
        var covers: [TransactionSummary] = []
        for _ in 0..<coverCount {
            covers.append(
                TransactionSummary(
                    id: try uuid(),
                    t: try zigzag(),
                    timestamp: try date(),
                    message: try string(),
                    significance: try self.significance()
                )
            )
        }
        let revertsOffset = offset
        let hasReverts = try byte()
        guard hasReverts <= 1 else {
            throw CodecError.invalidTag(offset: revertsOffset, tag: hasReverts, context: "flag")
        }
        let reverts = hasReverts == 1 ? try uuid() : nil
        let indexChanges = version >= 2 ? try self.indexChanges() : [:]
        return Transaction(
            id: id,
            t: t,
            basis: basis,
            timestamp: timestamp,
            message: message,
            significance: significance,
            metadata: metadata,
            changes: changes,
            indexChanges: indexChanges,
            covers: covers,
            reverts: reverts
        )
    }

    mutating func metadata() throws -> [Key: Value] {
        let count = try self.count(minimumSize: 2)
        var metadata: [Key: Value] = [:]
        for _ in 0..<count {
            let keyOffset = offset
            let key = Key(try string())
            guard metadata.updateValue(try value(), forKey: key) == nil else {
                throw CodecError.duplicateKey(offset: keyOffset, key: key.string)
            }
        }
        return metadata
    }

    mutating func database() throws -> Database {
        let basis = try zigzag()
        let tableCount = try count(minimumSize: 2)
        var tables = PersistentMap<Key, Table>()
        for _ in 0..<tableCount {
            let nameOffset = offset
            let name = Key(try string())
            let recordsStart = offset
            let recordCount = try count(minimumSize: 3)
            // In parts, which the build hashes and moves in on every core
            // (one part of a million records took one core that long).
            var parts: [[(RecordID, Record)]] = []
            var left = recordCount
            while left > 0 {
                let size = Swift.min(left, 1 << 16)
                var part: [(RecordID, Record)] = []
                part.reserveCapacity(size)
                for _ in 0..<size { part.append((try recordID(), try record())) }
                left -= size
                parts.append(part)
            }
            // Bulk build (each node allocated once at its size, the root's
            // subtries on every core); on a repeated ID, decode the table
            // again one record at a time to report where.
            guard let records = PersistentMap<RecordID, Record>(checkingUniqueKeysWithValuesOf: consume parts)
            else {
                rewind(to: recordsStart)
                _ = try count(minimumSize: 3)
                var seen = Set<RecordID>()
                for _ in 0..<recordCount {
                    let idOffset = offset
                    let id = try recordID()
                    _ = try record()
                    if !seen.insert(id).inserted {
                        throw CodecError.duplicateKey(offset: idOffset, key: "\(name)/\(id)")
                    }
                }
                preconditionFailure("a repeated record ID that a second pass does not find")
            }
            var table = Table(records: records)
            if version >= 2 { table.indexes = try indexes(of: records, table: name) }
            guard tables.updateValue(table, forKey: name) == nil else {
                throw CodecError.duplicateKey(offset: nameOffset, key: name.string)
            }
        }
        return Database(tables: tables, basis: basis)
    }
}
