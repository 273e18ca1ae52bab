import Foundation
import PersistentCollections
import Synchronization

// Index declarations in the codec (format version 2):
//
//     index changes := table count, (table name, count, (index name, flags, old?, new?)*)*
//                      sorted by table, then index name; flags: 1 old present, 2 new present
//     definition    := name, unique (0/1), path count ≥ 1, (field, key count, key*)*
//
// A database's table lists its definitions after its records, sorted by
// name, then (version 3) each index's entries (BinaryCodec+IndexEntries);
// a version 2 table's entries are rebuilt from its records when read.

extension ByteWriter {
    mutating func indexDefinition(_ definition: IndexDefinition) {
        string(definition.name.string)
        byte(definition.isUnique ? 1 : 0)
        varint(definition.fields.count)
        for path in definition.fields {
            string(path.field.string)
            varint(path.keys.count)
            for key in path.keys { string(key.string) }
        }
    }

    mutating func indexChanges(_ changes: [Key: [Key: IndexChange]]) {
        // A table with no changes is no change: not written (a reader
        // refuses an empty list).
        let changes = changes.filter { !$0.value.isEmpty }
        varint(changes.count)
        for table in changes.keys.sorted() {
            let tableChanges = changes[table]!
            string(table.string)
            varint(tableChanges.count)
            for name in tableChanges.keys.sorted() {
                let change = tableChanges[name]!
                string(name.string)
                byte((change.old == nil ? 0 : 1) | (change.new == nil ? 0 : 2))
                if let old = change.old { indexDefinition(old) }
                if let new = change.new { indexDefinition(new) }
            }
        }
    }
}

extension ByteReader {
    mutating func indexDefinition(table: Key) throws -> IndexDefinition {
        let start = offset
        let name = Key(try string())
        let uniqueOffset = offset
        let unique = try byte()
        guard unique <= 1 else { throw CodecError.invalidTag(offset: uniqueOffset, tag: unique, context: "flag") }
        let pathCount = try count(minimumSize: 2)
        guard pathCount > 0 else {
            throw CodecError.invalidIndex(
                offset: start,
                table: table.string,
                index: name.string,
                reason: "no fields"
            )
        }
        var fields: [FieldPath] = []
        for _ in 0..<pathCount {
            let field = Key(try string())
            let keyCount = try count()
            var keys: [Key] = []
            for _ in 0..<keyCount { keys.append(Key(try string())) }
            fields.append(FieldPath(field: field, keys: keys))
        }
        return IndexDefinition(name: name, fields: fields, isUnique: unique == 1)
    }

    mutating func indexChanges() throws -> [Key: [Key: IndexChange]] {
        let tableCount = try count(minimumSize: 2)
        var result: [Key: [Key: IndexChange]] = [:]
        var seenTables: Set<Key> = []
        for _ in 0..<tableCount {
            let tableOffset = offset
            let table = Key(try string())
            let changeCount = try count(minimumSize: 2)
            var changes: [Key: IndexChange] = [:]
            for _ in 0..<changeCount {
                let nameOffset = offset
                let name = Key(try string())
                let flagsOffset = offset
                let flags = try byte()
                guard flags >= 1 && flags <= 3 else {
                    throw CodecError.invalidTag(offset: flagsOffset, tag: flags, context: "index change")
                }
                let old = flags & 1 != 0 ? try indexDefinition(table: table) : nil
                let new = flags & 2 != 0 ? try indexDefinition(table: table) : nil
                // A change names the index it changes.
                guard old.map({ $0.name == name }) ?? true, new.map({ $0.name == name }) ?? true, old != new else {
                    throw CodecError.invalidIndex(
                        offset: nameOffset,
                        table: table.string,
                        index: name.string,
                        reason: "the change does not match its name, or changes nothing"
                    )
                }
                guard changes.updateValue(IndexChange(old: old, new: new), forKey: name) == nil else {
                    throw CodecError.duplicateKey(offset: nameOffset, key: name.string)
                }
            }
            // A table listed with no changes (which builds before 2026-12-07
            // wrote for a transaction committed so) is no change.
            guard result.index(forKey: table) == nil, !seenTables.contains(table) else {
                throw CodecError.duplicateKey(offset: tableOffset, key: table.string)
            }
            seenTables.insert(table)
            if !changes.isEmpty { result[table] = changes }
        }
        return result
    }

    /// A table's declarations with their entries: read (version 3) or
    /// built from `records` (version 2), one index per core.
    mutating func indexes(of records: PersistentMap<RecordID, Record>, table: Key) throws -> [TableIndex] {
        let count = try self.count(minimumSize: 4)
        var definitions: [(IndexDefinition, offset: Int)] = []
        for _ in 0..<count {
            let start = offset
            let definition = try indexDefinition(table: table)
            if let previous = definitions.last, !(previous.0.name < definition.name) {
                throw CodecError.unorderedFields(offset: start)
            }
            definitions.append((definition, start))
        }
        if version >= 3 { return try storedIndexes(definitions.map(\.0), records: records, table: table) }
        let built = Mutex([Result<TableIndex, ApplyError>?](repeating: nil, count: definitions.count))
        let declared = definitions
        DispatchQueue.concurrentPerform(iterations: declared.count) { i in
            let result = Result { () throws(ApplyError) -> TableIndex in
                do { return try TableIndex(declared[i].0, records: records, table: table) } catch let error
                    as ApplyError
                {
                    throw error
                } catch {
                    preconditionFailure("an index build throws only ApplyError")
                }
            }
            built.withLock { $0[i] = result }
        }
        return try built.withLock { $0 }.enumerated().map { i, result in
            switch result! {
            case .success(let index): return index
            case .failure(let error):
                throw CodecError.invalidIndex(
                    offset: definitions[i].offset,
                    table: table.string,
                    index: definitions[i].0.name.string,
                    reason: error.description
                )
            }
        }
    }
}
