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

extension _MapNode where Value: Equatable {
    @inlinable
    func isEqual(to other: _MapNode) -> Bool {
        if self === other { return true }
        guard dataMap == other.dataMap, nodeMap == other.nodeMap, isCollision == other.isCollision else {
            return false
        }
        let items = _items
        let otherItems = other._items
        if isCollision {
            // Same hash, order of arrival may differ: compare as sets.
            for i in 0..<itemCount {
                var found = false
                for j in 0..<other.itemCount where otherItems[j].key == items[i].key {
                    guard otherItems[j].value == items[i].value else { return false }
                    found = true
                    break
                }
                if !found { return false }
            }
            return true
        }
        for i in 0..<itemCount {
            guard items[i].key == otherItems[i].key, items[i].value == otherItems[i].value else { return false }
        }
        for i in 0..<childCount {
            let a = _unretainedChild(i)
            let b = other._unretainedChild(i)
            if a.toOpaque() == b.toOpaque() { continue }
            let equal = a._withUnsafeGuaranteedRef { a in b._withUnsafeGuaranteedRef { b in a.isEqual(to: b) } }
            if !equal { return false }
        }
        return true
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
