extension PersistentMap: Equatable where Value: Equatable {
    /// Whether both maps hold the same keys with equal values. Subtrees the
    /// two maps share are skipped by identity, and canonical shapes let
    /// different shapes answer false at once: O(size of what differs),
    /// O(n) at worst.
    @inlinable
    public static func == (lhs: PersistentMap, rhs: PersistentMap) -> Bool {
        guard lhs._count == rhs._count else { return false }
        switch (lhs._root, rhs._root) {
        case (nil, nil): return true
        case let (a?, b?): return a.isEqual(to: b)
        default: return false
        }
    }
}

extension PersistentMap: Hashable where Value: Hashable {
    /// Hashes the entries independently of their order. O(n).
    @inlinable
    public func hash(into hasher: inout Hasher) {
        var combined: UInt64 = 0
        for (key, value) in self {
            var entry = Hasher()
            entry.combine(key)
            entry.combine(value)
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
