import Foundation

/// A string compared, hashed and ordered by its exact UTF-8 bytes: the type
/// of field names, nested map keys, table names and metadata keys.
///
/// Swift's `String` compares by canonical equivalence, so `"\u{E9}"` (é
/// precomposed) equals `"e\u{301}"` (e and a combining accent) although
/// their bytes differ. A database keeps the bytes it was given and encodes
/// them, so every name it compares must compare as the bytes do; otherwise
/// two names that encode differently would be one key, and a value would
/// change spelling, or break `flatten` and `diff`, depending on which
/// equivalent arrived first. `Key` is that comparison:
///
///     Key("\u{E9}") == Key("e\u{301}")     // false
///     Key("caf\u{E9}") < Key("caff")        // false: 0xC3 sorts after 0x66
///
/// A literal is a key (`record["title"]`, `["a": 1]` as a map value), so
/// call sites read as they would with `String`. Equality and hashing are
/// O(length) over the bytes (one `memcmp`, after an O(1) check for two
/// strings with the same representation); ordering is bytewise, the order
/// the encoding writes fields and keys in.
public struct Key: Sendable {
    /// The string, with the bytes it was created from.
    public let string: String

    /// The key with the exact bytes of `string`. O(1).
    public init(_ string: String) {
        self.string = string
    }

    /// The key whose UTF-8 bytes are `utf8`; nil when they are not UTF-8
    /// (readers of other formats name fields from their bytes). O(n).
    package init?(utf8: UnsafeBufferPointer<UInt8>) {
        if utf8.allSatisfy({ $0 < 0x80 }) {
            self.init(String(decoding: utf8, as: UTF8.self))
        } else {
            guard let string = String(validating: utf8, as: UTF8.self) else { return nil }
            self.init(string)
        }
    }

    /// The number of UTF-8 bytes. O(1) for native strings.
    public var utf8Count: Int { string.utf8.count }

    /// Calls `body` with the UTF-8 bytes, contiguous.
    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return try Array(string.utf8).withUnsafeBufferPointer(body)
    }
}

extension Key: Hashable {
    /// Whether the UTF-8 bytes are equal. O(length).
    @inline(__always)
    public static func == (lhs: Key, rhs: Key) -> Bool {
        // Two strings with the same representation (one storage, or the
        // same short string held inline) have the same bytes: field and
        // table names compared while planning a query mostly are. Inlined
        // up to here, so that a planner's loop over paths makes no call
        // (around which it would retain the strings it compares).
        lhs.hasSameRepresentation(as: rhs) || lhs.hasSameBytes(as: rhs)
    }

    /// Whether the UTF-8 bytes are equal, when the representations differ.
    @inline(never)
    func hasSameBytes(as rhs: Key) -> Bool {
        let lhs = self
        guard lhs.utf8Count == rhs.utf8Count else { return false }
        return lhs.withUTF8 { a in
            rhs.withUTF8 { b in
                a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
            }
        }
    }

    /// Whether the two strings' bits are the same. O(1).
    @inline(__always)
    func hasSameRepresentation(as other: Key) -> Bool {
        withUnsafeBytes(of: string) { a in
            withUnsafeBytes(of: other.string) { b in
                // Two words on 64-bit platforms: loads, not a call to memcmp.
                guard a.count == 16 else { return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
                return a.load(as: UInt64.self) == b.load(as: UInt64.self)
                    && a.load(fromByteOffset: 8, as: UInt64.self) == b.load(fromByteOffset: 8, as: UInt64.self)
            }
        }
    }

    /// Hashes the UTF-8 bytes, then a terminator (so that the keys of a
    /// composite never run together). O(length).
    public func hash(into hasher: inout Hasher) {
        withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8)
    }
}

extension Key: Comparable {
    /// Bytewise order of the UTF-8 encodings (a prefix first). O(length).
    public static func < (lhs: Key, rhs: Key) -> Bool {
        lhs.withUTF8 { a in
            rhs.withUTF8 { b in
                let common = Swift.min(a.count, b.count)
                if common > 0 {
                    let order = memcmp(a.baseAddress!, b.baseAddress!, common)
                    if order != 0 { return order < 0 }
                }
                return a.count < b.count
            }
        }
    }
}

extension Key: ExpressibleByStringInterpolation {
    /// A key from a literal, `"title"`.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// A key from an interpolated literal, `"field\(i)"`.
    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(String(stringInterpolation: stringInterpolation))
    }
}

extension Key: CustomStringConvertible, CustomDebugStringConvertible {
    /// The string itself.
    public var description: String { string }

    /// The string as a quoted, escaped literal.
    public var debugDescription: String { String(reflecting: string) }
}

extension Key: Codable {
    /// Decodes a single string. - Throws: the decoder's error when it holds
    /// something else.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the string as a single value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}

extension String {
    /// Whether `self` and `other` have the same UTF-8 bytes (`==` on
    /// `String` is canonical equivalence). O(length).
    func hasSameUTF8(as other: String) -> Bool {
        Key(self) == Key(other)
    }
}
