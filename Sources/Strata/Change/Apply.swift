import PersistentCollections

/// Why a transaction could not be applied to a database. Names the table and
/// record, and what was expected there.
public enum ApplyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An insert of a record that exists.
    case recordExists(table: String, id: RecordID)
    /// An update or delete of a record that does not exist.
    case recordMissing(table: String, id: RecordID, change: String)
    /// A delete found the record different from the one it removed: it was
    /// changed since the transaction was built.
    case recordChanged(table: String, id: RecordID)
    /// A field's current value is not what the update replaced: it was
    /// changed since the transaction was built.
    case conflict(table: String, id: RecordID, field: String, expected: Value?, found: Value?)

    /// A one-line explanation naming table and record.
    public var description: String {
        switch self {
        case let .recordExists(table, id):
            return "cannot insert \(table)/\(id): the record exists"
        case let .recordMissing(table, id, change):
            return "cannot \(change) \(table)/\(id): no such record"
        case let .recordChanged(table, id):
            return "conflict at \(table)/\(id): the record changed since the transaction was built"
        case let .conflict(table, id, field, expected, found):
            return "conflict at \(table)/\(id).\(field): expected \(expected.map(\.description) ?? "nothing"), "
                + "found \(found.map(\.description) ?? "nothing")"
        }
    }
}

/// The database after `transaction`: every change applied, basis set to the
/// transaction's `t`. Checks that each change finds what it replaced.
///
/// Within a table, the first change copies the shared path; later changes
/// mutate the now uniquely owned nodes in place. O(changes · log32 n).
///
/// - Throws: ``ApplyError`` naming the first table and record that does not
///   match; nothing is applied then.
public func apply(_ database: Database, _ transaction: Transaction) throws -> Database {
    var tables = database.tables
    for (name, changes) in transaction.changes {
        var table = tables.removeValue(forKey: name) ?? Table()
        for (id, change) in changes {
            try table.apply(change, to: id, tableName: name)
        }
        if !table.isEmpty { tables[name] = table }
    }
    var result = database
    result.tables = tables
    result.basis = transaction.t
    return result
}

extension Table {
    mutating func apply(_ change: Change, to id: RecordID, tableName: String) throws {
        switch change {
        case .insert(let record):
            // One descent: insert, and put the old record back if there was one
            // (the caller's copy is discarded on error anyway).
            if let existing = records.updateValue(record, forKey: id) {
                records[id] = existing
                throw ApplyError.recordExists(table: tableName, id: id)
            }
        case .delete(let expected):
            guard let current = records[id] else {
                throw ApplyError.recordMissing(table: tableName, id: id, change: "delete")
            }
            guard current == expected else {
                throw ApplyError.recordChanged(table: tableName, id: id)
            }
            records.removeValue(forKey: id)
        case .update(let fields):
            guard var record = records[id] else {
                throw ApplyError.recordMissing(table: tableName, id: id, change: "update")
            }
            for (name, field) in fields {
                let found = record[name]
                guard found == field.old else {
                    throw ApplyError.conflict(table: tableName, id: id, field: name, expected: field.old, found: found)
                }
                record[name] = field.new
            }
            records[id] = record
        }
    }
}
