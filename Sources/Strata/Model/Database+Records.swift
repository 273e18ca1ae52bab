import PersistentCollections

extension Database {
    /// A database holding `records`, by table name and record ID, at
    /// `basis` (for fixtures, imports and tests; a store's values come from
    /// its transactions). Empty tables are dropped. O(n): each table's map
    /// is built in bulk.
    ///
    ///     let library = Database(["songs": [7: ["title": "Blue River"]]])
    public init(_ records: [Key: [RecordID: Record]], basis: Int64 = 0) {
        var tables: [(Key, Table)] = []
        tables.reserveCapacity(records.count)
        for (name, byID) in records where !byID.isEmpty {
            tables.append(
                (name, Table(records: PersistentMap(uniqueKeysWithValues: byID.lazy.map { ($0.key, $0.value) })))
            )
        }
        self.init(tables: PersistentMap(uniqueKeysWithValues: tables), basis: basis)
    }
}
