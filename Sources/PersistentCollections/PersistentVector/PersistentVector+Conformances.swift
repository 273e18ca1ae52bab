extension PersistentVector: Equatable where Element: Equatable {
    /// Whether both hold equal elements in the same order. Leaves the two
    /// vectors share at the same positions are skipped without comparing
    /// their elements. O(n) at worst.
    @inlinable
    public static func == (lhs: PersistentVector, rhs: PersistentVector) -> Bool {
        lhs.isEqual(to: rhs, by: ==)
    }
}

extension PersistentVector {
    /// Whether both hold equivalent elements in the same order, by
    /// `areEquivalent`, which must be an equivalence relation: leaves the
    /// two vectors share at the same positions are skipped without
    /// comparing their elements (what `==` does, with another comparison:
    /// one that carries state, such as a nesting depth). O(n) at worst.
    @inlinable
    public func isEqual(to other: PersistentVector, by areEquivalent: (Element, Element) -> Bool) -> Bool {
        guard _count == other._count else { return false }
        if isIdentical(to: other) { return true }
        var position = 0
        while position < _count {
            let (a, aOffset, aStart) = _leaf(containing: position)
            let (b, bOffset, bStart) = other._leaf(containing: position)
            let run = Swift.min(a.count - aOffset, b.count - bOffset)
            let sameLeaf = a.isSameNode(as: b) && aOffset == bOffset && aStart == bStart
            if !sameLeaf && !a.elementsEqual(from: aOffset, b, from: bOffset, count: run, by: areEquivalent) {
                return false
            }
            position += run
        }
        return true
    }
}

extension PersistentVector: Hashable where Element: Hashable {
    /// Hashes the count and the elements in order. O(n).
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(_count)
        forEachChunk { chunk in
            for element in chunk { hasher.combine(element) }
        }
    }
}

extension PersistentVector: Encodable where Element: Encodable {
    /// Encodes the elements as an unkeyed list. O(n).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(element) }
    }
}

extension PersistentVector: Decodable where Element: Decodable {
    /// Decodes an unkeyed list of elements. O(n).
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        self.init()
        while !container.isAtEnd {
            append(try container.decode(Element.self))
        }
    }
}

extension PersistentVector: CustomStringConvertible {
    /// The elements as an array literal. O(n).
    public var description: String {
        var text = "["
        var first = true
        for element in self {
            if !first { text += ", " }
            first = false
            debugPrint(element, terminator: "", to: &text)
        }
        return text + "]"
    }
}

extension PersistentVector: CustomDebugStringConvertible {
    /// The type name and elements. O(n).
    public var debugDescription: String { "PersistentVector<\(Element.self)>(\(description))" }
}

extension PersistentVector {
    /// Whether both are the same storage (a vector and its unchanged
    /// copies): then they are equal, whatever their elements. False says
    /// nothing. O(1).
    @inlinable
    public func isIdentical(to other: PersistentVector) -> Bool {
        _count == other._count && _root === other._root && _tail === other._tail
    }
}
