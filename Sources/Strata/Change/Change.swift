/// Why two changes of one record cannot be combined.
public enum ChangeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `next` cannot follow `first` on the same record (for example an
    /// insert after an insert).
    case cannotFollow(first: String, next: String)
    /// `next` does not find what `first` left: the record (nil) or field
    /// `field` holds another value than the one `next` replaces.
    case mismatch(first: String, next: String, field: Key?)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case let .cannotFollow(first, next): return "a record's \(next) cannot follow its \(first)"
        case let .mismatch(first, next, field?):
            return "a record's \(next) does not find the value its \(first) left in field \(field.debugDescription)"
        case let .mismatch(first, next, nil):
            return "a record's \(next) does not find the record its \(first) left"
        }
    }
}

/// One field's value before and after a change; nil means absent.
public struct FieldChange: Hashable, Sendable {
    /// The value before, or nil when the field was absent.
    public var old: Value?
    /// The value after, or nil when the field is removed.
    public var new: Value?

    /// A change of one field from `old` to `new`.
    public init(old: Value?, new: Value?) {
        self.old = old
        self.new = new
    }

    /// One side of a field's change (`\.old` or `\.new`).
    typealias Side = (FieldChange) -> Value?
}

/// What a transaction did to one record, with what it replaced, so that the
/// change can be undone and combined without looking at a database.
///
/// A transaction holds at most one `Change` per record: several edits of
/// one record within a transaction are combined into one.
public enum Change: Hashable, Sendable {
    /// The record did not exist and now holds this.
    case insert(Record)
    /// The record existed with these fields and is removed.
    case delete(Record)
    /// The record existed before and after; these fields changed (old and
    /// new values, nil for absent). Fields not listed are untouched.
    case update([Key: FieldChange])

    /// The change that undoes this one. O(fields).
    public var inverse: Change {
        switch self {
        case .insert(let record): return .delete(record)
        case .delete(let record): return .insert(record)
        case .update(let fields): return .update(fields.mapValues { FieldChange(old: $0.new, new: $0.old) })
        }
    }

    /// The change equivalent to this one followed by `next` on the same
    /// record, or nil when together they leave the record as it was (for
    /// example an insert then a delete).
    ///
    /// - Throws: `ChangeError.cannotFollow` when `next` cannot follow this
    ///   change (an insert after an insert, an update or delete after a
    ///   delete); `ChangeError.mismatch` when `next` replaces another value
    ///   than this change left. A run of transactions that applied in
    ///   order never does.
    public func then(_ next: Change) throws -> Change? {
        try _then(next, checkingValues: true)
    }

    /// `then(_:)`; without `checkingValues`, what `next` replaces is taken
    /// as what this change left (an undo group's members, between which
    /// transactions it skips may have changed the record: it names those
    /// conflicts itself).
    func _then(_ next: Change, checkingValues: Bool) throws -> Change? {
        // What `next` replaces must be what this change left, as applying
        // them in turn checks: else the run could not have applied.
        switch (self, next) {
        case (.insert(let record), .update(let fields)):
            if checkingValues, let name = Self.firstDiffering(fields, from: record, side: \.old) {
                throw ChangeError.mismatch(first: kind, next: next.kind, field: name)
            }
            return .insert(Change.applying(fields, to: record))
        case (.insert(let record), .delete(let removed)):
            guard !checkingValues || removed == record else {
                throw ChangeError.mismatch(first: kind, next: next.kind, field: nil)
            }
            return nil
        case (.delete(let old), .insert(let new)):
            return Change.between(old, new)
        case (.update(let fields), .delete(let record)):
            if checkingValues, let name = Self.firstDiffering(fields, from: record, side: \.new) {
                throw ChangeError.mismatch(first: kind, next: next.kind, field: name)
            }
            return .delete(Change.applying(fields, to: record, side: \.old))
        case (.update(let first), .update(let second)):
            var merged = first
            for (name, field) in second {
                if let earlier = first[name] {
                    guard !checkingValues || earlier.new == field.old else {
                        throw ChangeError.mismatch(first: kind, next: next.kind, field: name)
                    }
                    merged[name] = FieldChange(old: earlier.old, new: field.new)
                } else {
                    merged[name] = field
                }
            }
            merged = merged.filter { $0.value.old != $0.value.new }
            return merged.isEmpty ? nil : .update(merged)
        default:
            throw ChangeError.cannotFollow(first: kind, next: next.kind)
        }
    }

    /// The change that turns `old` into `new`: field-level, or nil when
    /// equal. O(size of both): one pass over their fields, which both
    /// records keep in name order (looking each name up in the other
    /// record made an update of a record of n fields O(n²)).
    public static func between(_ old: Record, _ new: Record) -> Change? {
        var fields: [Key: FieldChange] = [:]
        var olds = old.makeIterator()
        var news = new.makeIterator()
        var before = olds.next()
        var after = news.next()
        while true {
            switch (before, after) {
            case (nil, nil):
                return fields.isEmpty ? nil : .update(fields)
            case (let a?, let b?) where a.name == b.name:
                if a.value != b.value { fields[a.name] = FieldChange(old: a.value, new: b.value) }
                before = olds.next()
                after = news.next()
            case (let a?, let b) where b.map({ Record._precedes(a.name, $0.name) }) ?? true:
                fields[a.name] = FieldChange(old: a.value, new: nil)
                before = olds.next()
            case (_, let b?):
                fields[b.name] = FieldChange(old: nil, new: b.value)
                after = news.next()
            default:
                preconditionFailure("unreachable: a field is left on one side")
            }
        }
    }

    /// A field of `fields` whose value in `record` is not its `side` (old
    /// or new), or nil. Many fields are read in one pass over the record
    /// (`Record._values(of:)`), a few one at a time.
    static func firstDiffering(
        _ fields: [Key: FieldChange],
        from record: Record,
        side: FieldChange.Side
    ) -> Key? {
        if fields.count > Record._bulkFieldMinimum {
            let found = record._values(of: fields.keys)
            return fields.first { (found[$0.key] ?? nil) != side($0.value) }?.key
        }
        return fields.first { record[$0.key] != side($0.value) }?.key
    }

    /// `record` with each of `fields` set to its `side` (new: the change
    /// applied; old: undone). Many fields are written in one pass over the
    /// record (`Record._replacing(_:)`), a few one at a time.
    static func applying(
        _ fields: [Key: FieldChange],
        to record: Record,
        side: FieldChange.Side = \.new
    ) -> Record {
        if fields.count > Record._bulkFieldMinimum { return record._replacing(fields.map { ($0.key, side($0.value)) }) }
        var result = record
        for (name, field) in fields { result[name] = side(field) }
        return result
    }

    /// "insert", "delete" or "update", for messages.
    public var kind: String {
        switch self {
        case .insert: return "insert"
        case .delete: return "delete"
        case .update: return "update"
        }
    }
}
