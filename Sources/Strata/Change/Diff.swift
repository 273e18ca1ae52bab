import Foundation
import PersistentCollections

/// What differs between two database values, per table and record, and the
/// changes that turn the older into the newer.
public struct DatabaseDiff: Hashable, Sendable {
    /// The records that differ in one table.
    public struct TableDiff: Hashable, Sendable {
        /// Records only in the newer value, sorted.
        public var inserted: [RecordID]
        /// Records only in the older value, sorted.
        public var deleted: [RecordID]
        /// Records in both whose fields differ, with the names of the fields
        /// that differ (sorted by their UTF-8 bytes).
        public var changed: [RecordID: [Key]]

        /// A table diff from its three parts.
        public init(inserted: [RecordID] = [], deleted: [RecordID] = [], changed: [RecordID: [Key]] = [:]) {
            self.inserted = inserted
            self.deleted = deleted
            self.changed = changed
        }

        /// Whether nothing differs in this table.
        public var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && changed.isEmpty }
    }

    /// The differing tables by name; tables that are equal are absent.
    public var tables: [Key: TableDiff]
    /// The changes that turn the older value into the newer, per table and record.
    public var changes: PersistentMap<Key, PersistentMap<RecordID, Change>>
    /// The index declarations that differ, per table and index name.
    public var indexChanges: [Key: [Key: IndexChange]]
    /// The older value's basis.
    public var basis: Int64

    /// Whether the two values hold the same data and declare the same indexes.
    public var isEmpty: Bool { tables.isEmpty && indexChanges.isEmpty }

    /// A transaction applying these changes to the older value (a revert to
    /// a past value is this transaction, from the current value to the past one).
    public func transaction(
        t: Int64? = nil,
        id: UUID = UUID(),
        timestamp: Date = Date(),
        message: String = "",
        significance: Significance = .normal,
        metadata: [Key: Value] = [:]
    ) -> Transaction {
        Transaction(
            id: id,
            t: t ?? basis + 1,
            basis: basis,
            timestamp: timestamp,
            message: message,
            significance: significance,
            metadata: metadata,
            changes: changes,
            indexChanges: indexChanges
        )
    }
}

/// What differs from `old` to `new`. Tables and subtrees the two values share
/// are skipped by identity, so the time is proportional to what differs, not
/// to the size of the database (`PersistentMap.difference`).
public func diff(from old: Database, to new: Database) -> DatabaseDiff {
    var tables: [Key: DatabaseDiff.TableDiff] = [:]
    var changes = PersistentMap<Key, PersistentMap<RecordID, Change>>()
    var indexChanges: [Key: [Key: IndexChange]] = [:]
    let tableDifference = new.tables.difference(from: old.tables)
    for name in tableDifference.inserted + tableDifference.removed + tableDifference.changed {
        let before = old.tables[name]?.records ?? PersistentMap()
        let after = new.tables[name]?.records ?? PersistentMap()
        let declarations = IndexChange.between(
            old.tables[name]?.indexDefinitions ?? [],
            new.tables[name]?.indexDefinitions ?? []
        )
        if !declarations.isEmpty { indexChanges[name] = declarations }
        let records = after.difference(from: before)
        var tableDiff = DatabaseDiff.TableDiff(
            inserted: records.inserted.sorted(),
            deleted: records.removed.sorted(),
            changed: [:]
        )
        var tableChanges = PersistentMap<RecordID, Change>.Builder()
        for id in records.inserted { tableChanges[id] = .insert(after[id]!) }
        for id in records.removed { tableChanges[id] = .delete(before[id]!) }
        for id in records.changed {
            guard case .update(let fields)? = Change.between(before[id]!, after[id]!) else { continue }
            tableDiff.changed[id] = fields.keys.sorted()
            tableChanges[id] = .update(fields)
        }
        if !tableDiff.isEmpty {
            tables[name] = tableDiff
            changes[name] = tableChanges.build()
        }
    }
    return DatabaseDiff(tables: tables, changes: changes, indexChanges: indexChanges, basis: old.basis)
}
