/// A child of an internal node and the number of elements under it.
@usableFromInline
struct _SortedChild {
    /// A `_SortedLeaf` when the parent's height is 1, else a `_SortedInner`.
    @usableFromInline var node: AnyObject
    @usableFromInline var count: Int

    @inlinable
    init(node: AnyObject, count: Int) {
        self.node = node
        self.count = count
    }
}

/// The header of an internal node.
@usableFromInline
struct _SortedInnerHeader<Element> {
    @usableFromInline var width: Int
    @usableFromInline var capacity: Int
    /// Elements in the subtree.
    @usableFromInline var count: Int
    /// `separators[i]` is the smallest element of child `i + 1`'s subtree
    /// or a bound between children `i` and `i + 1`. Kept in an array of
    /// its own so that a path copy, which rarely changes separators,
    /// shares them with the original (one allocation per copied node).
    @usableFromInline var separators: ContiguousArray<Element> {
        // Every change, in place or by assignment, lands here (a `didSet`
        // that reads no old value keeps in-place mutation).
        didSet { separatorElements = Self.elements(of: separators) }
    }
    /// The first of `separators`' elements (the storage's address even
    /// when there are none), for
    /// descents: reading an array stored in a node retains its buffer, an
    /// atomic update per level on memory that may not be in cache. Valid
    /// while the header holds `separators` unchanged: the `didSet` above
    /// refreshes it after every change, and the buffer it points into is
    /// kept alive by `separators` (shared with copies, which never mutate
    /// it in place: a shared buffer is copied on write).
    @usableFromInline var separatorElements: UnsafePointer<Element>?

    @inlinable
    init(width: Int, capacity: Int, count: Int, separators: ContiguousArray<Element>) {
        self.width = width
        self.capacity = capacity
        self.count = count
        self.separators = separators
        self.separatorElements = Self.elements(of: separators)
    }

    @inlinable
    static func elements(of separators: ContiguousArray<Element>) -> UnsafePointer<Element>? {
        separators.withUnsafeBufferPointer { $0.baseAddress }
    }
}

/// The unit of an internal node's tail allocation: a reference's size and
/// alignment.
/// Declared as holding a reference, as `_MapNodeWord` is, so that the
/// optimizer never takes the children stored there for non-escaping values.
@usableFromInline
struct _SortedInnerWord {
    @usableFromInline var reference: AnyObject?
}

/// An internal node of a persistent B+tree: its children's references and
/// their element counts stored after the header in one allocation, and the
/// separators between them.
///
/// Tail layout, for `capacity` children (bytes from the start of the tail,
/// 64-bit platforms): `[ children: capacity × 8 ][ counts: capacity × 4 ]`,
/// rounded up to whole words.
/// A count takes 4 bytes, not 8: a path copy copies one node per level, and
/// 16 children with 12 bytes each keep a node within a 256-byte
/// allocation (with 16 bytes each it took 320).
///
/// Storage invariants (the unsafe code below keeps them):
/// - the children region is bound to `AnyObject`, the counts region to
///   `UInt32`, from allocation on;
/// - children and counts `0..<width` are initialized, `width..<capacity`
///   are not; `2 <= width <= capacity <= maximum` once built, and
///   `separators.count == width - 1`, and `separatorElements` points at
///   the elements of the `separators` the header holds;
/// - every element of child `i` is below `separators[i]`, and every
///   element of child `i + 1` is at least `separators[i]`;
/// - `counts[i]` is child `i`'s element count and `count` their sum, so
///   that rank and offset descents read one node per level; a subtree
///   below the root holds fewer than 2^32 elements (a count that would not
///   fit traps);
/// - all children are at the same height (leaves when the node's height
///   is 1); the tree, not the node, knows the height;
/// - a node reachable from more than one tree is never mutated.
@usableFromInline
final class _SortedInner<Element: Comparable>: ManagedBuffer<_SortedInnerHeader<Element>, _SortedInnerWord> {
    /// Children per internal node at most.
    @inlinable static var maximum: Int { 16 }
    /// At least, except for the root.
    @inlinable static var minimum: Int { maximum / 2 }

    /// An empty node with room for `capacity` children.
    @inlinable
    static func make(capacity: Int, separators: ContiguousArray<Element> = []) -> _SortedInner {
        let bytes = countsOffset(capacity: capacity) + capacity * MemoryLayout<UInt32>.stride
        let word = MemoryLayout<_SortedInnerWord>.stride
        let buffer = create(minimumCapacity: (bytes + word - 1) / word) { _ in
            _SortedInnerHeader(width: 0, capacity: capacity, count: 0, separators: separators)
        }
        let node = unsafeDowncast(buffer, to: _SortedInner.self)
        node.withUnsafeMutablePointerToElements { base in
            let raw = UnsafeMutableRawPointer(base)
            raw.bindMemory(to: AnyObject.self, capacity: capacity)
            (raw + countsOffset(capacity: capacity)).bindMemory(to: UInt32.self, capacity: capacity)
        }
        return node
    }

    /// Where the counts start, in bytes from the start of the tail (a
    /// reference's stride is a multiple of a count's alignment).
    @inlinable
    static func countsOffset(capacity: Int) -> Int { capacity * MemoryLayout<AnyObject>.stride }

    /// A node over `children` and their `separators`.
    @inlinable
    static func make(
        children: some Collection<_SortedChild>,
        separators: ContiguousArray<Element>,
        capacity: Int
    ) -> _SortedInner {
        let made = children.withContiguousStorageIfAvailable {
            make(children: $0, separators: separators, capacity: capacity)
        }
        return made
            ?? ContiguousArray(children).withUnsafeBufferPointer {
                make(children: $0, separators: separators, capacity: capacity)
            }
    }

    /// A node over `children` and their `separators`.
    @inlinable
    static func make(
        children: UnsafeBufferPointer<_SortedChild>,
        separators: ContiguousArray<Element>,
        capacity: Int
    ) -> _SortedInner {
        precondition(children.count <= capacity && separators.count == children.count - 1)
        let node = make(capacity: capacity, separators: separators)
        let nodes = node._nodes
        let counts = node._counts
        var total = 0
        for (i, child) in children.enumerated() {
            (nodes + i).initialize(to: child.node)
            (counts + i).initialize(to: UInt32(child.count))
            total += child.count
        }
        node._header.pointee.width = children.count
        node._header.pointee.count = total
        return node
    }

    deinit {
        let width = _header.pointee.width
        _prefetchObjects(_nodes, count: width)
        _nodes._deinitializeReferences(count: width)
        // The separators are copies of elements (a map's values too), and
        // often the last ones: freed through `_NestedRelease` like a
        // leaf's elements, not by the header's destruction after this.
        if !_isPOD(Element.self) && !_header.pointee.separators.isEmpty {
            var separators = ContiguousArray<Element>()
            swap(&separators, &_header.pointee.separators)
            _NestedRelease.destroying {
                separators = []
            } orSettingAside: {
                _SetAsideValue(separators)
            }
        }
    }

    /// The header, through a pointer: the `header` property of
    /// `ManagedBuffer` pays a dynamic exclusivity check per access.
    @inlinable
    var _header: UnsafeMutablePointer<_SortedInnerHeader<Element>> {
        withUnsafeMutablePointerToHeader { $0 }
    }

    /// The children's references; valid while `self` is alive.
    @inlinable
    var _nodes: UnsafeMutablePointer<AnyObject> {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0).assumingMemoryBound(to: AnyObject.self) }
    }

    /// The children's element counts; valid while `self` is alive.
    @inlinable
    var _counts: UnsafeMutablePointer<UInt32> {
        let capacity = _header.pointee.capacity
        return withUnsafeMutablePointerToElements {
            (UnsafeMutableRawPointer($0) + Self.countsOffset(capacity: capacity)).assumingMemoryBound(to: UInt32.self)
        }
    }

    @inlinable var width: Int { _header.pointee.width }
    @inlinable var storedCapacity: Int { _header.pointee.capacity }
    @inlinable var count: Int { _header.pointee.count }

    /// Child `child` and its count.
    @inlinable
    subscript(child: Int) -> _SortedChild {
        _SortedChild(node: _nodes[child], count: Int(_counts[child]))
    }

    /// Child `child`'s element count.
    @inlinable
    func count(of child: Int) -> Int { Int(_counts[child]) }

    /// The elements under children `range`.
    @inlinable
    func count(in range: Range<Int>) -> Int {
        let counts = _counts
        var total = 0
        for i in range { total += Int(counts[i]) }
        return total
    }

    /// Child `position`'s node, unretained: for descents that hold the
    /// tree's root, which keeps every node below it alive, and so need no
    /// reference count traffic (on a node not in cache, each retain waits
    /// for memory, and holds back the reads after it).
    @inlinable
    func unretainedChild(_ position: Int) -> Unmanaged<AnyObject> {
        UnsafeRawPointer(_nodes + position).load(as: Unmanaged<AnyObject>.self)
    }

    /// The child a descent to offset `remaining` takes, and the offset
    /// left within it. - Precondition: `remaining < count`.
    @inlinable
    func child(containing remaining: inout Int) -> Int {
        let counts = _counts
        let last = width - 1
        var child = 0
        while child < last && remaining >= Int(counts[child]) {
            remaining -= Int(counts[child])
            child += 1
        }
        return child
    }

    /// The children, a view valid while `self` is alive.
    @inlinable
    var children: _Children { _Children(nodes: _nodes, counts: _counts, count: width) }

    /// The child whose subtree holds the probe's place: the number of
    /// separators the probe is not below (`probeIsBelow(s)` is probe < s).
    /// `touching`: false when a search of this node has just touched its
    /// lines.
    @inlinable
    func childIndex(probeIsBelow: (Element) -> Bool, touching: Bool = true) -> Int {
        if touching { _touchLines(separatorLines) }
        return _partitionPoint(_header.pointee.separatorElements, from: 0, to: width - 1, probeIsBelow, is: false)
    }

    /// The lines of the separators, which a descent's binary search reads.
    /// (Touching the children's references and counts, the tail's three
    /// lines after the header's, measured no faster.)
    @inlinable
    var separatorLines: _Lines { _lines(_header.pointee.separatorElements, count: width - 1) }

    /// Separator `i`, read in place (no retain of the separators' array).
    /// - Precondition: `0 <= i < width - 1`.
    @inlinable
    func separator(_ i: Int) -> Element {
        precondition(i >= 0 && i < width - 1, "a separator out of range")
        return _header.pointee.separatorElements.unsafelyUnwrapped[i]
    }

    /// Calls `body` with the slot of child `position`, which it may
    /// replace (by a unique copy of the child, say). O(1).
    @inlinable
    func withChild<R>(_ position: Int, _ body: (inout AnyObject) throws -> R) rethrows -> R {
        precondition(position >= 0 && position < width, "a child out of range")
        return try body(&_nodes[position])
    }

    /// Replaces separator `i` (a separators array shared with a copy of
    /// the node is copied first). - Precondition: `0 <= i < width - 1`.
    @inlinable
    func setSeparator(_ i: Int, to element: Element) {
        precondition(i >= 0 && i < width - 1, "a separator out of range")
        _header.pointee.separators[i] = element
    }

    /// Whether the header's pointer to the separators' elements is that of
    /// its separators array (checked by the invariants).
    @inlinable
    var _separatorElementsAreCurrent: Bool {
        _header.pointee.separatorElements == _SortedInnerHeader.elements(of: _header.pointee.separators)
    }

    /// A copy sharing the children and separators, with room for
    /// `capacity` (≥ width) children.
    @inlinable
    func copy(capacity: Int) -> _SortedInner {
        let node = _SortedInner.make(capacity: capacity, separators: _header.pointee.separators)
        let width = self.width
        let nodes = _nodes
        let copies = node._nodes
        _prefetchObjects(nodes, count: width)
        copies._initialize(copying: nodes, count: width)
        node._counts._initialize(copying: _counts, count: width)
        node._header.pointee.width = width
        node._header.pointee.count = count
        return node
    }

    /// Inserts `child` at `position`, after `separator` (the bound between
    /// it and the child before). - Precondition: `width < capacity`,
    /// `position >= 1`.
    @inlinable
    func insert(_ child: _SortedChild, at position: Int, separator: Element) {
        let width = self.width
        precondition(width < storedCapacity && position >= 1 && position <= width)
        let nodes = _nodes
        let counts = _counts
        (nodes + position + 1).moveInitialize(from: nodes + position, count: width - position)
        (counts + position + 1).moveInitialize(from: counts + position, count: width - position)
        (nodes + position).initialize(to: child.node)
        (counts + position).initialize(to: UInt32(child.count))
        _header.pointee.width = width + 1
        _header.pointee.count += child.count
        _header.pointee.separators.insert(separator, at: position - 1)
    }

    /// Removes the child at `position` with the separator before it (or,
    /// for the first child, after it); returns the child.
    @inlinable
    func remove(at position: Int) -> _SortedChild {
        let width = self.width
        precondition(position >= 0 && position < width && width >= 2)
        let nodes = _nodes
        let counts = _counts
        let removed = _SortedChild(node: (nodes + position).move(), count: Int(counts[position]))
        (nodes + position).moveInitialize(from: nodes + position + 1, count: width - position - 1)
        (counts + position).moveInitialize(from: counts + position + 1, count: width - position - 1)
        _header.pointee.width = width - 1
        _header.pointee.count -= removed.count
        _header.pointee.separators.remove(at: Swift.max(position - 1, 0))
        return removed
    }

    /// Appends copies of `other`'s children in `range`, with `separator`
    /// between the last child here and the first appended (if any are here).
    /// - Precondition: room for them.
    @inlinable
    func append(from other: _SortedInner, _ range: Range<Int>, separator: Element?) {
        let width = self.width
        precondition(width + range.count <= storedCapacity && range.upperBound <= other.width)
        (_nodes + width)._initialize(copying: other._nodes + range.lowerBound, count: range.count)
        (_counts + width)._initialize(copying: other._counts + range.lowerBound, count: range.count)
        _header.pointee.width = width + range.count
        _header.pointee.count += other.count(in: range)
        if width > 0, !range.isEmpty { _header.pointee.separators.append(separator!) }
        if range.count > 1 {
            _header.pointee.separators.append(
                contentsOf: other._header.pointee.separators[range.lowerBound..<(range.upperBound - 1)]
            )
        }
    }

    /// Drops the children from `position` on (and their separators).
    @inlinable
    func removeSuffix(from position: Int) {
        let width = self.width
        precondition(position >= 1 && position <= width)
        _header.pointee.count -= count(in: position..<width)
        (_nodes + position).deinitialize(count: width - position)
        _header.pointee.width = position
        _header.pointee.separators.removeSubrange((position - 1)...)
    }

    /// Drops the first `k` children and the separators after them.
    @inlinable
    func removePrefix(_ k: Int) {
        let width = self.width
        precondition(k >= 0 && k < width)
        _header.pointee.count -= count(in: 0..<k)
        let nodes = _nodes
        let counts = _counts
        nodes.deinitialize(count: k)
        nodes.moveInitialize(from: nodes + k, count: width - k)
        counts.moveInitialize(from: counts + k, count: width - k)
        _header.pointee.width = width - k
        _header.pointee.separators.removeSubrange(0..<k)
    }

    /// Sets child `position`'s count after its subtree changed by `delta`.
    @inlinable
    func adjust(child position: Int, by delta: Int) {
        _counts[position] = UInt32(Int(_counts[position]) + delta)
        _header.pointee.count += delta
    }
}

extension _SortedInner {
    /// A node's children: references and counts, read through pointers
    /// into the node (valid while it is alive).
    @usableFromInline
    struct _Children: RandomAccessCollection {
        @usableFromInline let nodes: UnsafeMutablePointer<AnyObject>
        @usableFromInline let counts: UnsafeMutablePointer<UInt32>
        @usableFromInline let count: Int

        @inlinable
        init(nodes: UnsafeMutablePointer<AnyObject>, counts: UnsafeMutablePointer<UInt32>, count: Int) {
            self.nodes = nodes
            self.counts = counts
            self.count = count
        }

        @inlinable var startIndex: Int { 0 }
        @inlinable var endIndex: Int { count }

        @inlinable
        subscript(position: Int) -> _SortedChild {
            _SortedChild(node: nodes[position], count: Int(counts[position]))
        }
    }
}

extension _SortedInner {
    /// Inserts `child` first, with `separator` between it and the old first
    /// child. - Precondition: `width < capacity`.
    @inlinable
    func prepend(_ child: _SortedChild, separator: Element) {
        let width = self.width
        precondition(width < storedCapacity)
        let nodes = _nodes
        let counts = _counts
        (nodes + 1).moveInitialize(from: nodes, count: width)
        (counts + 1).moveInitialize(from: counts, count: width)
        nodes.initialize(to: child.node)
        counts.initialize(to: UInt32(child.count))
        _header.pointee.width = width + 1
        _header.pointee.count += child.count
        _header.pointee.separators.insert(separator, at: 0)
    }
}
