extension PersistentMap {
    /// Merges `other` into this map, resolving keys present in both with
    /// `combine(current, new)`. O(m log16 n) for m new entries.
    @inlinable
    public mutating func merge<S: Sequence>(
        _ other: S,
        uniquingKeysWith combine: (Value, Value) throws -> Value
    ) rethrows where S.Element == (Key, Value) {
        for (key, value) in other {
            if let current = self[key] {
                updateValue(try combine(current, value), forKey: key)
            } else {
                updateValue(value, forKey: key)
            }
        }
    }

    /// Merges the entries of another map. O(m log16 n).
    @inlinable
    public mutating func merge(
        _ other: PersistentMap,
        uniquingKeysWith combine: (Value, Value) throws -> Value
    ) rethrows {
        if isEmpty {
            self = other
            return
        }
        try merge(other.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: combine)
    }

    /// This map with `other`'s entries merged in. O(m log16 n).
    @inlinable
    public func merging<S: Sequence>(
        _ other: S,
        uniquingKeysWith combine: (Value, Value) throws -> Value
    ) rethrows -> PersistentMap where S.Element == (Key, Value) {
        var result = self
        try result.merge(other, uniquingKeysWith: combine)
        return result
    }

    /// This map with another map's entries merged in. O(m log16 n).
    @inlinable
    public func merging(
        _ other: PersistentMap,
        uniquingKeysWith combine: (Value, Value) throws -> Value
    ) rethrows -> PersistentMap {
        var result = self
        try result.merge(other, uniquingKeysWith: combine)
        return result
    }

    /// The entries that satisfy `isIncluded`. Removed keys are taken out of a
    /// copy, so when few are removed most of the trie stays shared.
    /// O(n + k log16 n) for k removed entries.
    @inlinable
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> PersistentMap {
        var removed: [Key] = []
        for element in self where try !isIncluded(element) {
            removed.append(element.key)
        }
        if removed.count > _count / 2 {
            var builder = Builder()
            for element in self where try isIncluded(element) {
                builder.updateValue(element.value, forKey: element.key)
            }
            return builder.build()
        }
        var result = self
        for key in removed { result.removeValue(forKey: key) }
        return result
    }

    /// The same keys with transformed values. Keeps the trie's shape (no
    /// rehashing): O(n).
    @inlinable
    public func mapValues<T>(_ transform: (Value) throws -> T) rethrows -> PersistentMap<Key, T> {
        guard let root = _root else { return PersistentMap<Key, T>() }
        let result = PersistentMap<Key, T>(_root: try root.mapValues(transform), count: _count)
        result._checkAfterMutation()
        return result
    }

    /// The keys whose transformed value is not nil, with those values. O(n log16 n).
    @inlinable
    public func compactMapValues<T>(_ transform: (Value) throws -> T?) rethrows -> PersistentMap<Key, T> {
        var builder = PersistentMap<Key, T>.Builder()
        for (key, value) in self {
            if let mapped = try transform(value) { builder.updateValue(mapped, forKey: key) }
        }
        return builder.build()
    }
}
