// Insertion and removal copy each shared node on the path before changing
// it (path copying) and change unshared nodes in place, so a set that is
// not shared never allocates except to split a full node.

extension PersistentSortedSet {
    /// Inserts `element`; returns false when it was already present.
    /// O(log n).
    @inlinable
    @discardableResult
    public mutating func insert(_ element: Element) -> Bool {
        guard _root != nil else {
            _root = _Node(elements: [element], count: 1)
            return true
        }
        if !isKnownUniquelyReferenced(&_root!) {
            // A shared tree is copied along the path only for a real change.
            if contains(element) { return false }
            _root = _root!.copy()
        }
        let root = _root!
        let before = root.count
        if let split = Self._insert(element, into: root) {
            _root = _Node(
                separators: [split.separator],
                children: [root, split.right],
                count: root.count + split.right.count
            )
        }
        return _root!.count > before
    }

    /// Inserts into the unique `node`; returns the new right sibling when
    /// the node split. Throws nothing; a present element leaves the tree as
    /// it was, signalled by `count` not changing.
    @inlinable
    static func _insert(_ element: Element, into node: _Node) -> (separator: Element, right: _Node)? {
        if node.isLeaf {
            let position = node.lowerBound(element)
            if position < node.elements.count && node.elements[position] == element { return nil }
            node.elements.insert(element, at: position)
            node.count += 1
            return node.elements.count > _Node.capacity ? _split(node) : nil
        }
        let index = node.childIndex(element)
        if !isKnownUniquelyReferenced(&node.children[index]) { node.children[index] = node.children[index].copy() }
        let child = node.children[index]
        let before = child.count
        let split = _insert(element, into: child)
        node.count += child.count + (split?.right.count ?? 0) - before
        node.counts[index] = child.count
        guard let split else { return nil }
        node.separators.insert(split.separator, at: index)
        node.children.insert(split.right, at: index + 1)
        node.counts.insert(split.right.count, at: index + 1)
        return node.children.count > _Node.capacity ? _split(node) : nil
    }

    /// Splits an overfull node in two halves; returns the right one.
    @inlinable
    static func _split(_ node: _Node) -> (separator: Element, right: _Node) {
        if node.isLeaf {
            let middle = node.elements.count / 2
            let right = _Node(elements: ContiguousArray(node.elements[middle...]), count: node.elements.count - middle)
            node.elements.removeSubrange(middle...)
            node.count = node.elements.count
            return (right.elements[0], right)
        }
        let middle = node.children.count / 2
        let separator = node.separators[middle - 1]
        let right = _Node(
            separators: ContiguousArray(node.separators[middle...]),
            children: ContiguousArray(node.children[middle...])
        )
        node.children.removeSubrange(middle...)
        node.counts.removeSubrange(middle...)
        node.separators.removeSubrange((middle - 1)...)
        node.count -= right.count
        return (separator, right)
    }

    /// Removes `element`; returns it, or nil when absent. O(log n).
    @inlinable
    @discardableResult
    public mutating func remove(_ element: Element) -> Element? {
        guard _root != nil, contains(element) else { return nil }
        if !isKnownUniquelyReferenced(&_root!) { _root = _root!.copy() }
        let removed = Self._remove(element, from: _root!)
        let root = _root!
        if root.count == 0 {
            _root = nil
        } else if !root.isLeaf && root.children.count == 1 {
            _root = root.children[0]
        }
        return removed
    }

    /// Removes a present `element` from the unique `node`, rebalancing
    /// children that fall below the minimum.
    @inlinable
    static func _remove(_ element: Element, from node: _Node) -> Element {
        if node.isLeaf {
            let position = node.lowerBound(element)
            node.count -= 1
            return node.elements.remove(at: position)
        }
        let index = node.childIndex(element)
        if !isKnownUniquelyReferenced(&node.children[index]) { node.children[index] = node.children[index].copy() }
        let removed = _remove(element, from: node.children[index])
        node.count -= 1
        node.counts[index] -= 1
        if node.children[index].width < _Node.minimum { _rebalance(node, at: index) }
        return removed
    }

    /// Refills the underfull child `index` of `node` from a sibling: borrows
    /// one entry when the sibling can spare it, else merges the two.
    @inlinable
    static func _rebalance(_ node: _Node, at index: Int) {
        let leftIndex = index > 0 ? index - 1 : index
        let rightIndex = leftIndex + 1
        guard rightIndex < node.children.count else { return }
        if !isKnownUniquelyReferenced(&node.children[leftIndex]) {
            node.children[leftIndex] = node.children[leftIndex].copy()
        }
        if !isKnownUniquelyReferenced(&node.children[rightIndex]) {
            node.children[rightIndex] = node.children[rightIndex].copy()
        }
        let left = node.children[leftIndex]
        let right = node.children[rightIndex]
        if left.width + right.width <= _Node.capacity {
            // Merge right into left.
            if left.isLeaf {
                left.elements.append(contentsOf: right.elements)
            } else {
                left.separators.append(node.separators[leftIndex])
                left.separators.append(contentsOf: right.separators)
                left.children.append(contentsOf: right.children)
                left.counts.append(contentsOf: right.counts)
            }
            left.count += right.count
            node.separators.remove(at: leftIndex)
            node.children.remove(at: rightIndex)
            node.counts.remove(at: rightIndex)
            node.counts[leftIndex] = left.count
        } else if left.width < right.width {
            // Borrow the right's first entry.
            if left.isLeaf {
                left.elements.append(right.elements.removeFirst())
                left.count += 1
                right.count -= 1
                node.separators[leftIndex] = right.elements[0]
            } else {
                let moved = right.children.removeFirst()
                right.counts.removeFirst()
                left.separators.append(node.separators[leftIndex])
                left.children.append(moved)
                left.counts.append(moved.count)
                node.separators[leftIndex] = right.separators.removeFirst()
                left.count += moved.count
                right.count -= moved.count
            }
        } else {
            // Borrow the left's last entry.
            if left.isLeaf {
                let moved = left.elements.removeLast()
                right.elements.insert(moved, at: 0)
                left.count -= 1
                right.count += 1
                node.separators[leftIndex] = moved
            } else {
                let moved = left.children.removeLast()
                left.counts.removeLast()
                right.separators.insert(node.separators[leftIndex], at: 0)
                right.children.insert(moved, at: 0)
                right.counts.insert(moved.count, at: 0)
                node.separators[leftIndex] = left.separators.removeLast()
                left.count -= moved.count
                right.count += moved.count
            }
        }
        if leftIndex < node.counts.count { node.counts[leftIndex] = left.count }
        if rightIndex < node.counts.count { node.counts[rightIndex] = node.children[rightIndex].count }
    }
}
