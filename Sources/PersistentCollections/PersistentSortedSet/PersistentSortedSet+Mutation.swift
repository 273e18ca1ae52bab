// Insertion and removal copy each shared node on the path before changing
// it (path copying: one allocation per level, sized to what the node
// holds) and change unshared nodes in place, so a set that is not shared
// allocates only to split or grow a node.

/// What an insertion below a node did.
@usableFromInline
struct _SortedInsertion<Element> {
    /// The element an equal one replaced or kept, or nil when inserted.
    @usableFromInline var existing: Element?
    /// The new right sibling when the node split, with the separator
    /// before it.
    @usableFromInline var split: (separator: Element, right: _SortedChild)?

    @inlinable
    init(existing: Element?, split: (separator: Element, right: _SortedChild)?) {
        self.existing = existing
        self.split = split
    }
}

extension PersistentSortedSet {
    /// Inserts `element`; returns false when it was already present.
    /// O(log n).
    @inlinable
    @discardableResult
    public mutating func insert(_ element: Element) -> Bool {
        _insert(element, replacing: false) == nil
    }

    /// Inserts `element`, or replaces the member equal to it; returns the
    /// member replaced, or nil. O(log n).
    @inlinable
    @discardableResult
    public mutating func update(with element: Element) -> Element? {
        _insert(element, replacing: true)
    }

    /// Inserts or (when `replacing`) replaces; returns the member found.
    @inlinable
    mutating func _insert(_ element: Element, replacing: Bool) -> Element? {
        guard _root != nil else {
            let leaf = _Leaf.make(capacity: 1)
            leaf.insert(element, at: 0)
            _root = leaf
            _height = 0
            _checkAfterMutation { element < $0 }
            return nil
        }
        if !replacing, !isKnownUniquelyReferenced(&_root!), let found = member(equalTo: element) {
            // A shared tree is copied along the path only for a real change.
            return found
        }
        let result = Self._insert(element, replacing: replacing, into: &_root!, height: _height)
        if let split = result.split {
            let left = _root!
            let children = [_SortedChild(node: left, count: Self._count(left, height: _height)), split.right]
            _root = _Inner.make(children: children, separators: [split.separator], capacity: 2)
            _height += 1
        }
        _checkAfterMutation { element < $0 }
        return result.existing
    }

    /// Makes `node` unique with room for `room` more entries (capped at the
    /// node maximum): a shared node is copied at its size plus the room, an
    /// unshared one without room grows to the maximum.
    @inlinable
    static func _makeUnique(_ node: inout AnyObject, height: Int, room: Int) {
        let width = _width(node, height: height)
        let needed = Swift.min(width + room, _maximum(height: height))
        if isKnownUniquelyReferenced(&node) {
            let capacity = height == 0 ? _leaf(node).storedCapacity : _inner(node).storedCapacity
            if capacity >= needed { return }
            node = _copy(node, height: height, capacity: _maximum(height: height))
        } else {
            node = _copy(node, height: height, capacity: needed)
        }
    }

    @inlinable
    static func _copy(_ node: AnyObject, height: Int, capacity: Int) -> AnyObject {
        height == 0 ? _leaf(node).copy(capacity: capacity) : _inner(node).copy(capacity: capacity)
    }

    /// Inserts into the unique `node`.
    @inlinable
    static func _insert(
        _ element: Element,
        replacing: Bool,
        into node: inout AnyObject,
        height: Int
    ) -> _SortedInsertion<Element> {
        _makeUnique(&node, height: height, room: 1)
        if height == 0 {
            let leaf = _leaf(node)
            let position = leaf.lowerBound { $0 < element }
            if position < leaf.width, !(element < leaf[position]) {
                let existing = replacing ? leaf.replace(at: position, with: element) : leaf[position]
                return _SortedInsertion(existing: existing, split: nil)
            }
            if leaf.width < leaf.storedCapacity {
                leaf.insert(element, at: position)
                return _SortedInsertion(existing: nil, split: nil)
            }
            // Full at the maximum: the upper half moves to a new leaf.
            let middle = leaf.width / 2
            let right = _Leaf.make(capacity: _Leaf.maximum)
            right.append(from: leaf, middle..<leaf.width)
            leaf.removeSuffix(from: middle)
            if position <= middle {
                leaf.insert(element, at: position)
            } else {
                right.insert(element, at: position - middle)
            }
            return _SortedInsertion(
                existing: nil,
                split: (right[0], _SortedChild(node: right, count: right.width))
            )
        }
        let inner = _inner(node)
        let child = inner.childIndex(probeIsBelow: { element < $0 })
        let result = inner.withChild(child) { _insert(element, replacing: replacing, into: &$0, height: height - 1) }
        let added = result.existing == nil ? 1 : 0
        // A separator is a copy of the first member of the subtree to its
        // right: a replaced member must not live on in it (a map's old value).
        if replacing, result.existing != nil, child > 0, !(inner.separator(child - 1) < element) {
            inner.setSeparator(child - 1, to: element)
        }
        inner.adjust(child: child, by: added - (result.split?.right.count ?? 0))
        guard let split = result.split else { return _SortedInsertion(existing: result.existing, split: nil) }
        if inner.width < inner.storedCapacity {
            inner.insert(split.right, at: child + 1, separator: split.separator)
            return _SortedInsertion(existing: nil, split: nil)
        }
        // Full at the maximum: the upper half moves to a new node, and the
        // separator between the halves goes up.
        let middle = inner.width / 2
        let up = inner.separator(middle - 1)
        let right = _Inner.make(capacity: _Inner.maximum)
        right.append(from: inner, middle..<inner.width, separator: nil)
        inner.removeSuffix(from: middle)
        if child + 1 <= middle {
            inner.insert(split.right, at: child + 1, separator: split.separator)
        } else {
            right.insert(split.right, at: child + 1 - middle, separator: split.separator)
        }
        return _SortedInsertion(existing: nil, split: (up, _SortedChild(node: right, count: right.count)))
    }
}

// MARK: Removal

extension PersistentSortedSet {
    /// Removes `element`; returns the member removed, or nil when absent.
    /// O(log n).
    @inlinable
    @discardableResult
    public mutating func remove(_ element: Element) -> Element? {
        _remove(isBelow: { $0 < element }, isAbove: { element < $0 })
    }

    /// Removes the member the probe matches (see `_lookup`).
    @inlinable
    mutating func _remove(isBelow: (Element) -> Bool, isAbove: (Element) -> Bool) -> Element? {
        guard _root != nil, _lookup(isBelow: isBelow, isAbove: isAbove) != nil else { return nil }
        let removed = Self._remove(isBelow: isBelow, isAbove: isAbove, from: &_root!, height: _height)
        if _height == 0 {
            if Self._leaf(_root!).width == 0 { _root = nil }
        } else if Self._inner(_root!).width == 1 {
            _root = Self._inner(_root!)[0].node
            _height -= 1
        }
        _checkAfterMutation(at: isAbove)
        return removed
    }

    /// Removes the present member the probe matches from under `node`,
    /// refilling children that fall below the minimum.
    @inlinable
    static func _remove(
        isBelow: (Element) -> Bool,
        isAbove: (Element) -> Bool,
        from node: inout AnyObject,
        height: Int
    ) -> Element {
        _makeUnique(&node, height: height, room: 0)
        if height == 0 {
            let leaf = _leaf(node)
            return leaf.remove(at: leaf.lowerBound(isBelow))
        }
        let inner = _inner(node)
        let child = inner.childIndex(probeIsBelow: isAbove)
        let removed = inner.withChild(child) {
            _remove(isBelow: isBelow, isAbove: isAbove, from: &$0, height: height - 1)
        }
        inner.adjust(child: child, by: -1)
        // Nor may a removed member live on as a separator: the subtree's new
        // first member takes its place (the child is never left empty).
        if child > 0 {
            let separator = inner.separator(child - 1)
            if !isBelow(separator) && !isAbove(separator) {
                inner.setSeparator(child - 1, to: _first(inner[child].node, height: height - 1))
            }
        }
        if _width(inner[child].node, height: height - 1) < _minimum(height: height - 1) {
            _rebalance(inner, at: child, childHeight: height - 1)
        }
        return removed
    }

    /// Refills the underfull child `index` of the unique `node` from a
    /// sibling: borrows one entry when the sibling can spare it, else
    /// merges the two.
    @inlinable
    static func _rebalance(_ node: _Inner, at index: Int, childHeight height: Int) {
        let l = index > 0 ? index - 1 : index
        let r = l + 1
        guard r < node.width else { return }
        let separator = node.separator(l)
        let leftWidth = _width(node[l].node, height: height)
        let rightWidth = _width(node[r].node, height: height)
        if leftWidth + rightWidth <= _maximum(height: height) {
            // Merge the right child into the left.
            let rightCount = node.count(of: r)
            node.withChild(l) { _makeUnique(&$0, height: height, room: rightWidth) }
            if height == 0 {
                _leaf(node[l].node).append(from: _leaf(node[r].node), 0..<rightWidth)
            } else {
                _inner(node[l].node).append(from: _inner(node[r].node), 0..<rightWidth, separator: separator)
            }
            node.adjust(child: l, by: rightCount)
            _ = node.remove(at: r)
            return
        }
        let moved: Int
        let newSeparator: Element
        if leftWidth < rightWidth {
            // The right child's first entry moves to the left child.
            node.withChild(l) { _makeUnique(&$0, height: height, room: 1) }
            node.withChild(r) { _makeUnique(&$0, height: height, room: 0) }
            if height == 0 {
                let left = _leaf(node[l].node)
                let right = _leaf(node[r].node)
                left.append(from: right, 0..<1)
                right.removePrefix(1)
                (moved, newSeparator) = (1, right[0])
            } else {
                let left = _inner(node[l].node)
                let right = _inner(node[r].node)
                (moved, newSeparator) = (right.count(of: 0), right.separator(0))
                left.append(from: right, 0..<1, separator: separator)
                right.removePrefix(1)
            }
            node.adjust(child: l, by: moved)
            node.adjust(child: r, by: -moved)
        } else {
            // The left child's last entry moves to the right child.
            node.withChild(l) { _makeUnique(&$0, height: height, room: 0) }
            node.withChild(r) { _makeUnique(&$0, height: height, room: 1) }
            if height == 0 {
                let left = _leaf(node[l].node)
                let right = _leaf(node[r].node)
                let last = left[left.width - 1]
                left.removeSuffix(from: left.width - 1)
                right.insert(last, at: 0)
                (moved, newSeparator) = (1, last)
            } else {
                let left = _inner(node[l].node)
                let right = _inner(node[r].node)
                let last = left[left.width - 1]
                (moved, newSeparator) = (last.count, left.separator(left.width - 2))
                left.removeSuffix(from: left.width - 1)
                right.prepend(last, separator: separator)
            }
            node.adjust(child: l, by: -moved)
            node.adjust(child: r, by: moved)
        }
        node.setSeparator(l, to: newSeparator)
    }
}
