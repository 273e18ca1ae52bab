/// A declared index of a table: an ordered list of field paths whose values,
/// then the record ID, order the table's records.
///
/// Declaring or dropping an index is a change recorded in a transaction
/// (``TransactionBuilder/createIndex(_:on:fields:unique:)``), so every past
/// value has exactly the indexes it had, and reverts and undo apply to
/// declarations too.
///
///     try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
public struct IndexDefinition: Hashable, Sendable, CustomStringConvertible {
    /// The index's name, unique within its table.
    public var name: Key
    /// The paths whose values make the key, in order. A record missing a
    /// path is indexed with null there.
    public var fields: [FieldPath]
    /// Whether two records may not share the values of all ``fields``.
    public var isUnique: Bool

    /// An index named `name` over `fields`. A declaration with no fields,
    /// or a path with an empty part, is refused when a transaction declares
    /// it (``ApplyError/invalidIndex(table:index:reason:)``).
    public init(name: Key, fields: [FieldPath], isUnique: Bool = false) {
        self.name = name
        self.fields = fields
        self.isUnique = isUnique
    }

    /// `byAlbum(album, track)`, `unique byPath(path)`.
    public var description: String { _rendered(exact: false) }

    /// The description, its paths as ``FieldPath/exactDescription`` when `exact`.
    func _rendered(exact: Bool) -> String {
        let paths = fields.map { exact ? $0.exactDescription : $0.description }
        return (isUnique ? "unique " : "") + "\(name)(" + paths.joined(separator: ", ") + ")"
    }
}

/// A change to one index declaration: what was declared before (nil: none)
/// and after (nil: dropped), like ``FieldChange`` for a field.
public struct IndexChange: Hashable, Sendable {
    /// The declaration the change replaces; nil when it creates the index.
    public var old: IndexDefinition?
    /// The declaration after it; nil when it drops the index.
    public var new: IndexDefinition?

    /// A change from `old` to `new`.
    public init(old: IndexDefinition?, new: IndexDefinition?) {
        self.old = old
        self.new = new
    }

    /// The change that undoes this one.
    public var inverse: IndexChange { IndexChange(old: new, new: old) }

    /// This change followed by `next`, or nil when together they change
    /// nothing. - Throws: ``ChangeError/cannotFollow(first:next:)`` when
    /// `next` does not start from what this change left.
    func then(_ next: IndexChange) throws -> IndexChange? {
        guard next.old == new else {
            throw ChangeError.cannotFollow(
                first: new.map { "declaration \($0)" } ?? "drop",
                next: next.old.map { "change of \($0)" } ?? "creation"
            )
        }
        let combined = IndexChange(old: old, new: next.new)
        return combined.old == combined.new ? nil : combined
    }

    /// The changes that turn the declarations `old` into `new`, by name.
    static func between(_ old: [IndexDefinition], _ new: [IndexDefinition]) -> [Key: IndexChange] {
        var result: [Key: IndexChange] = [:]
        let before = Dictionary(uniqueKeysWithValues: old.map { ($0.name, $0) })
        let after = Dictionary(uniqueKeysWithValues: new.map { ($0.name, $0) })
        for name in Set(before.keys).union(after.keys) where before[name] != after[name] {
            result[name] = IndexChange(old: before[name], new: after[name])
        }
        return result
    }
}
