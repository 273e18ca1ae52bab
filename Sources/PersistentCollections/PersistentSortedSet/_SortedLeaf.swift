/// The header of a leaf: how many elements it holds and has room for.
@usableFromInline
struct _SortedLeafHeader {
    @usableFromInline var width: Int
    @usableFromInline var capacity: Int

    @inlinable
    init(width: Int, capacity: Int) {
        self.width = width
        self.capacity = capacity
    }
}

/// A leaf of a persistent B+tree: its elements, strictly ascending, stored
/// after the header in the leaf's one allocation.
///
/// Storage invariants (the unsafe code below keeps them):
/// - elements `0..<width` are initialized, `width..<capacity` are not;
/// - `width <= capacity <= maximum`, and `capacity` is at most what the
///   allocation holds;
/// - a leaf reachable from more than one tree is never mutated: writers
///   check `isKnownUniquelyReferenced` and copy first.
@usableFromInline
final class _SortedLeaf<Element: Comparable>: ManagedBuffer<_SortedLeafHeader, Element> {
    /// Elements per leaf at most: about 32 (a path copy copies one leaf),
    /// as many as fill a power-of-two allocation with the 32 bytes of
    /// object and leaf header. Allocators serve power-of-two sizes exactly,
    /// where 32 elements of 32 bytes (1,056 bytes) would take a 1,280-byte
    /// block: 7 bytes per element lost.
    @inlinable static var maximum: Int {
        let stride = MemoryLayout<Element>.stride
        let budget = 1 << (Int.bitWidth - 1 - (32 + 32 * stride).leadingZeroBitCount)
        return Swift.max(8, (budget - 32) / stride)
    }
    /// At least, except for a root leaf.
    @inlinable static var minimum: Int { maximum / 2 }
    /// Elements per leaf in a set built from sorted input: one under
    /// ``maximum``. A full leaf splits on its first insert, and with the
    /// old version kept that split is two new leaves and the parent's
    /// separators copied; edits spread over a large index reach each leaf
    /// about once, so one free slot spares most splits. Measured at 1M
    /// 32-byte elements, an entry moved with the old version kept retained
    /// 5.4 kB and retains 4.0 kB, for 1.1 more heap bytes per entry (34.8
    /// → 35.8); a 90% fill retained 3.8 kB for 3.6 more.
    @inlinable static var filled: Int { maximum - 1 }

    /// An empty leaf with room for `capacity` elements.
    @inlinable
    static func make(capacity: Int) -> _SortedLeaf {
        let buffer = create(minimumCapacity: capacity) { _ in _SortedLeafHeader(width: 0, capacity: capacity) }
        return unsafeDowncast(buffer, to: _SortedLeaf.self)
    }

    /// A leaf holding a copy of `elements`, with room for `capacity`.
    @inlinable
    static func make(copying elements: UnsafeBufferPointer<Element>, capacity: Int) -> _SortedLeaf {
        precondition(elements.count <= capacity)
        let leaf = make(capacity: capacity)
        leaf.withUnsafeMutablePointers { header, storage in
            storage._initialize(copying: elements.baseAddress!, count: elements.count)
            header.pointee.width = elements.count
        }
        return leaf
    }

    deinit {
        // Through `_NestedRelease`: an element may hold sorted maps or sets
        // nested in it without bound, each freed inside the one before.
        withUnsafeMutablePointers { header, storage in storage._destroyElementsOfNode(count: header.pointee.width) }
    }

    /// The header, through a pointer: the `header` property of
    /// `ManagedBuffer` pays a dynamic exclusivity check per access.
    @inlinable
    var _header: UnsafeMutablePointer<_SortedLeafHeader> {
        withUnsafeMutablePointerToHeader { $0 }
    }

    @inlinable var width: Int { _header.pointee.width }
    @inlinable var storedCapacity: Int { _header.pointee.capacity }

    @inlinable
    subscript(position: Int) -> Element {
        withUnsafeMutablePointerToElements { $0[position] }
    }

    /// Calls `body` with the elements.
    @inlinable
    func withElements<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        try withUnsafeMutablePointers { header, storage in
            try body(UnsafeBufferPointer(start: storage, count: header.pointee.width))
        }
    }

    /// The position of the first element not below the probe: the number
    /// of elements for which `isBelow` holds (they come first).
    @inlinable
    func lowerBound(_ isBelow: (Element) -> Bool) -> Int {
        withUnsafeMutablePointers { header, storage in
            _touchLines(_lines(UnsafePointer(storage), count: header.pointee.width))
            return _partitionPoint(storage, from: 0, to: header.pointee.width, isBelow, is: true)
        }
    }

    /// A copy with room for `capacity` (≥ width) elements.
    @inlinable
    func copy(capacity: Int) -> _SortedLeaf {
        withElements { _SortedLeaf.make(copying: $0, capacity: capacity) }
    }

    /// Appends `element`. - Precondition: `width < capacity`.
    @inlinable
    func append(_ element: Element) {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(width < header.pointee.capacity, "a leaf over its capacity")
            (storage + width).initialize(to: element)
            header.pointee.width = width + 1
        }
    }

    /// Appends the elements `next` returns until it returns nil or the leaf
    /// holds `limit` (at most its capacity).
    /// - Precondition: they ascend strictly, from above the leaf's last
    ///   element (checked in debug builds).
    @inlinable
    func append(upTo limit: Int, _ next: () -> Element?) {
        withUnsafeMutablePointers { header, storage in
            var width = header.pointee.width
            precondition(limit <= header.pointee.capacity, "a leaf over its capacity")
            while width < limit, let element = next() {
                assert(width == 0 || storage[width - 1] < element, "elements are not strictly ascending")
                (storage + width).initialize(to: element)
                width += 1
            }
            header.pointee.width = width
        }
    }

    /// Inserts at `position`. - Precondition: `width < capacity`.
    @inlinable
    func insert(_ element: Element, at position: Int) {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(width < header.pointee.capacity && position >= 0 && position <= width)
            (storage + position + 1).moveInitialize(from: storage + position, count: width - position)
            (storage + position).initialize(to: element)
            header.pointee.width = width + 1
        }
    }

    /// Removes and returns the element at `position`.
    @inlinable
    func remove(at position: Int) -> Element {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(position >= 0 && position < width)
            let removed = (storage + position).move()
            (storage + position).moveInitialize(from: storage + position + 1, count: width - position - 1)
            header.pointee.width = width - 1
            return removed
        }
    }

    /// Replaces the element at `position`; returns the old one.
    @inlinable
    func replace(at position: Int, with element: Element) -> Element {
        withUnsafeMutablePointers { header, storage in
            precondition(position >= 0 && position < header.pointee.width)
            let old = (storage + position).move()
            (storage + position).initialize(to: element)
            return old
        }
    }

    /// Appends copies of `other`'s elements in `range`.
    /// - Precondition: room for them.
    @inlinable
    func append(from other: _SortedLeaf, _ range: Range<Int>) {
        other.withElements { source in
            withUnsafeMutablePointers { header, storage in
                let width = header.pointee.width
                precondition(width + range.count <= header.pointee.capacity && range.upperBound <= source.count)
                (storage + width)._initialize(copying: source.baseAddress! + range.lowerBound, count: range.count)
                header.pointee.width = width + range.count
            }
        }
    }

    /// Drops the elements from `position` on.
    @inlinable
    func removeSuffix(from position: Int) {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(position >= 0 && position <= width)
            (storage + position).deinitialize(count: width - position)
            header.pointee.width = position
        }
    }

    /// Drops the first `k` elements.
    @inlinable
    func removePrefix(_ k: Int) {
        withUnsafeMutablePointers { header, storage in
            let width = header.pointee.width
            precondition(k >= 0 && k <= width)
            storage.deinitialize(count: k)
            storage.moveInitialize(from: storage + k, count: width - k)
            header.pointee.width = width - k
        }
    }
}
