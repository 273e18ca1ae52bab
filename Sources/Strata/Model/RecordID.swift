import Foundation

/// The identity of a record within its table: an integer, a string or a UUID.
///
/// IDs of different kinds never compare equal (`RecordID(1)` is not
/// `RecordID("1")`), and string IDs compare, hash and sort by their UTF-8
/// bytes, like ``Key`` (`RecordID("\u{E9}")` is not `RecordID("e\u{301}")`).
/// Hashing an ID costs one hash of its payload (for an integer, a few
/// multiplies: see `_rawHashValue(seed:)`).
public struct RecordID: Hashable, Sendable, Comparable {
    /// The ID's payload.
    public enum Kind: Hashable, Sendable {
        case integer(Int64)
        case string(String)
        case uuid(UUID)

        /// Same kind and payload; strings by their UTF-8 bytes. O(length).
        public static func == (lhs: Kind, rhs: Kind) -> Bool {
            switch (lhs, rhs) {
            case let (.integer(a), .integer(b)): return a == b
            case let (.string(a), .string(b)): return Key(a) == Key(b)
            case let (.uuid(a), .uuid(b)): return a == b
            default: return false
            }
        }

        /// Hashes the kind and payload; strings by their UTF-8 bytes.
        public func hash(into hasher: inout Hasher) {
            switch self {
            case .integer(let value):
                hasher.combine(0 as UInt8)
                hasher.combine(value)
            case .string(let value):
                hasher.combine(1 as UInt8)
                hasher.combine(Key(value))
            case .uuid(let value):
                hasher.combine(2 as UInt8)
                hasher.combine(value)
            }
        }
    }

    /// The payload.
    public let kind: Kind

    /// An integer ID.
    public init(_ value: Int64) {
        kind = .integer(value)
    }

    /// An integer ID.
    public init(_ value: Int) {
        kind = .integer(Int64(value))
    }

    /// A string ID.
    public init(_ value: String) {
        kind = .string(value)
    }

    /// A UUID ID.
    public init(_ value: UUID) {
        kind = .uuid(value)
    }

    /// Same kind and payload, as ``Kind`` compares them. Two integer IDs
    /// compare inline: a table's lookups compare IDs at every level they
    /// find an item.
    @inline(__always)
    public static func == (lhs: RecordID, rhs: RecordID) -> Bool {
        if case .integer(let a) = lhs.kind, case .integer(let b) = rhs.kind { return a == b }
        return lhs.kind == rhs.kind
    }

    /// Hashes the kind and payload, as ``Kind`` does.
    public func hash(into hasher: inout Hasher) {
        kind.hash(into: &hasher)
    }

    /// The hash that `hashValue` returns (seed 0): for an integer ID, a
    /// mix of the integer and a per-process random key (murmur3's 64-bit
    /// finalizer of their exclusive or, a bijection); for the others, the
    /// standard library's seeded hash of the kind and payload.
    ///
    /// `PersistentMap` files its keys by `hashValue`, so a table's trie
    /// costs a few multiplies per integer ID instead of a SipHash, and
    /// no two integer IDs ever share a hash (no collision node, no path
    /// deeper than 16 levels). The mix, not the integer itself, keeps
    /// IDs given out in sequence or in steps scattered, so a change copies
    /// small leaves rather than full ones and the root's subtries (built
    /// on every core at open) stay even; the key, drawn like the
    /// standard library's seed (fixed under `SWIFT_DETERMINISTIC_HASHING`),
    /// keeps IDs that come from outside (an import, a peer) from being
    /// chosen to pile up in one subtrie. `Dictionary` and `Set` pass their
    /// own nonzero seed and get the seeded hash of the seed and the ID.
    public func _rawHashValue(seed: Int) -> Int {
        if seed == 0, case .integer(let value) = kind {
            var x = UInt64(bitPattern: value) ^ _recordIDHashKey
            x ^= x &>> 33
            x &*= 0xff51_afd7_ed55_8ccd
            x ^= x &>> 33
            x &*= 0xc4ce_b9fe_1a85_ec53
            x ^= x &>> 33
            return Int(Int64(bitPattern: x))
        }
        var hasher = Hasher()
        if seed != 0 { hasher.combine(seed) }
        kind.hash(into: &hasher)
        return hasher.finalize()
    }

    /// Orders integers before strings before UUIDs, then by value (strings
    /// by their UTF-8 bytes), so that listings and encodings are deterministic.
    public static func < (lhs: RecordID, rhs: RecordID) -> Bool {
        switch (lhs.kind, rhs.kind) {
        case let (.integer(a), .integer(b)): return a < b
        case let (.string(a), .string(b)): return Key(a) < Key(b)
        case let (.uuid(a), .uuid(b)): return a.bytesPrecede(b)
        case (.integer, _): return true
        case (.string, .uuid): return true
        default: return false
        }
    }
}

/// The key mixed into integer IDs' hashes: random per process, from the
/// standard library's seeded hasher (so fixed when its hashing is made
/// deterministic).
let _recordIDHashKey: UInt64 = {
    var hasher = Hasher()
    hasher.combine(0x5354_5241_5441 as UInt64)
    return UInt64(bitPattern: Int64(hasher.finalize()))
}()

extension RecordID: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    /// An integer ID from a literal.
    public init(integerLiteral value: Int64) {
        self.init(value)
    }

    /// A string ID from a literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }
}

extension RecordID: CustomStringConvertible {
    /// `42`, `"song-7"` or the UUID string. A string's quotes,
    /// backslashes and invisible characters are escaped (`"a\"b"`,
    /// `"x\0"`); two strings equal to a reader but not in their bytes
    /// print alike: ``exactDescription`` tells them apart.
    public var description: String {
        switch kind {
        case .integer(let value): return String(value)
        case .string(let value): return Value.quoted(value)
        case .uuid(let value): return value.uuidString
        }
    }

    /// As ``description``, with every scalar of a string ID outside
    /// printable ASCII escaped (`"cafe\u{301}"`): two different IDs never
    /// print alike.
    public var exactDescription: String {
        if case .string(let value) = kind { return Value.escaped(value) }
        return description
    }
}

/// A reference from one record to another: the table and the ID.
public struct RecordReference: Hashable, Sendable, CustomStringConvertible {
    /// The referenced record's table.
    public var table: Key
    /// The referenced record's ID.
    public var id: RecordID

    /// A reference to record `id` of `table`.
    public init(table: Key, id: RecordID) {
        self.table = table
        self.id = id
    }

    /// `table/id`.
    public var description: String { "\(table)/\(id)" }
}
