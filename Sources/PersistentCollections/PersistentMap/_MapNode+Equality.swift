extension _MapNode {
    /// Whether both subtries hold the same keys with values equivalent by
    /// `areEquivalent`; shared subtries are skipped by identity.
    @inlinable
    func isEqual(to other: _MapNode, by areEquivalent: (Value, Value) -> Bool) -> Bool {
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
                    guard areEquivalent(items[i].value, otherItems[j].value) else { return false }
                    found = true
                    break
                }
                if !found { return false }
            }
            return true
        }
        for i in 0..<itemCount {
            guard items[i].key == otherItems[i].key, areEquivalent(items[i].value, otherItems[i].value) else {
                return false
            }
        }
        for i in 0..<childCount {
            let a = _unretainedChild(i)
            let b = other._unretainedChild(i)
            if a.toOpaque() == b.toOpaque() { continue }
            let equal = a._withUnsafeGuaranteedRef { a in
                b._withUnsafeGuaranteedRef { b in a.isEqual(to: b, by: areEquivalent) }
            }
            if !equal { return false }
        }
        return true
    }
}
