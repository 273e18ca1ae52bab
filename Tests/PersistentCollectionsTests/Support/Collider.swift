/// A key whose hash the test chooses: equal `hash` values give equal
/// `hashValue`s, so keys can be made to collide fully (constant hash) or to
/// share most of their hash bits.
struct Collider: Hashable, Codable, CustomStringConvertible {
    var id: Int
    var hash: Int

    init(_ id: Int, hash: Int) {
        self.id = id
        self.hash = hash
    }

    static func == (lhs: Collider, rhs: Collider) -> Bool { lhs.id == rhs.id }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    var description: String { "#\(id)/h\(hash)" }
}

/// How test keys hash.
enum KeyShape: String, CaseIterable, CustomStringConvertible {
    case distinct, fewBits, constant

    func key(_ id: Int) -> Collider {
        switch self {
        case .distinct: return Collider(id, hash: id)
        case .fewBits: return Collider(id, hash: id % 5)
        case .constant: return Collider(id, hash: 42)
        }
    }

    var description: String { rawValue }
}
