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
            return "cannot write \(path): \(prefix) holds \(found._summary(exact: false, limit: 200)), not a map"
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
        let updated = try Self._setting(value, in: self[path.field], path: path, old: &old)
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
        let updated = Self._removing(in: field, keys: path.keys, old: &old)
        if old != nil { self[path.field] = updated }
        return old
    }

    // Both walk the path down and rebuild its maps on the way up, in
    // loops: a path, like a value built in memory, may nest thousands of
    // levels, which recursion would overflow the stack with.

    /// The field's value `current` with `value` at `path`'s keys, and the
    /// value it replaced in `old`. O(depth · log16 n).
    static func _setting(_ value: Value, in current: Value?, path: FieldPath, old: inout Value?) throws -> Value {
        // The maps the path goes through (an absent one is empty).
        var maps: [PersistentMap<Key, Value>] = []
        maps.reserveCapacity(path.keys.count)
        var here = current
        for (depth, key) in path.keys.enumerated() {
            let map: PersistentMap<Key, Value>
            switch here {
            case .none: map = PersistentMap()
            case .map(let existing)?: map = existing
            case let other?:
                throw FieldPathError.notAMap(
                    path: path,
                    prefix: FieldPath(field: path.field, keys: Array(path.keys.prefix(depth))),
                    found: other
                )
            }
            here = map[key]
            maps.append(map)
        }
        old = here
        var result = value
        while var map = maps.popLast() {
            map[path.keys[maps.count]] = result
            result = .map(map)
        }
        return result
    }

    /// `current` without the value at `keys` (not empty), which goes in
    /// `old`; `current` itself where the keys lead to no value.
    /// O(depth · log16 n).
    static func _removing(in current: Value, keys: [Key], old: inout Value?) -> Value {
        var maps: [PersistentMap<Key, Value>] = []
        maps.reserveCapacity(keys.count)
        var here = current
        for key in keys {
            guard case .map(let map) = here, let next = map[key] else { return current }
            maps.append(map)
            here = next
        }
        old = here
        var result: Value?
        while var map = maps.popLast() {
            map[keys[maps.count]] = result
            result = .map(map)
        }
        return result!
    }
}
