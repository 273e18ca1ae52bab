/// How records written by older versions of a ``StoredRecord`` type read
/// into the current one. Records are never rewritten: every decoded read,
/// of the current value or of a past one (`database(asOf:)`), goes through
/// this. Indexes and query conditions see the fields as stored (an old
/// name, no default, an integer where the type now has a `Double`); to
/// query older records by the new shape, save them back first.
///
/// What a new version may change, and how an older record reads:
///
/// | change | declare | an older record reads |
/// |---|---|---|
/// | add an optional field | nothing | `nil` |
/// | add a field with a default | ``defaults`` (a Swift default value of the property is not enough) | the default |
/// | remove a field | nothing | the field is ignored (saving the record removes it) |
/// | rename a field | ``renamedFields`` (old → new; renames chain) | the old field's value |
/// | change a field's type | ``upcasters`` | the upcaster's value |
/// | add a required field without a default | – | a ``RecordDecodingError`` naming it |
///
/// The declarations are about top-level fields (the properties of the
/// type itself); a nested struct's fields evolve by the first three rows
/// (optional, removed), or by an upcaster of the top-level field holding
/// it. An upcaster sees the stored value whatever version wrote it, so it
/// must pass values already of the new type through unchanged:
///
///     static var schema: RecordSchema {
///         RecordSchema(
///             renamedFields: ["name": "title"],
///             defaults: ["rating": 0],
///             upcasters: ["plays": { value in
///                 if case .string(let text) = value { return .int(Int64(text) ?? 0) }
///                 return value
///             }]
///         )
///     }
///
/// Saving a record read this way (``TransactionBuilder/save(_:)``)
/// writes it in the current shape: the renamed field under its new name,
/// the upcast value, no field the type no longer has.
public struct RecordSchema: Sendable {
    /// Old field names and the coding keys that now hold them.
    public var renamedFields: [String: String]
    /// Values of fields that older records lack, by coding key.
    public var defaults: [String: Value]
    /// Conversions of stored values into a field's current type, by
    /// coding key; applied to every stored value of the field.
    public var upcasters: [String: @Sendable (Value) throws -> Value]

    /// A schema with the given declarations (by default none).
    public init(
        renamedFields: [String: String] = [:],
        defaults: [String: Value] = [:],
        upcasters: [String: @Sendable (Value) throws -> Value] = [:]
    ) {
        self.renamedFields = renamedFields
        self.defaults = defaults
        self.upcasters = upcasters
    }

    /// Whether nothing is declared: reads take the direct path.
    var isEmpty: Bool { renamedFields.isEmpty && defaults.isEmpty && upcasters.isEmpty }

    /// The old names of coding key `key`, from ``renamedFields``, nearest
    /// first: renames chain across versions (`title` → `name` in one,
    /// `name` → `heading` in the next), so a record of the oldest version
    /// still reads into the newest.
    func oldNames(of key: String) -> [String] {
        // Names compare by UTF-8 bytes, as fields do (`String ==` would take
        // "caf\u{E9}" and "cafe\u{301}" for one name).
        var names: [String] = []
        var seen: Set<Key> = [Key(key)]
        var level: Set<Key> = [Key(key)]
        while !level.isEmpty {
            let older = renamedFields.compactMap {
                level.contains(Key($0.value)) && !seen.contains(Key($0.key)) ? $0.key : nil
            }
            .sorted()
            names += older
            level = Set(older.map { Key($0) })
            seen.formUnion(level)
        }
        return names
    }

    /// The name field `name` reads as now: its rename, that name's rename,
    /// and so on (itself when it was never renamed). A cycle of renames
    /// ends at the last name before it repeats.
    func newestName(of name: String) -> String {
        var current = name
        var seen: Set<Key> = [Key(name)]
        while let next = Self.declared(current, in: renamedFields), seen.insert(Key(next)).inserted {
            current = next
        }
        return current
    }

    /// The default declared for exactly `name` (its UTF-8 bytes), if any.
    func defaultValue(for name: String) -> Value? { Self.declared(name, in: defaults) }

    /// The upcaster declared for exactly `name` (its UTF-8 bytes), if any.
    func upcaster(for name: String) -> (@Sendable (Value) throws -> Value)? { Self.declared(name, in: upcasters) }

    /// The entry of `declarations` whose key has `name`'s UTF-8 bytes: a
    /// `String` key finds any canonically equivalent spelling.
    private static func declared<Declaration>(_ name: String, in declarations: [String: Declaration]) -> Declaration? {
        guard let index = declarations.index(forKey: name), Key(declarations[index].key) == Key(name) else {
            return nil
        }
        return declarations[index].value
    }
}
