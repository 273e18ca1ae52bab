extension PersistentSortedSet {
    /// Builds a set from elements handed over one at a time in strictly
    /// ascending order, for input that is not a sequence to iterate (a
    /// decoder that may stop at damage): leaves are filled to one under
    /// their maximum as the elements come (room for an insert), and
    /// ``build()`` adds the levels above.
    ///
    ///     var builder = PersistentSortedSet<Int>.Builder()
    ///     for id in sortedIDs { builder.append(id) }
    ///     let ids = builder.build()
    ///
    /// The result is the set ``PersistentSortedSet/init(sortedElements:)``
    /// builds from the same elements.
    ///
    /// Not copyable: it fills its leaf in place, and a copy would share
    /// that leaf with the original, or with the set one of them built.
    @frozen
    public struct Builder: ~Copyable {
        /// The sealed leaves, each filled to `_Leaf.filled`, and their first elements.
        @usableFromInline var _level: [_SortedChild]
        @usableFromInline var _firsts: [Element]
        /// The leaf being filled; not in `_level` yet.
        @usableFromInline var _leaf: _Leaf?

        /// An empty builder.
        @inlinable
        public init() {
            _level = []
            _firsts = []
            _leaf = nil
        }

        /// Appends `element`. O(1) amortized.
        /// - Precondition: `element` is above every element appended
        ///   before (checked in debug builds).
        @inlinable
        public mutating func append(_ element: Element) {
            if let leaf = _leaf, leaf.width < _Leaf.filled {
                assert(leaf[leaf.width - 1] < element, "elements are not strictly ascending")
                leaf.append(element)
                return
            }
            assert(_leaf.map { $0[$0.width - 1] < element } ?? true, "elements are not strictly ascending")
            _seal()
            let leaf = _Leaf.make(capacity: _Leaf.maximum)
            leaf.append(element)
            _leaf = leaf
        }

        /// Moves the leaf being filled into the sealed level.
        @inlinable
        mutating func _seal() {
            guard let leaf = _leaf else { return }
            _level.append(_SortedChild(node: leaf, count: leaf.width))
            _firsts.append(leaf[0])
            _leaf = nil
        }

        /// The set of the elements appended. O(n / 30): the levels above
        /// the leaves.
        @inlinable
        public consuming func build() -> PersistentSortedSet {
            _seal()
            guard !_level.isEmpty else { return PersistentSortedSet() }
            var level = _level
            var firsts = _firsts
            PersistentSortedSet._balanceLast(&level, &firsts, height: 0)
            return PersistentSortedSet(leaves: level, firsts: firsts)
        }
    }
}
