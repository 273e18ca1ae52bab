import Foundation
import PersistentCollections

/// Builds a transaction against a database value: each edit is checked and
/// resolved at once (so errors name the edit that caused them), and reads
/// through ``database`` see the edits made so far.
///
///     var builder = TransactionBuilder(on: store.current)
///     try builder.insert(["title": "Blue River"], id: 7, into: "songs")
///     try builder.update(7, in: "songs", [.set("plays", 1)])
///     let transaction = builder.transaction(t: 43, message: "Import")
///
/// Several edits of one record become one ``Change``.
///
/// A unique index is checked at each edit, as SQL checks an immediate
/// constraint: two records cannot swap their values of a unique field by
/// two updates, since the first would repeat the second's value. Swap them
/// through a value neither holds, or in one call of
/// ``upsert(contentsOf:into:)``, which checks the batch as a whole.
public struct TransactionBuilder: Sendable {
    /// The database the transaction applies to.
    public let base: Database
    /// `base` with the edits so far applied.
    public private(set) var database: Database
    /// The resolved changes so far.
    public private(set) var changes: PersistentMap<Key, PersistentMap<RecordID, Change>>
    /// The index declarations created, dropped or replaced so far.
    public private(set) var indexChanges: [Key: [Key: IndexChange]] = [:]

    /// A builder for a transaction on `base`.
    public init(on base: Database) {
        self.base = base
        self.database = base
        self.changes = PersistentMap()
    }

    /// Inserts a new record. O(log16 n).
    ///
    /// - Throws: ``ApplyError/recordExists(table:id:)`` when `id` exists.
    public mutating func insert(_ record: Record, id: RecordID, into table: Key) throws {
        try record.checkNesting(table: table, id: id)
        try add(.insert(record), id: id, table: table)
    }

    /// Inserts the record, or replaces the existing one with `id`. O(log16 n + fields).
    public mutating func upsert(_ record: Record, id: RecordID, into table: Key) throws {
        try record.checkNesting(table: table, id: id)
        if let existing = database.record(id, in: table) {
            if let change = Change.between(existing, record) { try add(change, id: id, table: table) }
        } else {
            try add(.insert(record), id: id, table: table)
        }
    }

    /// Inserts or replaces many records of one table, applied to
    /// ``database`` in one step (one pass over the table's trie for the
    /// whole batch, where one ``upsert(_:id:into:)`` a record copies a path
    /// each): what an import uses. A record given twice ends as the last
    /// one given. O(k log16 n + fields) for k records; on an error (an
    /// index's uniqueness, a value nested too deep) nothing of the batch
    /// is applied.
    public mutating func upsert(contentsOf records: some Sequence<(id: RecordID, record: Record)>, into table: Key)
        throws
    {
        let given = Array(records)
        // Looked up together: the reads of a large table's trie overlap
        // (a third of an import's commit waited on them one by one).
        let existing = database[table: table].records
        let stored = given.count < 64 ? given.map { existing[$0.id] } : existing.values(forKeys: given.lazy.map(\.id))
        var made: [Change?] = []
        made.reserveCapacity(given.count)
        for ((id, record), existing) in zip(given, stored) {
            try record.checkNesting(table: table, id: id)
            made.append(existing.map { Change.between($0, record) } ?? .insert(record))
        }
        let built = Self.changeMap(given.lazy.map(\.id), made)
        guard !built.isEmpty else { return }
        let next = try apply(
            database,
            Transaction(t: database.basis, basis: database.basis, changes: [table: built])
        )
        var tableChanges = changes[table] ?? PersistentMap()
        if tableChanges.isEmpty {
            tableChanges = built
        } else {
            for (id, change) in built { tableChanges[id] = try tableChanges[id].map { try $0.then(change) } ?? change }
        }
        changes[table] = tableChanges.isEmpty ? nil : tableChanges
        database = next
    }

    /// The map of `changes`, the change (nil: none) each record of a batch
    /// makes, by the records' `ids`: the last record given for an ID wins,
    /// and makes no change when it equals the stored one. Built at once,
    /// each node at its final size, when every record changes something and
    /// no ID repeats (a repeat refuses the build); one change at a time
    /// otherwise (an entry an unchanged record drops could hide a repeat).
    /// O(k log16 k).
    private static func changeMap(
        _ ids: some Collection<RecordID>,
        _ changes: [Change?]
    ) -> PersistentMap<RecordID, Change> {
        if changes.allSatisfy({ $0 != nil }),
            let built = PersistentMap(checkingUniqueKeysWithValues: zip(ids, changes.lazy.map { $0.unsafelyUnwrapped }))
        {
            return built
        }
        var batch = PersistentMap<RecordID, Change>.Builder()
        for (id, change) in zip(ids, changes) { batch[id] = change }
        return batch.build()
    }

    /// Applies `patch` to record `id`. O(log16 n + edits).
    ///
    /// - Throws: ``ApplyError/recordMissing(table:id:change:)`` when there is
    ///   no such record; `FieldPathError` when a set goes through a non-map.
    public mutating func update(_ id: RecordID, in table: Key, _ patch: Patch) throws {
        guard let existing = database.record(id, in: table) else {
            throw ApplyError.recordMissing(table: table, id: id, change: "update")
        }
        let updated = try patch.applied(to: existing)
        try updated.checkNesting(table: table, id: id)
        if let change = Change.between(existing, updated) {
            try add(change, id: id, table: table)
        }
    }

    /// Deletes record `id`. O(log16 n).
    ///
    /// - Throws: ``ApplyError/recordMissing(table:id:change:)`` when there is
    ///   no such record.
    public mutating func delete(_ id: RecordID, from table: Key) throws {
        guard let existing = database.record(id, in: table) else {
            throw ApplyError.recordMissing(table: table, id: id, change: "delete")
        }
        try add(.delete(existing), id: id, table: table)
    }

    /// Declares index `name` on `table` over `fields` (their values, then the
    /// record ID, order the entries) and builds it from the table's records:
    /// O(n log n). Queries on this and every later value can use it.
    ///
    ///     try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
    ///
    /// Values are equal as ``Value``'s `==` says, exactly: a `unique` index
    /// takes `.double(0.0)` beside `.double(-0.0)`, and `"é"` precomposed
    /// beside `"e\u{301}"`, but refuses a second NaN of the same bits. Store
    /// one form (normalize before writing) where such values must clash.
    ///
    /// - Throws: ``ApplyError/indexConflict(table:index:expected:found:)``
    ///   when the table has an index of that name;
    ///   ``ApplyError/uniqueViolation(table:index:key:existing:new:)`` when
    ///   `unique` and two records share the values; ``ApplyError/invalidIndex(table:index:reason:)``
    ///   for no fields, or a field path with an empty part (`""`, `"a..b"`).
    public mutating func createIndex(_ name: Key, on table: Key, fields: [FieldPath], unique: Bool = false) throws {
        guard !fields.isEmpty else {
            throw ApplyError.invalidIndex(table: table, index: name, reason: "an index needs at least one field")
        }
        let current = database[table: table].index(named: name)?.definition
        let definition = IndexDefinition(name: name, fields: fields, isUnique: unique)
        if let current {
            throw ApplyError.indexConflict(table: table, index: name, expected: nil, found: current)
        }
        try add(IndexChange(old: nil, new: definition), index: name, table: table)
    }

    /// Drops index `name` of `table`. O(1) beyond the copy of the table's
    /// index list; the entries are shared with earlier values.
    ///
    /// - Throws: ``ApplyError/indexConflict(table:index:expected:found:)``
    ///   when there is no such index.
    public mutating func dropIndex(_ name: Key, on table: Key) throws {
        guard let current = database[table: table].index(named: name)?.definition else {
            throw ApplyError.indexConflict(table: table, index: name, expected: nil, found: nil)
        }
        try add(IndexChange(old: current, new: nil), index: name, table: table)
    }

    /// Applies an index declaration change to ``database``, then folds it
    /// into that index's change so far.
    private mutating func add(_ change: IndexChange, index: Key, table: Key) throws {
        let single = Transaction(t: database.basis, basis: database.basis, indexChanges: [table: [index: change]])
        let next = try apply(database, single)
        var tableChanges = indexChanges[table] ?? [:]
        tableChanges[index] = try tableChanges[index].map { try $0.then(change) } ?? change
        indexChanges[table] = tableChanges.isEmpty ? nil : tableChanges
        database = next
    }

    /// Applies `change` to ``database`` (which checks it), then folds it
    /// into the record's change so far; on an error neither is touched.
    ///
    /// Both are changed in place: unless the caller keeps a copy of them,
    /// the builder owns its value and its changes alone after its first
    /// edit, so an edit copies no path (a copied path per edit made
    /// inserting one record at a time an order of magnitude slower than a
    /// batch).
    /// Its new record's depth is checked by the caller, before the change
    /// is made (a diff decodes values, which must not nest too deep).
    private mutating func add(_ change: Change, id: RecordID, table: Key) throws {
        var tableChanges = changes.removeValue(forKey: table) ?? PersistentMap()
        defer { if !tableChanges.isEmpty { changes[table] = tableChanges } }
        let folded: Change?
        do {
            folded = try tableChanges[id].map { try $0.then(change) } ?? change
        } catch {
            // A change that cannot follow the record's earlier one does not
            // apply either; report what applying says, as before.
            let single = Transaction(t: database.basis, basis: database.basis, changes: [table: [id: change]])
            _ = try apply(database, single)
            throw error
        }
        try database._apply(change, to: id, table: table)
        tableChanges[id] = folded
    }

    /// The transaction of the edits so far, numbered `t` (by default the
    /// base's basis + 1). Applying it to `base` gives ``database`` with its
    /// basis set to `t`.
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
            t: t ?? base.basis + 1,
            basis: base.basis,
            timestamp: timestamp,
            message: message,
            significance: significance,
            metadata: metadata,
            changes: changes,
            indexChanges: indexChanges
        )
    }
}
