/// A node of a persistent B+tree. Leaves hold elements; internal nodes hold
/// children and, between them, separators.
///
/// Invariants (checked by `PersistentSortedSet._invariantCheck()`):
/// - a leaf's `elements` are strictly ascending; an internal node's
///   `elements` are empty;
/// - an internal node has `children.count == separators.count + 1`, and
///   `separators[i]` is ≤ every element of `children[i + 1]` and > every
///   element of `children[i]`;
/// - `count` is the number of elements in the subtree, and an internal
///   node's `counts[i]` is `children[i].count` (so that rank and offset
///   descents read one array per level, not every child);
/// - every leaf is at the same depth; every node but the root holds at
///   least `minimum` elements (leaf) or children (internal), at most
///   `capacity`.
///
/// A node reachable from more than one tree is never mutated: writers copy
/// it first (`isKnownUniquelyReferenced`), so old versions stay intact.
@usableFromInline
final class _SortedNode<Element: Comparable> {
    /// Elements or children per node at most.
    @usableFromInline static var capacity: Int { 64 }
    /// At least, except for the root.
    @usableFromInline static var minimum: Int { 32 }

    @usableFromInline var elements: ContiguousArray<Element>
    @usableFromInline var separators: ContiguousArray<Element>
    @usableFromInline var children: ContiguousArray<_SortedNode>
    @usableFromInline var counts: ContiguousArray<Int>
    @usableFromInline var count: Int

    @inlinable
    init(
        elements: ContiguousArray<Element> = [],
        separators: ContiguousArray<Element> = [],
        children: ContiguousArray<_SortedNode> = [],
        count: Int
    ) {
        self.elements = elements
        self.separators = separators
        self.children = children
        self.counts = ContiguousArray(children.lazy.map(\.count))
        self.count = count
    }

    /// An internal node over `children` with their separators.
    @inlinable
    convenience init(separators: ContiguousArray<Element>, children: ContiguousArray<_SortedNode>) {
        self.init(separators: separators, children: children, count: children.reduce(0) { $0 + $1.count })
    }

    @inlinable var isLeaf: Bool { children.isEmpty }

    /// The number of entries (elements of a leaf, children of an internal node).
    @inlinable var width: Int { isLeaf ? elements.count : children.count }

    /// A copy sharing the children.
    @inlinable
    func copy() -> _SortedNode {
        let node = _SortedNode(elements: elements, separators: separators, count: count)
        node.children = children
        node.counts = counts
        return node
    }

    /// The position of the first element ≥ `element` in a leaf.
    @inlinable
    func lowerBound(_ element: Element) -> Int {
        var low = 0
        var high = elements.count
        while low < high {
            let middle = (low + high) >> 1
            if elements[middle] < element { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The child that holds `element` if anything does: the number of
    /// separators ≤ `element`.
    @inlinable
    func childIndex(_ element: Element) -> Int {
        var low = 0
        var high = separators.count
        while low < high {
            let middle = (low + high) >> 1
            if element < separators[middle] { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The smallest element of the subtree.
    @inlinable
    var first: Element {
        var node = self
        while !node.isLeaf { node = node.children[0] }
        return node.elements[0]
    }
}
