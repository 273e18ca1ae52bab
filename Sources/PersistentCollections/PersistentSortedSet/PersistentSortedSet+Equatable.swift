extension PersistentSortedSet: Equatable {
    /// Same elements. O(1) for two copies of one tree, else O(n).
    @inlinable
    public static func == (lhs: PersistentSortedSet, rhs: PersistentSortedSet) -> Bool {
        if lhs._root === rhs._root { return true }
        return lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}

extension PersistentSortedSet: Hashable where Element: Hashable {
    /// Hashes the elements in order. O(n).
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for element in self { hasher.combine(element) }
    }
}

extension PersistentSortedSet: CustomStringConvertible {
    /// `[a, b, c]`.
    public var description: String {
        "[" + map { String(describing: $0) }.joined(separator: ", ") + "]"
    }
}

extension PersistentSortedSet: Encodable where Element: Encodable {
    /// Encodes the elements in order, as an unkeyed container.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(element) }
    }
}

extension PersistentSortedSet: Decodable where Element: Decodable {
    /// Decodes strictly ascending elements. - Throws: `DecodingError` when
    /// they are not.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var elements: [Element] = []
        while !container.isAtEnd {
            let element = try container.decode(Element.self)
            if let last = elements.last, !(last < element) {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "elements are not strictly ascending"
                )
            }
            elements.append(element)
        }
        self.init(sortedElements: elements)
    }
}

extension PersistentSortedSet {
    /// What differs from `other` to `self`: elements only in `self`
    /// (inserted) and only in `other` (removed), each ascending. Subtrees
    /// the two share are skipped by identity: O(differences · log n) when
    /// one is an edited copy of the other, O(n) at worst.
    public func difference(from other: PersistentSortedSet) -> (inserted: [Element], removed: [Element]) {
        var inserted: [Element] = []
        var removed: [Element] = []
        var new = _LeafWalk(_root)
        var old = _LeafWalk(other._root)
        while true {
            // Skip leaves both trees share.
            while let a = new.leaf, let b = old.leaf, a === b, new.position == 0, old.position == 0 {
                new.nextLeaf()
                old.nextLeaf()
            }
            switch (new.element, old.element) {
            case (nil, nil):
                return (inserted, removed)
            case (let a?, nil):
                inserted.append(a)
                new.advance()
            case (nil, let b?):
                removed.append(b)
                old.advance()
            case (let a?, let b?):
                if a < b {
                    inserted.append(a)
                    new.advance()
                } else if b < a {
                    removed.append(b)
                    old.advance()
                } else {
                    new.advance()
                    old.advance()
                }
            }
        }
    }
}

/// Walks the leaves of a tree in order, one element or one leaf at a time.
struct _LeafWalk<Element: Comparable> {
    var leaves: [_SortedNode<Element>] = []
    var index = 0
    var position = 0

    init(_ root: _SortedNode<Element>?) {
        // Leaves collected by a walk that visits shared subtrees once per
        // tree: O(leaves), the price of a simple merge.
        func collect(_ node: _SortedNode<Element>) {
            if node.isLeaf {
                if !node.elements.isEmpty { leaves.append(node) }
            } else {
                for child in node.children { collect(child) }
            }
        }
        if let root { collect(root) }
    }

    var leaf: _SortedNode<Element>? { index < leaves.count ? leaves[index] : nil }

    var element: Element? { leaf.map { $0.elements[position] } }

    mutating func advance() {
        position += 1
        if let leaf, position >= leaf.elements.count { nextLeaf() }
    }

    mutating func nextLeaf() {
        index += 1
        position = 0
    }
}
