extension _MapNode {
    /// The number of entries in the subtree. O(the number of its nodes).
    @usableFromInline
    func _entryCount() -> Int {
        var total = itemCount
        let children = _children
        for i in 0..<childCount { total += children[i]._entryCount() }
        return total
    }

    /// Calls `body` on the node's own items in `slots`. O(slots.count).
    @inlinable
    func forEachItem(inSlots slots: Range<Int>, _ body: (Item) throws -> Void) rethrows {
        let items = _items
        for i in slots { try body(items[i]) }
    }

    /// Calls `body` on every item under the children of ranks `ranks`,
    /// depth-first. O(the items visited).
    @inlinable
    func forEachItem(inChildren ranks: Range<Int>, _ body: (Item) throws -> Void) rethrows {
        let children = _children
        for i in ranks { try children[i].forEachItem(body) }
    }
}
