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
    /// the two share are skipped by identity: O(d · log n) node visits for
    /// d differences when one is an edited copy of the other, O(n) at worst.
    @inlinable
    public func difference(from other: PersistentSortedSet) -> (inserted: [Element], removed: [Element]) {
        var inserted: [Element] = []
        var removed: [Element] = []
        _difference(from: other, inserted: { inserted.append($0) }, removed: { removed.append($0) }) { _, _ in }
        return (inserted, removed)
    }

    /// Walks both trees in order, skipping shared subtrees, and reports
    /// elements only in `self`, only in `other`, and equal pairs that are
    /// not the same stored element position of a shared leaf (`same`
    /// receives (new, old); a map uses it to find changed values).
    @inlinable
    func _difference(
        from other: PersistentSortedSet,
        inserted: (Element) -> Void,
        removed: (Element) -> Void,
        same: (Element, Element) -> Void
    ) {
        var new = _SubtreeWalk(self)
        var old = _SubtreeWalk(other)
        while true {
            switch (new.head, old.head) {
            case (nil, nil):
                return
            case (.subtree(let a, let ha)?, .subtree(let b, let hb)?):
                if a === b {
                    new.skip()
                    old.skip()
                } else if ha >= hb {
                    new.expand()
                } else {
                    old.expand()
                }
            case (.subtree?, _):
                new.expand()
            case (_, .subtree?):
                old.expand()
            case (.element(let a)?, nil):
                inserted(a)
                new.skip()
            case (nil, .element(let b)?):
                removed(b)
                old.skip()
            case (.element(let a)?, .element(let b)?):
                if a < b {
                    inserted(a)
                    new.skip()
                } else if b < a {
                    removed(b)
                    old.skip()
                } else {
                    same(a, b)
                    new.skip()
                    old.skip()
                }
            }
        }
    }
}

/// Walks a tree in order, one element or one whole subtree at a time.
@usableFromInline
struct _SubtreeWalk<Element: Comparable> {
    @usableFromInline typealias _Set = PersistentSortedSet<Element>

    /// What comes next.
    @usableFromInline
    enum Head {
        case element(Element)
        case subtree(AnyObject, height: Int)
    }

    /// Nodes being walked, with the position of their next entry.
    @usableFromInline var stack: [(node: AnyObject, height: Int, next: Int)] = []
    /// The root, until it is expanded.
    @usableFromInline var root: (node: AnyObject, height: Int)?

    @inlinable
    init(_ set: _Set) {
        root = set._root.map { ($0, set._height) }
    }

    @inlinable
    var head: Head? {
        mutating get {
            if let root { return .subtree(root.node, height: root.height) }
            while let top = stack.last {
                if top.next < _Set._width(top.node, height: top.height) {
                    if top.height == 0 { return .element(_Set._leaf(top.node)[top.next]) }
                    return .subtree(_Set._inner(top.node)[top.next].node, height: top.height - 1)
                }
                stack.removeLast()
            }
            return nil
        }
    }

    /// Moves past the head.
    @inlinable
    mutating func skip() {
        if root != nil {
            root = nil
        } else {
            stack[stack.count - 1].next += 1
        }
    }

    /// Replaces the head subtree by its entries.
    @inlinable
    mutating func expand() {
        guard case .subtree(let node, let height)? = head else { return }
        skip()
        stack.append((node, height, 0))
    }
}
