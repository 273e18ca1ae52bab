/// A depth-first walk over a trie's items, a node's items before its
/// children, with an explicit stack of unretained node references: the
/// walk's owner keeps the root alive, which keeps every node alive.
@usableFromInline
@frozen
struct _MapWalk<Key: Hashable, Value> {
    @usableFromInline typealias Node = _MapNode<Key, Value>

    /// The current node's items; only read while `_itemIndex < _itemCount`.
    @usableFromInline var _items: UnsafeMutablePointer<_MapItem<Key, Value>>
    @usableFromInline var _itemIndex: Int
    @usableFromInline var _itemCount: Int
    @usableFromInline var _stack: [(node: Unmanaged<Node>, next: Int, count: Int)]

    @inlinable
    init(root: Node?) {
        self._stack = []
        self._itemIndex = 0
        if let root {
            _items = root._items
            _itemCount = root.itemCount
            let children = root.childCount
            if children > 0 {
                root._prefetchChildren()
                _stack.reserveCapacity(8)
                _stack.append((Unmanaged.passUnretained(root), 0, children))
            }
        } else {
            // Never read: `_itemCount` is 0.
            _items = UnsafeMutablePointer(bitPattern: MemoryLayout<_MapItem<Key, Value>>.alignment)!
            _itemCount = 0
        }
    }

    /// The next entry, or nil at the end. O(1) amortized.
    @inlinable
    mutating func next() -> (key: Key, value: Value)? {
        // The entry is copied out in this one place, whichever node it
        // lies in: a caller that drops the key (`for (_, value) in map`)
        // then lets the optimizer drop its copy, which would otherwise
        // touch a heap key's object (a cache miss per entry).
        if _itemIndex == _itemCount, !_advanceToNextNode() { return nil }
        let item = _items + _itemIndex
        _itemIndex &+= 1
        return (item.pointee.key, item.pointee.value)
    }

    /// Moves to the next node that holds items, depth-first; false at
    /// the end.
    @inlinable
    @inline(never)
    mutating func _advanceToNextNode() -> Bool {
        while let top = _stack.last {
            guard top.next < top.count else {
                _stack.removeLast()
                continue
            }
            _stack[_stack.count - 1].next = top.next &+ 1
            let child = top.node._withUnsafeGuaranteedRef { $0._unretainedChild(top.next) }
            let (items, count, children) = child._withUnsafeGuaranteedRef {
                ($0._items, $0.itemCount, $0.childCount)
            }
            if children > 0 {
                // The children are visited next: their first lines
                // are read now, together, rather than one miss each.
                child._withUnsafeGuaranteedRef { $0._prefetchChildren() }
                _stack.append((child, 0, children))
            }
            if count > 0 {
                _items = items
                _itemCount = count
                _itemIndex = 0
                return true
            }
        }
        return false
    }
}

extension _MapNode {
    /// Calls `body` on every item of the subtree, depth-first.
    @inlinable
    func forEachItem(_ body: (Item) throws -> Void) rethrows {
        let items = _items
        for i in 0..<itemCount { try body(items[i]) }
        let children = _children
        for i in 0..<childCount { try children[i].forEachItem(body) }
    }

    /// Calls `body` on every key of the subtree, depth-first, reading no value.
    @inlinable
    func forEachKey(_ body: (Key) throws -> Void) rethrows {
        let items = _items
        for i in 0..<itemCount { try body(items[i].key) }
        let children = _children
        for i in 0..<childCount { try children[i].forEachKey(body) }
    }
}
