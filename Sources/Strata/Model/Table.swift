import PersistentCollections

/// The records of one table, by ID: a persistent hash map, so that every
/// version of a table shares all but the changed paths with its neighbours.
public struct Table: Hashable, Sendable {
    /// The records by ID.
    public internal(set) var records: PersistentMap<RecordID, Record>

    /// An empty table. O(1).
    public init() {
        records = PersistentMap()
    }

    /// A table holding `records`. O(1).
    public init(records: PersistentMap<RecordID, Record>) {
        self.records = records
    }

    /// The number of records. O(1).
    public var count: Int { records.count }

    /// Whether the table has no records. O(1).
    public var isEmpty: Bool { records.isEmpty }

    /// The record with `id`, or nil. O(log32 n).
    public subscript(id: RecordID) -> Record? { records[id] }

    /// Whether a record with `id` exists. O(log32 n).
    public func contains(_ id: RecordID) -> Bool { records.contains(id) }

    /// The IDs of every record, in the map's iteration order.
    public var ids: PersistentMap<RecordID, Record>.Keys { records.keys }
}

extension Table: Sequence {
    /// Iterates `(key: id, value: record)` pairs in the map's order.
    public func makeIterator() -> PersistentMap<RecordID, Record>.Iterator { records.makeIterator() }
}
