/// A sorted collection of unique elements with value semantics and
/// structural sharing: a persistent B+tree with up to 64 elements per leaf
/// and 64 children per internal node, each node counting its subtree.
///
/// Copying a set is O(1). Inserting into or removing from a copy copies
/// only the O(log64 n) nodes on the path; a set that is not shared is
/// mutated in place. Subtree counts make ``rank(of:)`` and
/// ``element(at:)`` O(log n), so paging by offset costs the same as a
/// lookup.
///
///     var titles: PersistentSortedSet = ["Echo", "Blue River"]
///     let before = titles
///     titles.insert("Velvet")             // `before` is unchanged
///     titles.element(at: 1)               // "Echo"
///     titles.elements(in: "C"..<"F")      // ["Echo"]
@frozen
public struct PersistentSortedSet<Element: Comparable> {
    @usableFromInline typealias _Node = _SortedNode<Element>

    /// The tree, or nil when empty (an empty set allocates nothing).
    @usableFromInline var _root: _Node?

    @inlinable
    init(_root: _Node?) { self._root = _root }

    /// An empty set. O(1).
    @inlinable
    public init() { _root = nil }

    /// The number of elements. O(1).
    @inlinable public var count: Int { _root?.count ?? 0 }

    /// Whether the set is empty. O(1).
    @inlinable public var isEmpty: Bool { _root == nil }
}

extension PersistentSortedSet: @unchecked Sendable where Element: Sendable {}

// MARK: Reading

extension PersistentSortedSet {
    /// Whether `element` is in the set. O(log n).
    @inlinable
    public func contains(_ element: Element) -> Bool {
        guard var node = _root else { return false }
        while !node.isLeaf { node = node.children[node.childIndex(element)] }
        let position = node.lowerBound(element)
        return position < node.elements.count && node.elements[position] == element
    }

    /// The number of elements less than `element` (its position if
    /// inserted). O(log n).
    @inlinable
    public func rank(of element: Element) -> Int {
        guard var node = _root else { return 0 }
        var rank = 0
        while !node.isLeaf {
            let child = node.childIndex(element)
            for i in 0..<child { rank += node.counts[i] }
            node = node.children[child]
        }
        return rank + node.lowerBound(element)
    }

    /// The element at `offset` in ascending order. O(log n).
    /// - Precondition: `0 <= offset < count`.
    @inlinable
    public func element(at offset: Int) -> Element {
        precondition(offset >= 0 && offset < count, "offset \(offset) out of 0..<\(count)")
        var node = _root!
        var remaining = offset
        while !node.isLeaf {
            var child = 0
            while remaining >= node.counts[child] {
                remaining -= node.counts[child]
                child += 1
            }
            node = node.children[child]
        }
        return node.elements[remaining]
    }

    /// The smallest element, or nil. O(log n).
    @inlinable public var first: Element? { _root.map { $0.first } }

    /// The largest element, or nil. O(log n).
    @inlinable
    public var last: Element? {
        guard var node = _root else { return nil }
        while !node.isLeaf { node = node.children[node.children.count - 1] }
        return node.elements.last
    }
}

// MARK: Building

extension PersistentSortedSet {
    /// A set of `elements`, which must be strictly ascending. O(n): leaves
    /// are filled to capacity and the levels above built bottom-up.
    /// - Precondition: strictly ascending (checked in debug builds).
    @inlinable
    public init(sortedElements elements: some Sequence<Element>) {
        var leaves: [_Node] = []
        var chunk = ContiguousArray<Element>()
        chunk.reserveCapacity(_Node.capacity)
        var previous: Element?
        for element in elements {
            assert(previous.map { $0 < element } ?? true, "elements are not strictly ascending")
            previous = element
            chunk.append(element)
            if chunk.count == _Node.capacity {
                leaves.append(_Node(elements: chunk, count: chunk.count))
                chunk = []
                chunk.reserveCapacity(_Node.capacity)
            }
        }
        if !chunk.isEmpty { leaves.append(_Node(elements: chunk, count: chunk.count)) }
        self.init(_root: Self._build(Self._balanced(leaves)))
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

    /// The levels above `nodes`, up to one root.
    @inlinable
    static func _build(_ nodes: [_Node]) -> _Node? {
        var level = nodes
        while level.count > 1 {
            var parents: [_Node] = []
            var start = 0
            while start < level.count {
                let end = Swift.min(start + _Node.capacity, level.count)
                let children = ContiguousArray(level[start..<end])
                let separators = ContiguousArray(children.dropFirst().map(\.first))
                parents.append(
                    _Node(separators: separators, children: children, count: children.reduce(0) { $0 + $1.count })
                )
                start = end
            }
            level = _balanced(parents)
        }
        return level.first
    }

    /// Moves entries from the second-to-last node into an underfull last one.
    @inlinable
    static func _balanced(_ nodes: [_Node]) -> [_Node] {
        guard nodes.count > 1, let last = nodes.last, last.width < _Node.minimum else { return nodes }
        var result = nodes
        let left = result[result.count - 2]
        let total = left.width + last.width
        let leftWidth = total / 2
        if left.isLeaf {
            let all = left.elements + last.elements
            result[result.count - 2] = _Node(elements: ContiguousArray(all[..<leftWidth]), count: leftWidth)
            result[result.count - 1] = _Node(elements: ContiguousArray(all[leftWidth...]), count: total - leftWidth)
        } else {
            let all = left.children + last.children
            func node(_ children: ArraySlice<_Node>) -> _Node {
                _Node(
                    separators: ContiguousArray(children.dropFirst().map(\.first)),
                    children: ContiguousArray(children),
                    count: children.reduce(0) { $0 + $1.count }
                )
            }
            result[result.count - 2] = node(all[..<leftWidth])
            result[result.count - 1] = node(all[leftWidth...])
        }
        return result
    }
}

extension PersistentSortedSet: ExpressibleByArrayLiteral {
    /// A set of the literal's elements. O(n log n).
    @inlinable
    public init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}
