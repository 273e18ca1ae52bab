import Foundation
import PersistentCollections
import Strata

/// Transactions and changes as `--json` prints them.
enum TransactionJSON {
    static func summary(_ transaction: Transaction) -> [(String, JSON)] {
        let counts = Text.changeCounts(transaction)
        return [
            ("t", .int(transaction.t)),
            ("id", .string(transaction.id.uuidString)),
            ("time", JSON.time(transaction.timestamp)),
            ("significance", .string(Text.significance(transaction.significance))),
            ("message", .string(transaction.message)),
            ("inserts", .int(counts.inserts)),
            ("updates", .int(counts.updates)),
            ("deletes", .int(counts.deletes)),
        ]
    }

    static func metadata(_ metadata: [Key: Value]) -> JSON {
        .object(metadata.sorted { $0.key < $1.key }.map { ($0.key.string, .value($0.value)) })
    }

    /// Every change, tables and records in order.
    static func changes(
        _ changes: PersistentMap<Key, PersistentMap<RecordID, Change>>,
        indexChanges: [Key: [Key: IndexChange]]
    ) -> [(String, JSON)] {
        var records: [JSON] = []
        for table in changes.keys.sorted() {
            let tableChanges = changes[table]!
            for id in tableChanges.keys.sorted() {
                records.append(change(tableChanges[id]!, id: id, table: table))
            }
        }
        var indexes: [JSON] = []
        for table in indexChanges.keys.sorted() {
            for (name, change) in indexChanges[table]!.sorted(by: { $0.key < $1.key }) {
                indexes.append(
                    .object([
                        ("table", .string(table.string)),
                        ("index", .string(name.string)),
                        ("before", change.old.map { .string($0.description) } ?? .null),
                        ("after", change.new.map { .string($0.description) } ?? .null),
                    ])
                )
            }
        }
        return [("changes", .array(records)), ("indexChanges", .array(indexes))]
    }

    static func change(_ change: Change, id: RecordID, table: Key) -> JSON {
        var members: [(String, JSON)] = [("table", .string(table.string)), ("id", recordID(id))]
        switch change {
        case .insert(let record):
            members += [("kind", .string("insert")), ("after", Self.record(record))]
        case .delete(let record):
            members += [("kind", .string("delete")), ("before", Self.record(record))]
        case .update(let fields):
            members.append(("kind", .string("update")))
            members.append(
                (
                    "fields",
                    .object(
                        fields.sorted { $0.key < $1.key }.map { name, field in
                            (
                                name.string,
                                .object([
                                    ("before", field.old.map(JSON.value) ?? .null),
                                    ("after", field.new.map(JSON.value) ?? .null),
                                    ("absentBefore", .bool(field.old == nil)),
                                    ("absentAfter", .bool(field.new == nil)),
                                ])
                            )
                        }
                    )
                )
            )
        }
        return .object(members)
    }

    static func record(_ record: Record) -> JSON {
        .object(record.map { ($0.name.string, .value($0.value)) })
    }

    static func recordID(_ id: RecordID) -> JSON {
        var writer = JSONWriter(capacity: 40)
        writer.recordID(id)
        return .encoded(writer.bytes)
    }
}

/// Transactions and changes as text for people.
enum TransactionText {
    /// The lines of a change of record `id` of `table`, field by field.
    static func change(_ change: Change, id: RecordID, table: Key, console: Console) -> [String] {
        let name = "\(Text.safe(table.string))/\(Text.recordID(id))"
        switch change {
        case .insert(let record):
            return [console.styled("+ \(name)", .green)] + fields(record, marker: "+")
        case .delete(let record):
            return [console.styled("- \(name)", .red)] + fields(record, marker: "-")
        case .update(let fields):
            var lines = [console.styled("~ \(name)", .yellow)]
            let width = fields.keys.map { Text.safe($0.string).count }.max() ?? 0
            for (field, change) in fields.sorted(by: { $0.key < $1.key }) {
                let label = Text.padded(Text.safe(field.string), to: width)
                var before = change.old.map { Text.safe(Text.value($0)) } ?? "(absent)"
                var after = change.new.map { Text.safe(Text.value($0)) } ?? "(absent)"
                // Values that print alike (a string in NFC and in NFD, bytes
                // of one length) in the form that tells them apart.
                if before == after, change.old != change.new {
                    let (old, new) = Value._contrasting(change.old, change.new, limit: Text.valueLimit)
                    (before, after) = (old.map(Text.safe) ?? "(absent)", new.map(Text.safe) ?? "(absent)")
                }
                lines.append("    \(label)  \(before) → \(after)")
            }
            return lines
        }
    }

    static func fields(_ record: Record, marker: String) -> [String] {
        let width = record.map { Text.safe($0.name.string).count }.max() ?? 0
        return record.map { field in
            let label = Text.padded(Text.safe(field.name.string), to: width)
            return "    \(label)  \(Text.safe(Text.value(field.value)))"
        }
    }

    /// Every change, tables and records in order.
    static func changes(
        _ changes: PersistentMap<Key, PersistentMap<RecordID, Change>>,
        indexChanges: [Key: [Key: IndexChange]],
        console: Console
    ) -> [String] {
        var lines: [String] = []
        for table in indexChanges.keys.sorted() {
            for (name, change) in indexChanges[table]!.sorted(by: { $0.key < $1.key }) {
                let before = change.old.map { "\($0)" } ?? "(none)"
                let after = change.new.map { "\($0)" } ?? "(none)"
                lines.append("index \(Text.safe(table.string)).\(Text.safe(name.string)): \(before) → \(after)")
            }
        }
        for table in changes.keys.sorted() {
            let tableChanges = changes[table]!
            for id in tableChanges.keys.sorted() {
                lines += change(tableChanges[id]!, id: id, table: table, console: console)
            }
        }
        return lines
    }
}
