import Foundation
import PersistentCollections

/// Why a transaction could not be applied to a database. Names the table and
/// record, and what was expected there.
public enum ApplyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An insert of a record that exists.
    case recordExists(table: Key, id: RecordID)
    /// An update or delete of a record that does not exist.
    case recordMissing(table: Key, id: RecordID, change: String)
    /// A delete found the record different from the one it removed: it was
    /// changed since the transaction was built.
    case recordChanged(table: Key, id: RecordID)
    /// A field's current value is not what the update replaced: it was
    /// changed since the transaction was built.
    case conflict(table: Key, id: RecordID, field: Key, expected: Value?, found: Value?)
    /// A value would nest more lists and maps than a store can read back
    /// (``Value/maximumNesting``): refused before anything is written.
    case nestingTooDeep(table: Key, id: RecordID, field: Key, depth: Int, limit: Int)
    /// A metadata value nests too deep, as in ``nestingTooDeep(table:id:field:depth:limit:)``.
    case metadataTooDeep(key: Key, depth: Int, limit: Int)
    /// An index declaration is not what the change replaced (nil: no such
    /// index): created twice, dropped when absent (both nil: a builder's
    /// drop of an index the table does not have), or changed since the
    /// transaction was built.
    case indexConflict(table: Key, index: Key, expected: IndexDefinition?, found: IndexDefinition?)
    /// Two records would share the values of a unique index: `key` holds
    /// those values, `existing` the record that has them, `new` the one the
    /// transaction gave them to.
    case uniqueViolation(table: Key, index: Key, key: [Value], existing: RecordID, new: RecordID)
    /// An index declaration that cannot be built (no fields).
    case invalidIndex(table: Key, index: Key, reason: String)

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
            // Values that differ but print alike are told apart; large ones are cut short.
            let (expected, found) = Value._contrasting(expected, found)
            return "conflict at \(table)/\(id).\(field): expected \(expected ?? "nothing"), found \(found ?? "nothing")"
        case let .nestingTooDeep(table, id, field, depth, limit):
            return "\(table)/\(id).\(field) nests \(depth) lists and maps; at most \(limit) can be stored"
        case let .metadataTooDeep(key, depth, limit):
            return "metadata \(key) nests \(depth) lists and maps; at most \(limit) can be stored"
        case let .indexConflict(table, index, nil, nil):
            return "cannot drop index \(table).\(index): the table has no index of that name"
        case let .indexConflict(table, index, expected, found):
            return "index conflict at \(table).\(index): expected \(expected.map(\.description) ?? "no index"), "
                + "found \(found.map(\.description) ?? "no index")"
        case let .uniqueViolation(table, index, key, existing, new):
            // Two IDs that differ only in Unicode normalization are shown exactly.
            let exact = "\(new)" == "\(existing)"
            let (newID, existingID) =
                exact ? (new.exactDescription, existing.exactDescription) : ("\(new)", "\(existing)")
            return
                "unique index \(table).\(index): \(newID) would have (\(key.map { $0._summary(exact: false, limit: 200) }.joined(separator: ", "))), "
                + "which \(existingID) has"
        case let .invalidIndex(table, index, reason):
            return "index \(table).\(index) cannot be declared: \(reason)"
        }
    }
}

/// The database after `transaction`: every change applied, basis set to the
/// transaction's `t`. Checks that each change finds what it replaced.
///
/// Within a table, the first change copies the shared path; later changes
/// mutate the now uniquely owned nodes in place. O(changes · log16 n).
///
/// - Throws: ``ApplyError`` naming the first table and record that does not
///   match; nothing is applied then.
public func apply(_ database: Database, _ transaction: Transaction) throws -> Database {
    // Whether it applies depends on the whole value.
    database._reads?.noteEverything()
    var result = database
    try result._apply(transaction)
    return result
}

extension Database {
    /// Applies `transaction` in place: what `apply(_:_:)` returns, without
    /// copying the paths this value owns alone (a replay that holds its
    /// value nowhere else changes it node by node). O(changes · log16 n).
    ///
    /// With `digest`, returns for each table the transaction changed the
    /// sum, wrapping, of `digest(id, after) - digest(id, before)` over its
    /// changed records (an absent record counts 0): what the table's sum
    /// of record digests moves by. A large table's digests are taken on
    /// the cores that apply its changes. Without `digest`, the result is empty.
    ///
    /// - Throws: ``ApplyError``, leaving the value partly changed: a caller
    ///   that goes on after an error must have kept a copy of the value
    ///   before (as `apply(_:_:)` does) or drop it.
    ///
    /// With `inverted`, it applies the inverse of `transaction` (see
    /// ``inverse(_:)``), building no inverse of a large table's changes.
    @discardableResult
    mutating func _apply(
        _ transaction: Transaction,
        inverted: Bool = false,
        digest: (@Sendable (RecordID, Record) -> UInt64)? = nil
    ) throws -> [(table: Key, sum: UInt64)] {
        // Index declarations are few: their inverse is built whole.
        let indexChanges =
            inverted ? transaction.indexChanges.mapValues { $0.mapValues(\.inverse) } : transaction.indexChanges
        // Declarations dropped or replaced leave before the records change
        // and new ones are built after, so only the final records are
        // checked against a new unique index.
        for (name, indexChanges) in indexChanges {
            var table = _tables.removeValue(forKey: name) ?? Table()
            try table.removeIndexes(for: indexChanges, tableName: name)
            _tables[name] = table
        }
        var sums: [(table: Key, sum: UInt64)] = []
        for (name, tableChanges) in transaction.changes {
            // Taken out, so that a table this value alone holds is changed in place.
            var table = _tables.removeValue(forKey: name) ?? Table()
            let concurrent = tableChanges.count >= Table.concurrentApplyMinimum
            if concurrent, table.indexes.isEmpty {
                let sum = try table.applyConcurrently(tableChanges, inverted: inverted, tableName: name, digest: digest)
                if digest != nil { sums.append((name, sum)) }
                if !table.isVacant { _tables[name] = table }
                continue
            }
            let changes = inverted ? tableChanges.mapValues(\.inverse) : tableChanges
            var sum: UInt64 = 0
            if concurrent {
                let updates = try table.apply(changes, tableName: name)
                try table.updateIndexes(updates, tableName: name)
                if let digest { for update in updates { sum &+= update.digestChange(digest) } }
            } else if table.indexes.isEmpty {
                for (id, change) in changes {
                    let update = try table.apply(change, to: id, tableName: name)
                    if let digest { sum &+= update.digestChange(digest) }
                }
            } else {
                var updates: [RecordUpdate] = []
                updates.reserveCapacity(changes.count)
                for (id, change) in changes { updates.append(try table.apply(change, to: id, tableName: name)) }
                try table.updateIndexes(updates, tableName: name)
                if let digest { for update in updates { sum &+= update.digestChange(digest) } }
            }
            if digest != nil { sums.append((name, sum)) }
            if !table.isVacant { _tables[name] = table }
        }
        for (name, indexChanges) in indexChanges {
            var table = _tables.removeValue(forKey: name) ?? Table()
            try table.addIndexes(for: indexChanges, tableName: name)
            if !table.isVacant { _tables[name] = table }
        }
        _basis = inverted ? transaction.basis : transaction.t
        return sums
    }
}

extension RecordUpdate {
    /// What this update moves a sum of `digest` over its table's records by
    /// (wrapping).
    @inline(__always)
    func digestChange(_ digest: (RecordID, Record) -> UInt64) -> UInt64 {
        (new.map { digest(id, $0) } ?? 0) &- (old.map { digest(id, $0) } ?? 0)
    }
}

extension Database {
    /// Applies one record's change in place: what `apply(_:_:)` does with a
    /// transaction of that one change, without copying the paths this
    /// value owns alone. On an error the value is as it was (a refused
    /// unique key undoes the record and the indexes already updated).
    /// O(log n) per index.
    mutating func _apply(_ change: Change, to id: RecordID, table name: Key) throws {
        // Whether the change applies depends on the whole value (a unique
        // key on other records), as it did through `apply`'s read of `tables`.
        _reads?.noteEverything()
        var table = _tables.removeValue(forKey: name) ?? Table()
        defer { if !table.isVacant { _tables[name] = table } }
        let update = try table.apply(change, to: id, tableName: name)
        var position = 0
        do {
            while position < table.indexes.count {
                try table.indexes[position].update([update], table: name)
                position += 1
            }
        } catch {
            // The failing index was updated before its check; every index up
            // to it takes the reverse update, then the record its inverse.
            let reverse = RecordUpdate(
                id: id,
                old: update.new,
                new: update.old,
                fields: update.fields?.mapValues { FieldChange(old: $0.new, new: $0.old) }
            )
            do {
                for undone in 0...position { try table.indexes[undone].update([reverse], table: name) }
                try table.apply(change.inverse, to: id, tableName: name)
            } catch let undoError {
                // The value before was valid, so returning to it cannot fail.
                preconditionFailure("undoing a refused change of \(name) \(id) failed: \(undoError)")
            }
            throw error
        }
    }
}

extension Table {
    /// Applies one record's change; returns the record before and after.
    @discardableResult
    mutating func apply(_ change: Change, to id: RecordID, tableName: Key) throws -> RecordUpdate {
        switch change {
        case .insert(let record):
            // One descent: insert, and put the old record back if there was one.
            if let existing = records.updateValue(record, forKey: id) {
                records[id] = existing
                throw ApplyError.recordExists(table: tableName, id: id)
            }
            return RecordUpdate(id: id, old: nil, new: record)
        case .delete, .update:
            return try Self.apply(change, to: &records[id], id: id, tableName: tableName)
        }
    }

    /// Applies one record's change to `stored`, the record with that ID
    /// (nil: absent); returns the record before and after. On an error
    /// `stored` is unchanged.
    ///
    /// With `reversed`, applies the change's ``Change/inverse`` without
    /// building it (an update's inverse is a new dictionary of its
    /// fields); the update returned then names no fields, so that an index
    /// reads the record whole.
    @inline(__always)
    static func apply(
        _ change: Change,
        reversed: Bool = false,
        to stored: inout Record?,
        id: RecordID,
        tableName: Key
    ) throws -> RecordUpdate {
        switch (change, reversed) {
        case (.insert(let record), false), (.delete(let record), true):
            guard stored == nil else { throw ApplyError.recordExists(table: tableName, id: id) }
            stored = record
            return RecordUpdate(id: id, old: nil, new: record)
        case (.delete(let expected), false), (.insert(let expected), true):
            guard let current = stored else {
                throw ApplyError.recordMissing(table: tableName, id: id, change: "delete")
            }
            guard current == expected else {
                throw ApplyError.recordChanged(table: tableName, id: id)
            }
            stored = nil
            return RecordUpdate(id: id, old: current, new: nil)
        case (.update(let fields), _):
            guard let record = stored else {
                throw ApplyError.recordMissing(table: tableName, id: id, change: "update")
            }
            let (expected, new): (FieldChange.Side, FieldChange.Side) = reversed ? (\.new, \.old) : (\.old, \.new)
            if let name = Change.firstDiffering(fields, from: record, side: expected) {
                throw ApplyError.conflict(
                    table: tableName,
                    id: id,
                    field: name,
                    expected: fields[name].flatMap(expected),
                    found: record[name]
                )
            }
            let updated = Change.applying(fields, to: record, side: new)
            stored = updated
            return RecordUpdate(id: id, old: record, new: updated, fields: reversed ? nil : fields)
        }
    }

    /// Changes at or above which a table's records change on every core
    /// (``PersistentMap/update(with:maximumParts:_:)``).
    static let concurrentApplyMinimum = 1_024

    /// Applies a table's changes on every core; returns each record's
    /// update, in the changes' order. O(k log16 n) work for k changes.
    /// - Throws: the ``ApplyError`` of the first change, in that order,
    ///   that does not apply; the records are then partly changed.
    mutating func apply(_ changes: PersistentMap<RecordID, Change>, tableName: Key) throws -> [RecordUpdate] {
        let parts = 2 * ProcessInfo.processInfo.activeProcessorCount
        return try records.update(with: changes, maximumParts: parts) { id, change, stored in
            try Self.apply(change, to: &stored, id: id, tableName: tableName)
        }
    }

    /// ``apply(_:tableName:)`` without the updates, for a table without
    /// indexes: a large run (an as-of hundreds of thousands of changes
    /// away, a verify's replay of an import) would otherwise build and free
    /// a record update per change. With `digest`, returns what the table's
    /// sum of `digest` over its records moves by (taken on the cores that
    /// apply the changes); else 0.
    ///
    /// With `inverted`, each change is applied reversed (its
    /// ``Change/inverse``), without building the inverse.
    mutating func applyConcurrently(
        _ changes: PersistentMap<RecordID, Change>,
        inverted: Bool,
        tableName: Key,
        digest: (@Sendable (RecordID, Record) -> UInt64)?
    ) throws -> UInt64 {
        let parts = 2 * ProcessInfo.processInfo.activeProcessorCount
        guard let digest else {
            _ = try records.update(with: changes, maximumParts: parts) { id, change, stored in
                _ = try Self.apply(change, reversed: inverted, to: &stored, id: id, tableName: tableName)
            }
            return 0
        }
        let moves = try records.update(with: changes, maximumParts: parts) { id, change, stored in
            let before = stored.map { digest(id, $0) } ?? 0
            _ = try Self.apply(change, reversed: inverted, to: &stored, id: id, tableName: tableName)
            return (stored.map { digest(id, $0) } ?? 0) &- before
        }
        return moves.reduce(0, &+)
    }
}

extension Change {
    /// Refuses a change whose new values nest deeper than a store can read
    /// back. Checked where a commit is prepared (the builder checks each new
    /// record whole, before diffing it), not when the history is replayed.
    /// O(the new values' size).
    /// - Throws: ``ApplyError/nestingTooDeep(table:id:field:depth:limit:)``.
    func checkNesting(table: Key, id: RecordID) throws {
        let limit = Value.maximumNesting
        switch self {
        case .insert(let record):
            try record.checkNesting(table: table, id: id)
        case .delete:
            return
        case .update(let fields):
            for (name, field) in fields {
                guard let new = field.new else { continue }
                let depth = new.nestingDepth
                if depth > limit {
                    throw ApplyError.nestingTooDeep(table: table, id: id, field: name, depth: depth, limit: limit)
                }
            }
        }
    }
}

extension Record {
    /// Refuses a record whose fields nest deeper than a store can read back,
    /// before anything decodes its values (recursion over a value nested
    /// thousands of levels would overflow the stack). O(size).
    /// - Throws: ``ApplyError/nestingTooDeep(table:id:field:depth:limit:)``.
    func checkNesting(table: Key, id: RecordID) throws {
        let limit = Value.maximumNesting
        if let (field, depth) = _fieldNested(deeperThan: limit) {
            throw ApplyError.nestingTooDeep(table: table, id: id, field: field, depth: depth, limit: limit)
        }
    }
}

extension Transaction {
    /// Refuses a transaction whose changes or metadata nest deeper than a
    /// store can read back (see ``Change/checkNesting(table:id:)``).
    func checkNesting() throws {
        for (table, changes) in self.changes {
            for (id, change) in changes { try change.checkNesting(table: table, id: id) }
        }
        try checkMetadataNesting()
    }

    /// The metadata part of ``checkNesting()``.
    /// - Throws: ``ApplyError/metadataTooDeep(key:depth:limit:)``.
    func checkMetadataNesting() throws {
        for (key, value) in metadata {
            let depth = value.nestingDepth
            if depth > Value.maximumNesting {
                throw ApplyError.metadataTooDeep(key: key, depth: depth, limit: Value.maximumNesting)
            }
        }
    }
}
