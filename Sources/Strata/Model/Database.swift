import PersistentCollections

/// The whole database as an immutable value: tables by name, and the basis
/// `t`, the number of the last transaction it contains (0 for an empty
/// database).
///
/// A `Database` never changes; applying a transaction gives a new value
/// that shares every untouched table and record with this one, so keeping
/// many past values costs only what differs between them. Reads are
/// synchronous and safe from any thread.
public struct Database: Hashable, Sendable {
    /// The tables: what every read comes from.
    var _tables: PersistentMap<Key, Table>
    /// The number of the last transaction applied.
    var _basis: Int64
    /// Set on the copy an observer's closure reads, to learn what it read
    /// (see ``Store/observe(buffering:_:)``); nil everywhere else, where
    /// each read pays one nil check.
    var _reads: ReadRecorder?

    /// The number of the last transaction applied. Every commit changes
    /// it: an observation that reads it runs after every commit.
    public internal(set) var basis: Int64 {
        get {
            _reads?.noteEverything()
            return _basis
        }
        set { _basis = newValue }
    }

    /// The tables by name: those with records or declared indexes (a table
    /// with neither is absent). Reading it
    /// inside an observation depends on the whole value.
    public internal(set) var tables: PersistentMap<Key, Table> {
        get {
            _reads?.noteEverything()
            return _tables
        }
        _modify { yield &_tables }
        set { _tables = newValue }
    }

    /// An empty database at basis 0. O(1).
    public init() {
        _tables = PersistentMap()
        _basis = 0
    }

    /// A database with the given tables and basis. Tables with no records
    /// and no indexes are dropped.
    public init(tables: PersistentMap<Key, Table>, basis: Int64) {
        self._tables = tables.filter { !$0.value.isVacant }
        self._basis = basis
    }

    /// The table `name`; an empty table when there is none. O(log16 t).
    public subscript(table name: Key) -> Table {
        _reads?.noteTable(name)
        return _tables[name] ?? Table()
    }

    /// The record `id` of table `table`, or nil. O(log16 n).
    public func record(_ id: RecordID, in table: Key) -> Record? {
        _reads?.noteRecord(id, in: table)
        return _tables[table]?[id]
    }

    /// The value at `path` in record `id` of `table`, or nil.
    public func value(at path: FieldPath, of id: RecordID, in table: Key) -> Value? {
        record(id, in: table)?[path: path]
    }

    /// The names of the tables with records or declared indexes, sorted by
    /// their UTF-8 bytes.
    public var tableNames: [Key] { tables.keys.sorted() }

    /// The number of records across all tables. O(t).
    public var recordCount: Int { tables.values.reduce(0) { $0 + $1.count } }

    /// Same basis and tables. O(1) for shared tables, O(differences) otherwise.
    /// Inside an observation, depends on the whole value.
    public static func == (lhs: Database, rhs: Database) -> Bool {
        lhs._reads?.noteEverything()
        rhs._reads?.noteEverything()
        return lhs._basis == rhs._basis && lhs._tables == rhs._tables
    }

    /// Hashes the basis and the tables.
    public func hash(into hasher: inout Hasher) {
        _reads?.noteEverything()
        hasher.combine(_basis)
        hasher.combine(_tables)
    }
}
