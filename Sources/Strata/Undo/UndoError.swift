/// A record a later edit changed since the action an undo or redo would
/// revert: reverting would overwrite that edit.
public struct UndoConflict: Hashable, Sendable, CustomStringConvertible {
    /// The record's table.
    public var table: Key
    /// The record's ID.
    public var id: RecordID
    /// The fields that differ from what the action left (empty: the record
    /// as a whole: created, deleted or recreated since).
    public var fields: [Key]

    /// A conflict on record `id` of `table`, in `fields` (empty: the whole record).
    public init(table: Key, id: RecordID, fields: [Key]) {
        self.table = table
        self.id = id
        self.fields = fields
    }

    /// "songs 7 (title, plays)", "songs 9 (the record)".
    public var description: String {
        "\(table) \(id) (\(fields.isEmpty ? "the record" : fields.map(\.description).joined(separator: ", ")))"
    }
}

/// Why an undo or a redo was refused. Nothing was committed.
public enum UndoError: Error, Sendable, CustomStringConvertible {
    /// Later edits changed what the action changed; they are named, and
    /// the store is unchanged. Revert those edits first, or revert the
    /// action's transactions by hand with ``Store/revert(transaction:message:)``.
    case conflict(action: String, records: [UndoConflict])
    /// The revert does not apply for another reason than a changed record:
    /// an index declaration changed since, or a unique index now holds a
    /// value the revert would restore.
    case cannotApply(action: String, ApplyError)
    /// An index declaration the action changed was changed again between
    /// its transactions (by a minor one the action skips).
    case indexChanged(action: String, table: Key, index: Key)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case let .conflict(action, records):
            let shown = records.prefix(10).map(\.description).joined(separator: ", ")
            let more = records.count > 10 ? " and \(records.count - 10) more" : ""
            return "cannot undo or redo “\(action)”: later edits changed \(shown)\(more)"
        case let .cannotApply(action, error):
            return "cannot undo or redo “\(action)”: \(error)"
        case let .indexChanged(action, table, index):
            return "cannot undo or redo “\(action)”: later edits changed index \(index) of \(table)"
        }
    }
}

extension UndoConflict {
    /// One conflict per record, its fields merged, sorted by table and ID.
    static func merged(_ conflicts: [UndoConflict]) -> [UndoConflict] {
        var byRecord: [RecordKey: Set<Key>] = [:]
        var whole: Set<RecordKey> = []
        for conflict in conflicts {
            let key = RecordKey(table: conflict.table, id: conflict.id)
            byRecord[key, default: []].formUnion(conflict.fields)
            if conflict.fields.isEmpty { whole.insert(key) }
        }
        return byRecord.map { key, fields in
            UndoConflict(table: key.table, id: key.id, fields: whole.contains(key) ? [] : fields.sorted())
        }.sorted { ($0.table, $0.id) < ($1.table, $1.id) }
    }

    private struct RecordKey: Hashable {
        var table: Key
        var id: RecordID
    }
}

extension Transaction {
    /// The records whose current state in `database` is not what this
    /// transaction expects to find (each with the fields that differ):
    /// every conflict at once, where applying stops at the first. O(changes).
    func conflicts(on database: Database) -> [UndoConflict] {
        var found: [UndoConflict] = []
        for (table, changes) in changes {
            let records = database._tables[table]
            for (id, change) in changes {
                let current = records?[id]
                switch change {
                case .insert:
                    if current != nil { found.append(UndoConflict(table: table, id: id, fields: [])) }
                case .delete(let expected):
                    guard let current else {
                        found.append(UndoConflict(table: table, id: id, fields: []))
                        continue
                    }
                    let names = Set(expected.names).union(current.names)
                    let differing = names.filter { expected[$0] != current[$0] }.sorted()
                    if !differing.isEmpty { found.append(UndoConflict(table: table, id: id, fields: differing)) }
                case .update(let fields):
                    guard let current else {
                        found.append(UndoConflict(table: table, id: id, fields: []))
                        continue
                    }
                    let differing = fields.filter { current[$0.key] != $0.value.old }.keys.sorted()
                    if !differing.isEmpty { found.append(UndoConflict(table: table, id: id, fields: differing)) }
                }
            }
        }
        return found.sorted { ($0.table, $0.id) < ($1.table, $1.id) }
    }
}
