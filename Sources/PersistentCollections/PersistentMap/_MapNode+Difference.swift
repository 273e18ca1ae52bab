extension _MapNode where Value: Equatable {
    @inlinable
    static func difference(
        _ old: _MapNode,
        _ new: _MapNode,
        into result: inout PersistentMap<Key, Value>.Difference
    ) {
        if old === new { return }
        if old.isCollision || new.isCollision {
            differenceBySearch(old, new, into: &result)
            return
        }
        let oldItems = old._items
        let newItems = new._items
        if old.dataMap == new.dataMap && old.nodeMap == new.nodeMap {
            // Same shape at this level (the common case between versions):
            // compare items pairwise and recurse only into replaced children.
            for i in 0..<old.itemCount {
                if oldItems[i].key == newItems[i].key {
                    if oldItems[i].value != newItems[i].value { result.changed.append(oldItems[i].key) }
                } else {
                    result.removed.append(oldItems[i].key)
                    result.inserted.append(newItems[i].key)
                }
            }
            for i in 0..<old.childCount {
                let a = old._unretainedChild(i)
                let b = new._unretainedChild(i)
                if a.toOpaque() == b.toOpaque() { continue }
                a._withUnsafeGuaranteedRef { a in
                    b._withUnsafeGuaranteedRef { b in difference(a, b, into: &result) }
                }
            }
            return
        }
        var remaining = old.dataMap | old.nodeMap | new.dataMap | new.nodeMap
        while remaining != 0 {
            let bit = remaining & (0 &- remaining)
            remaining ^= bit
            let oldItem = old.dataMap & bit != 0 ? oldItems + _rank(old.dataMap, bit) : nil
            let newItem = new.dataMap & bit != 0 ? newItems + _rank(new.dataMap, bit) : nil
            let oldChild = old.nodeMap & bit != 0 ? old._children[_rank(old.nodeMap, bit)] : nil
            let newChild = new.nodeMap & bit != 0 ? new._children[_rank(new.nodeMap, bit)] : nil
            switch (oldItem, oldChild, newItem, newChild) {
            case let (a?, nil, b?, nil):
                if a.pointee.key == b.pointee.key {
                    if a.pointee.value != b.pointee.value { result.changed.append(a.pointee.key) }
                } else {
                    result.removed.append(a.pointee.key)
                    result.inserted.append(b.pointee.key)
                }
            case let (nil, a?, nil, b?):
                difference(a, b, into: &result)
            case let (a?, nil, nil, b?):
                itemAgainstSubtree(a.pointee, b, itemIsOld: true, into: &result)
            case let (nil, a?, b?, nil):
                itemAgainstSubtree(b.pointee, a, itemIsOld: false, into: &result)
            case let (a?, nil, nil, nil):
                result.removed.append(a.pointee.key)
            case let (nil, a?, nil, nil):
                a.forEachItem { result.removed.append($0.key) }
            case let (nil, nil, b?, nil):
                result.inserted.append(b.pointee.key)
            case let (nil, nil, nil, b?):
                b.forEachItem { result.inserted.append($0.key) }
            default:
                preconditionFailure("PersistentMap: a slot holds both an item and a child")
            }
        }
    }

    /// One side has a single item where the other has a subtree.
    @inlinable
    static func itemAgainstSubtree(
        _ item: Item,
        _ subtree: _MapNode,
        itemIsOld: Bool,
        into result: inout PersistentMap<Key, Value>.Difference
    ) {
        var matched = false
        subtree.forEachItem { other in
            if other.key == item.key {
                matched = true
                if other.value != item.value { result.changed.append(item.key) }
            } else if itemIsOld {
                result.inserted.append(other.key)
            } else {
                result.removed.append(other.key)
            }
        }
        if !matched {
            if itemIsOld { result.removed.append(item.key) } else { result.inserted.append(item.key) }
        }
    }

    /// Collision nodes (or a collision node against a regular one, which
    /// cannot happen in canonical tries but is handled anyway): compare by
    /// search. Both hold few items.
    @inlinable
    static func differenceBySearch(
        _ old: _MapNode,
        _ new: _MapNode,
        into result: inout PersistentMap<Key, Value>.Difference
    ) {
        var oldItems: [Item] = []
        var newItems: [Item] = []
        old.forEachItem { oldItems.append($0) }
        new.forEachItem { newItems.append($0) }
        for a in oldItems {
            if let b = newItems.first(where: { $0.key == a.key }) {
                if a.value != b.value { result.changed.append(a.key) }
            } else {
                result.removed.append(a.key)
            }
        }
        for b in newItems where !oldItems.contains(where: { $0.key == b.key }) {
            result.inserted.append(b.key)
        }
    }
}
