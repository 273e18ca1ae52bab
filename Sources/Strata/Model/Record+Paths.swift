import PersistentCollections

/// Why a value could not be written at a field path.
public enum FieldPathError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path goes through `prefix`, which holds `found` rather than a
    /// nested map, so there is nowhere to put a key below it.
    case notAMap(path: FieldPath, prefix: FieldPath, found: Value)

    /// A one-line explanation naming the path.
    public var description: String {
        switch self {
        case let .notAMap(path, prefix, found):
            return "cannot write \(path): \(prefix) holds \(found), not a map"
        }
    }
}

extension Record {
    /// Sets the value at `path`, creating the nested maps the path goes
    /// through when they are absent.
    ///
    /// - Returns: the value replaced, or nil when there was none.
    /// - Throws: `FieldPathError.notAMap` when a prefix of the path holds a
    ///   value that is not a map; the record is then unchanged.
    @discardableResult
    public mutating func setValue(_ value: Value, at path: FieldPath) throws -> Value? {
        if path.isField {
            let old = self[path.field]
            self[path.field] = value
            return old
        }
        var old: Value?
        let updated = try Self._setting(
            value,
            in: self[path.field],
            keys: path.keys[...],
            path: path,
            depth: 0,
            old: &old
        )
        self[path.field] = updated
        return old
    }

    /// Removes the value at `path`. Maps the path went through stay, even
    /// when they become empty (so that unset-then-set restores the shape).
    ///
    /// - Returns: the value removed, or nil when the path held nothing
    ///   (including when a prefix is not a map).
    @discardableResult
    public mutating func removeValue(at path: FieldPath) -> Value? {
        if path.isField {
            let old = self[path.field]
            self[path.field] = nil
            return old
        }
        guard let field = self[path.field] else { return nil }
        var old: Value?
        let updated = Self._removing(in: field, keys: path.keys[...], old: &old)
        if old != nil { self[path.field] = updated }
        return old
    }

    static func _setting(
        _ value: Value,
        in current: Value?,
        keys: ArraySlice<Key>,
        path: FieldPath,
        depth: Int,
        old: inout Value?
    ) throws -> Value {
        guard let key = keys.first else {
            old = current
            return value
        }
        var map: PersistentMap<Key, Value>
        switch current {
        case .none: map = PersistentMap()
        case .map(let existing)?: map = existing
        case let other?:
            throw FieldPathError.notAMap(
                path: path,
                prefix: FieldPath(field: path.field, keys: Array(path.keys.prefix(depth))),
                found: other
            )
        }
        map[key] = try _setting(value, in: map[key], keys: keys.dropFirst(), path: path, depth: depth + 1, old: &old)
        return .map(map)
    }

    static func _removing(in current: Value, keys: ArraySlice<Key>, old: inout Value?) -> Value {
        guard let key = keys.first, case .map(var map) = current, let child = map[key] else { return current }
        if keys.count == 1 {
            old = map.removeValue(forKey: key)
        } else {
            map[key] = _removing(in: child, keys: keys.dropFirst(), old: &old)
        }
        return .map(map)
    }
}
