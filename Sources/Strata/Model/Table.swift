import PersistentCollections

/// The records of one table, by ID, and its declared indexes: persistent
/// trees, so that every version of a table shares all but the changed paths
/// with its neighbours.
public struct Table: Sendable {
    /// The records by ID.
    public internal(set) var records: PersistentMap<RecordID, Record>
    /// The declared indexes, sorted by name (a table has a few).
    public internal(set) var indexes: [TableIndex]

    /// An empty table. O(1).
    public init() {
        records = PersistentMap()
        indexes = []
    }

    /// A table holding `records`, without indexes. O(1).
    public init(records: PersistentMap<RecordID, Record>) {
        self.records = records
        indexes = []
    }

    /// The number of records. O(1).
    public var count: Int { records.count }

    /// Whether the table has no records. O(1).
    public var isEmpty: Bool { records.isEmpty }

    /// Whether a database keeps no trace of the table: no records and no
    /// declared index.
    var isVacant: Bool { records.isEmpty && indexes.isEmpty }

    /// The record with `id`, or nil. O(log16 n).
    public subscript(id: RecordID) -> Record? { records[id] }

    /// Whether a record with `id` exists. O(log16 n).
    public func contains(_ id: RecordID) -> Bool { records.contains(id) }

    /// The IDs of every record, in the map's iteration order.
    public var ids: PersistentMap<RecordID, Record>.Keys { records.keys }
}

extension Table: Sequence {
    /// Iterates `(key: id, value: record)` pairs in the map's order.
    public func makeIterator() -> PersistentMap<RecordID, Record>.Iterator { records.makeIterator() }
}

extension Table: Hashable {
    /// Same records and index declarations (the entries follow from them).
    /// O(1) for shared maps, O(differences) otherwise.
    public static func == (lhs: Table, rhs: Table) -> Bool {
        lhs.records == rhs.records && lhs.indexes.map(\.definition) == rhs.indexes.map(\.definition)
    }

    /// Hashes the records and the index declarations.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(records)
        for index in indexes { hasher.combine(index.definition) }
    }
}
