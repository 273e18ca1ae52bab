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
    @usableFromInline var separators: ContiguousArray<Element>

    @inlinable
    init(width: Int, capacity: Int, count: Int, separators: ContiguousArray<Element>) {
        self.width = width
        self.capacity = capacity
        self.count = count
        self.separators = separators
    }
}

/// An internal node of a persistent B+tree: its children with their counts
/// stored after the header in one allocation, and the separators between
/// them.
///
/// Storage invariants (the unsafe code below keeps them):
/// - children `0..<width` are initialized, `width..<capacity` are not;
///   `2 <= width <= capacity <= maximum` once built, and
///   `separators.count == width - 1`;
/// - every element of child `i` is below `separators[i]`, and every
///   element of child `i + 1` is at least `separators[i]`;
/// - `children[i].count` is the child's element count and `count` their
///   sum, so that rank and offset descents read one node per level;
/// - all children are at the same height (leaves when the node's height
///   is 1); the tree, not the node, knows the height;
/// - a node reachable from more than one tree is never mutated.
@usableFromInline
final class _SortedInner<Element: Comparable>: ManagedBuffer<_SortedInnerHeader<Element>, _SortedChild> {
    /// Children per internal node at most.
    @inlinable static var maximum: Int { 16 }
    /// At least, except for the root.
    @inlinable static var minimum: Int { maximum / 2 }

    /// An empty node with room for `capacity` children.
    @inlinable
    static func make(capacity: Int, separators: ContiguousArray<Element> = []) -> _SortedInner {
        let buffer = create(minimumCapacity: capacity) { _ in
            _SortedInnerHeader(width: 0, capacity: capacity, count: 0, separators: separators)
        }
        return unsafeDowncast(buffer, to: _SortedInner.self)
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
        node.withUnsafeMutablePointers { header, storage in
            storage.initialize(from: children.baseAddress!, count: children.count)
            header.pointee.width = children.count
            header.pointee.count = children.reduce(0) { $0 + $1.count }
        }
        return node
    }

    deinit {
        _ = withUnsafeMutablePointers { header, storage in storage.deinitialize(count: header.pointee.width) }
    }

    @inlinable var width: Int { header.width }
    @inlinable var storedCapacity: Int { header.capacity }
    @inlinable var count: Int { header.count }

    @inlinable
    subscript(child: Int) -> _SortedChild {
        withUnsafeMutablePointerToElements { $0[child] }
    }

    /// Child `position`'s node, unretained: for descents that hold the
    /// tree's root, which keeps every node below it alive, and so need no
    /// reference count traffic (on a node not in cache, each retain waits
    /// for memory, and holds back the reads after it). `_SortedChild` starts
    /// with its strong reference, whose bits are an `Unmanaged`'s.
    @inlinable
    func unretainedChild(_ position: Int) -> Unmanaged<AnyObject> {
        withUnsafeMutablePointerToElements {
            UnsafeRawPointer($0 + position).load(as: Unmanaged<AnyObject>.self)
        }
    }

    /// Calls `body` with the children.
    @inlinable
    func withChildren<R>(_ body: (UnsafeBufferPointer<_SortedChild>) throws -> R) rethrows -> R {
        try withUnsafeMutablePointers { header, storage in
            try body(UnsafeBufferPointer(start: storage, count: header.pointee.width))
        }
    }

    /// Calls `body` with mutable access to the children (for a unique node).
    @inlinable
    func withMutableChildren<R>(_ body: (UnsafeMutableBufferPointer<_SortedChild>) throws -> R) rethrows -> R {
        try withUnsafeMutablePointers { header, storage in
            try body(UnsafeMutableBufferPointer(start: storage, count: header.pointee.width))
        }
    }

    /// The child whose subtree holds the probe's place: the number of
    /// separators the probe is not below (`probeIsBelow(s)` is probe < s).
    @inlinable
    func childIndex(probeIsBelow: (Element) -> Bool) -> Int {
        header.separators.withUnsafeBufferPointer { separators in
            var low = 0
            var high = separators.count
            while low < high {
                let middle = (low + high) >> 1
                if probeIsBelow(separators[middle]) { high = middle } else { low = middle + 1 }
            }
            return low
        }
    }

    /// A copy sharing the children and separators, with room for
    /// `capacity` (≥ width) children.
    @inlinable
    func copy(capacity: Int) -> _SortedInner {
        let separators = header.separators
        return withChildren { _SortedInner.make(children: $0, separators: separators, capacity: capacity) }
    }

    /// Inserts `child` at `position`, after `separator` (the bound between
    /// it and the child before). - Precondition: `width < capacity`,
    /// `position >= 1`.
    @inlinable
    func insert(_ child: _SortedChild, at position: Int, separator: Element) {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(width < header.pointee.capacity && position >= 1 && position <= width)
            (storage + position + 1).moveInitialize(from: storage + position, count: width - position)
            (storage + position).initialize(to: child)
            header.pointee.width = width + 1
            header.pointee.count += child.count
            header.pointee.separators.insert(separator, at: position - 1)
        }
    }

    /// Removes the child at `position` with the separator before it (or,
    /// for the first child, after it); returns the child.
    @inlinable
    func remove(at position: Int) -> _SortedChild {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(position >= 0 && position < width && width >= 2)
            let removed = (storage + position).move()
            (storage + position).moveInitialize(from: storage + position + 1, count: width - position - 1)
            header.pointee.width = width - 1
            header.pointee.count -= removed.count
            header.pointee.separators.remove(at: Swift.max(position - 1, 0))
            return removed
        }
    }

    /// Appends copies of `other`'s children in `range`, with `separator`
    /// between the last child here and the first appended (if any are here).
    /// - Precondition: room for them.
    @inlinable
    func append(from other: _SortedInner, _ range: Range<Int>, separator: Element?) {
        let otherSeparators = other.header.separators
        other.withChildren { source in
            withUnsafeMutablePointers { header, storage in
                let width = header.pointee.width
                precondition(width + range.count <= header.pointee.capacity && range.upperBound <= source.count)
                (storage + width).initialize(from: source.baseAddress! + range.lowerBound, count: range.count)
                header.pointee.width = width + range.count
                header.pointee.count += source[range].reduce(0) { $0 + $1.count }
                if width > 0, !range.isEmpty { header.pointee.separators.append(separator!) }
                if range.count > 1 {
                    header.pointee.separators.append(
                        contentsOf: otherSeparators[range.lowerBound..<(range.upperBound - 1)]
                    )
                }
            }
        }
    }

    /// Drops the children from `position` on (and their separators).
    @inlinable
    func removeSuffix(from position: Int) {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(position >= 1 && position <= width)
            let dropped = UnsafeBufferPointer(start: storage + position, count: width - position)
            header.pointee.count -= dropped.reduce(0) { $0 + $1.count }
            (storage + position).deinitialize(count: width - position)
            header.pointee.width = position
            header.pointee.separators.removeSubrange((position - 1)...)
        }
    }

    /// Drops the first `k` children and the separators after them.
    @inlinable
    func removePrefix(_ k: Int) {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(k >= 0 && k < width)
            let dropped = UnsafeBufferPointer(start: storage, count: k)
            header.pointee.count -= dropped.reduce(0) { $0 + $1.count }
            storage.deinitialize(count: k)
            storage.moveInitialize(from: storage + k, count: width - k)
            header.pointee.width = width - k
            header.pointee.separators.removeSubrange(0..<k)
        }
    }

    /// Sets child `position`'s count after its subtree changed by `delta`.
    @inlinable
    func adjust(child position: Int, by delta: Int) {
        withUnsafeMutablePointers { header, storage in
            storage[position].count += delta
            header.pointee.count += delta
        }
    }
}

extension _SortedInner {
    /// Inserts `child` first, with `separator` between it and the old first
    /// child. - Precondition: `width < capacity`.
    @inlinable
    func prepend(_ child: _SortedChild, separator: Element) {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(width < header.pointee.capacity)
            (storage + 1).moveInitialize(from: storage, count: width)
            storage.initialize(to: child)
            header.pointee.width = width + 1
            header.pointee.count += child.count
            header.pointee.separators.insert(separator, at: 0)
        }
    }
}
