import PersistentCollections

/// A declared index with its entries, as of one database value: a
/// persistent B+tree of index entries (the indexed values, then the record
/// ID), sharing every untouched node with the index of the neighbouring
/// values.
public struct TableIndex: Sendable {
    /// What the index covers. O(1).
    public var definition: IndexDefinition { _definition.value }
    /// The definition, boxed: a table's array of indexes is copied whenever
    /// an edit moves an entry of one of them, and kept with the version it
    /// belongs to; a `TableIndex` of 24 bytes instead of 48 keeps three
    /// indexes' array in a 112-byte allocation instead of 192.
    let _definition: _IndexDefinitionBox
    /// One entry per record of the table.
    var entries: PersistentSortedSet<IndexEntry>

    /// An index of `definition` over `records`: O(n log n) (the entries are
    /// computed, sorted and built bottom-up).
    init(_ definition: IndexDefinition, records: PersistentMap<RecordID, Record>, table: Key) throws {
        self._definition = _IndexDefinitionBox(definition)
        var all: [IndexEntry] = []
        all.reserveCapacity(records.count)
        var encoder = IndexEntryEncoder([definition])
        for (id, record) in records {
            encoder.load(record)
            all.append(IndexEntry(encoder.encode(record, 0, id: id)))
        }
        all.sort()
        entries = PersistentSortedSet(sortedElements: all)
        if definition.isUnique {
            for i in all.indices.dropFirst() {
                try definition.checkUnique(all[i - 1], all[i], table: table)
            }
        }
    }

    /// An index of `definition` with `entries`, ascending and one per
    /// record (a snapshot's stored entries). O(n).
    init(_ definition: IndexDefinition, sortedEntries entries: some Sequence<IndexEntry>) {
        self._definition = _IndexDefinitionBox(definition)
        self.entries = PersistentSortedSet(sortedElements: entries)
    }

    /// An index of `definition` whose entries are the runs of `parts` in
    /// order, each run's entries below the next run's (a snapshot's chunks,
    /// each decoded into a tree of its own). O(n / 30).
    init(_ definition: IndexDefinition, concatenating parts: [PersistentSortedSet<IndexEntry>]) {
        self._definition = _IndexDefinitionBox(definition)
        self.entries = PersistentSortedSet(concatenating: parts)
    }

    /// The number of entries (the table's record count). O(1).
    public var count: Int { entries.count }

    /// Replaces the entries of the changed records (each with its record
    /// before and after; nil: absent): every removal first, then every
    /// insertion, so that a transaction may move a unique value from one
    /// record to another. A record whose indexed values did not change costs
    /// no tree operation. O(changes · log n).
    /// `checked`: the caller found that every change may move an entry.
    /// - Throws: ``ApplyError/uniqueViolation(table:index:key:existing:new:)``.
    mutating func update(_ changed: [RecordUpdate], table: Key, checked: Bool = false) throws {
        var insertions: [IndexEntry] = []
        for change in changed where checked || definition.mayMove(after: change.fields) {
            let old = change.old.map { definition.entry(for: $0, id: change.id) }
            let new = change.new.map { definition.entry(for: $0, id: change.id) }
            if old == new { continue }
            if let old { entries.remove(old) }
            if let new { insertions.append(new) }
        }
        for entry in insertions { entries.insert(entry) }
        guard definition.isUnique else { return }
        for entry in insertions { try checkUnique(entry, table: table) }
    }

    /// Throws when another entry has `entry`'s values (none of them null).
    func checkUnique(_ entry: IndexEntry, table: Key) throws {
        let fieldCount = definition.fields.count
        let values = entry.values(fieldCount)
        guard !values.contains(.null) else { return }
        let prefix = IndexBound(values: values)
        for other in entries.elements(in: prefix.lower..<prefix.upperAfterPrefix) where other != entry {
            throw ApplyError.uniqueViolation(
                table: table,
                index: definition.name,
                key: values,
                existing: other.recordID(after: fieldCount),
                new: entry.recordID(after: fieldCount)
            )
        }
    }
}

extension TableIndex: Hashable {
    /// Same declaration and entries (shared trees compare in O(1)).
    public static func == (lhs: TableIndex, rhs: TableIndex) -> Bool {
        lhs.definition == rhs.definition && lhs.entries == rhs.entries
    }

    /// Hashes the declaration: entries follow from it and the records.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(definition)
    }
}

extension IndexDefinition {
    /// Whether a change of a record may move its entry: an insert or a
    /// delete (`changedFields` nil) does, and an update of a field a path
    /// of this index starts at; an update of other fields leaves it alone.
    /// O(fields).
    func mayMove(after changedFields: [Key: FieldChange]?) -> Bool {
        guard let changedFields else { return true }
        for path in fields where changedFields[path.field] != nil { return true }
        return false
    }

    /// The entry of record `id`: its values at ``fields`` (null where
    /// missing), then the ID.
    func entry(for record: Record, id: RecordID) -> IndexEntry {
        var writer = IndexEntryWriter()
        for path in fields { writer.value(record[path: path]) }
        writer.recordID(id)
        return IndexEntry(writer.bytes)
    }

    /// Throws when two neighbouring entries of a sorted run share their
    /// values (none null).
    func checkUnique(_ a: IndexEntry, _ b: IndexEntry, table: Key) throws {
        let values = a.values(fields.count)
        guard !values.contains(.null), values == b.values(fields.count) else { return }
        throw ApplyError.uniqueViolation(
            table: table,
            index: name,
            key: values,
            existing: a.recordID(after: fields.count),
            new: b.recordID(after: fields.count)
        )
    }
}

/// A record as a transaction found it and left it (nil: absent).
struct RecordUpdate {
    var id: RecordID
    var old: Record?
    var new: Record?
    /// For an update, the fields it changed; nil for an insert or delete.
    var fields: [Key: FieldChange]? = nil
}

/// Entry bounds for a prefix of values: every entry whose first values are
/// `values` lies in `lower..<upperAfterPrefix`.
struct IndexBound {
    /// The encoded values.
    let prefix: [UInt8]

    init(values: [Value]) {
        var writer = IndexEntryWriter()
        for value in values { writer.value(value) }
        prefix = writer.bytes
    }

    init(prefix: [UInt8]) { self.prefix = prefix }

    /// The smallest entry that starts with the prefix (the prefix itself).
    var lower: IndexEntry { IndexEntry(prefix) }

    /// Above every entry that starts with the prefix: no encoding begins
    /// with 0xFF.
    var upperAfterPrefix: IndexEntry { IndexEntry(prefix + [0xFF]) }
}

/// An index definition shared by every version of its index.
final class _IndexDefinitionBox: Sendable {
    let value: IndexDefinition

    init(_ value: IndexDefinition) { self.value = value }
}
