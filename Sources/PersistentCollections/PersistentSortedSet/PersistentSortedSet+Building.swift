// Bulk building fills leaves from sorted input to one under their maximum
// (room for a first insert, which would otherwise split the leaf) and
// builds the levels above bottom-up: O(n), one allocation per node.

extension PersistentSortedSet {
    /// A set of `elements`, which must be strictly ascending. O(n): leaves
    /// are filled to one under their maximum (room for an insert) and the
    /// levels above built bottom-up.
    /// - Precondition: strictly ascending (checked in debug builds).
    @inlinable
    public init(sortedElements elements: some Sequence<Element>) {
        var level: [_SortedChild] = []
        var firsts: [Element] = []
        var iterator = elements.makeIterator()
        var pending = iterator.next()
        while let first = pending {
            // Each leaf is filled in place, straight from the input.
            let leaf = _Leaf.make(capacity: _Leaf.maximum)
            leaf.append(upTo: _Leaf.filled) {
                guard let element = pending else { return nil }
                pending = iterator.next()
                // Debug builds compare every element with the next, within a leaf and across leaves.
                assert(pending.map { element < $0 } ?? true, "elements are not strictly ascending")
                return element
            }
            firsts.append(first)
            level.append(_SortedChild(node: leaf, count: leaf.width))
        }
        guard !level.isEmpty else {
            self.init()
            return
        }
        Self._balanceLast(&level, &firsts, height: 0)
        self.init(leaves: level, firsts: firsts)
    }

    /// The set whose leaves are `level`, in order, every leaf but a lone
    /// one at least at its minimum, `firsts` their first elements: the
    /// levels above built bottom-up, one allocation per node.
    @inlinable
    init(leaves: [_SortedChild], firsts: [Element]) {
        var level = leaves
        var firsts = firsts
        var height = 0
        while level.count > 1 {
            var parents: [_SortedChild] = []
            var parentFirsts: [Element] = []
            var start = 0
            while start < level.count {
                let end = Swift.min(start + _Inner.maximum, level.count)
                let node = _Inner.make(
                    children: level[start..<end],
                    separators: ContiguousArray(firsts[(start + 1)..<end]),
                    capacity: _Inner.maximum
                )
                parents.append(_SortedChild(node: node, count: node.count))
                parentFirsts.append(firsts[start])
                start = end
            }
            height += 1
            level = parents
            firsts = parentFirsts
            Self._balanceLast(&level, &firsts, height: height)
        }
        self.init(_root: level[0].node, height: height)
        _checkAfterMutation()
    }

    /// The union of `parts`, each of whose elements are all below those of
    /// the parts after it: the parts' leaves are taken as they are (shared,
    /// not copied), but where a small part's lone leaf meets a neighbour,
    /// and the levels above are built anew. O(n / 30), about one step per
    /// leaf.
    ///
    ///     let all = PersistentSortedSet(concatenating: [below, above])
    ///
    /// - Precondition: every element of a part is below every element of
    ///   the parts after it (checked in debug builds).
    @inlinable
    public init(concatenating parts: some Sequence<PersistentSortedSet>) {
        var level: [_SortedChild] = []
        var firsts: [Element] = []
        for part in parts {
            guard let root = part._root else { continue }
            assert(
                level.last.map { Self._leaf($0.node)[Self._leaf($0.node).width - 1] < part.first! } ?? true,
                "parts overlap"
            )
            Self._appendLeaves(of: root, height: part._height, to: &level, &firsts)
        }
        guard !level.isEmpty else {
            self.init()
            return
        }
        self.init(leaves: level, firsts: firsts)
    }

    /// Appends the leaves under `node` to `level`. Only a lone root leaf
    /// is under its minimum; where one meets another leaf the two are
    /// merged into a new leaf, or, when they hold more than a leaf does,
    /// redistributed into two new leaves of at least the minimum each.
    @inlinable
    static func _appendLeaves(
        of node: AnyObject,
        height: Int,
        to level: inout [_SortedChild],
        _ firsts: inout [Element]
    ) {
        if height > 0 {
            let inner = _inner(node)
            for i in 0..<inner.width { _appendLeaves(of: inner[i].node, height: height - 1, to: &level, &firsts) }
            return
        }
        let leaf = _leaf(node)
        guard let last = level.last.map({ _leaf($0.node) }),
            leaf.width < _Leaf.minimum || last.width < _Leaf.minimum
        else {
            level.append(_SortedChild(node: leaf, count: leaf.width))
            firsts.append(leaf[0])
            return
        }
        let total = last.width + leaf.width
        let left = _Leaf.make(capacity: _Leaf.maximum)
        // All in one leaf when they fit, else halves (each at least the
        // minimum: `total` exceeds the maximum, twice the minimum).
        let leftCount = total <= _Leaf.maximum ? total : total / 2
        let fromLast = Swift.min(last.width, leftCount)
        left.append(from: last, 0..<fromLast)
        left.append(from: leaf, 0..<(leftCount - fromLast))
        level[level.count - 1] = _SortedChild(node: left, count: left.width)
        guard leftCount < total else { return }
        let right = _Leaf.make(capacity: _Leaf.maximum)
        right.append(from: last, fromLast..<last.width)
        right.append(from: leaf, (leftCount - fromLast)..<leaf.width)
        level.append(_SortedChild(node: right, count: right.width))
        firsts.append(right[0])
    }

    /// A set of `elements` in any order, duplicates kept once. O(n log n).
    @inlinable
    public init(_ elements: some Sequence<Element>) {
        var sorted = Array(elements)
        sorted.sort()
        var unique: [Element] = []
        unique.reserveCapacity(sorted.count)
        for element in sorted where unique.last.map({ $0 < element }) ?? true { unique.append(element) }
        self.init(sortedElements: unique)
    }

    /// Moves entries from the second-to-last node into an underfull last
    /// one (nodes at `height`: leaves built at `_SortedLeaf.filled`, one
    /// under the maximum, internal nodes full), so that every node but a
    /// lone root holds its minimum: the two hold at least the maximum, so
    /// each half holds at least half of it.
    @inlinable
    static func _balanceLast(_ level: inout [_SortedChild], _ firsts: inout [Element], height: Int) {
        guard level.count > 1 else { return }
        let lastWidth = _width(level[level.count - 1].node, height: height)
        guard lastWidth < _minimum(height: height) else { return }
        let leftWidth = _width(level[level.count - 2].node, height: height)
        let move = (leftWidth + lastWidth) / 2 - lastWidth
        if height == 0 {
            let left = _leaf(level[level.count - 2].node)
            let right = _leaf(level[level.count - 1].node)
            let merged = _Leaf.make(capacity: _Leaf.maximum)
            merged.append(from: left, (leftWidth - move)..<leftWidth)
            merged.append(from: right, 0..<lastWidth)
            left.removeSuffix(from: leftWidth - move)
            level[level.count - 2].count = left.width
            level[level.count - 1] = _SortedChild(node: merged, count: merged.width)
            firsts[firsts.count - 1] = merged[0]
        } else {
            let left = _inner(level[level.count - 2].node)
            let right = _inner(level[level.count - 1].node)
            // The separator between the two is the last node's first element.
            let between = firsts[firsts.count - 1]
            let merged = _Inner.make(capacity: _Inner.maximum)
            merged.append(from: left, (leftWidth - move)..<leftWidth, separator: nil)
            merged.append(from: right, 0..<lastWidth, separator: between)
            let newFirst = _first(merged[0].node, height: height - 1)
            left.removeSuffix(from: leftWidth - move)
            level[level.count - 2].count = left.count
            level[level.count - 1] = _SortedChild(node: merged, count: merged.count)
            firsts[firsts.count - 1] = newFirst
        }
    }
}

extension PersistentSortedSet: ExpressibleByArrayLiteral {
    /// A set of the literal's elements. O(n log n).
    @inlinable
    public init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}
