extension PersistentMap: Equatable where Value: Equatable {
    /// Whether both maps hold the same keys with equal values. Subtrees the
    /// two maps share are skipped by identity, and canonical shapes let
    /// different shapes answer false at once: O(size of what differs),
    /// O(n) at worst.
    @inlinable
    public static func == (lhs: PersistentMap, rhs: PersistentMap) -> Bool {
        lhs.isEqual(to: rhs, by: ==)
    }
}

extension PersistentMap {
    /// Whether both hold the same keys with values equivalent by
    /// `areEquivalent`, which must be an equivalence relation: subtrees the
    /// two maps share are skipped by identity (what `==` does, with another
    /// comparison: one that carries state, such as a nesting depth).
    /// O(size of what differs), O(n) at worst.
    @inlinable
    public func isEqual(to other: PersistentMap, by areEquivalent: (Value, Value) -> Bool) -> Bool {
        guard _count == other._count else { return false }
        switch (_root, other._root) {
        case (nil, nil): return true
        case let (a?, b?): return a.isEqual(to: b, by: areEquivalent)
        default: return false
        }
    }
}

extension PersistentMap: Hashable where Value: Hashable {
    /// Hashes the entries independently of their order. O(n).
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hash(into: &hasher) { value, entry in entry.combine(value) }
    }
}

extension PersistentMap {
    /// Hashes the entries independently of their order, each value by
    /// `hashValue` (what `hash(into:)` does, with a hashing that carries
    /// state, such as a nesting depth; it must agree with the equality
    /// the values are compared by). O(n).
    @inlinable
    public func hash(into hasher: inout Hasher, valuesBy hashValue: (Value, inout Hasher) -> Void) {
        var combined: UInt64 = 0
        for (key, value) in self {
            var entry = Hasher()
            entry.combine(key)
            hashValue(value, &entry)
            combined &+= UInt64(bitPattern: Int64(entry.finalize()))
        }
        hasher.combine(_count)
        hasher.combine(combined)
    }
}

extension PersistentMap {
    /// Whether both are the same storage (a map and its unchanged copies):
    /// then they hold the same entries, whatever their values. False says
    /// nothing. O(1).
    @inlinable
    public func isIdentical(to other: PersistentMap) -> Bool {
        _count == other._count && _root === other._root
    }
}
