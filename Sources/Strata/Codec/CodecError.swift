/// Why bytes could not be decoded. Every case names the byte offset where
/// decoding stopped, so a damaged file can be reported precisely.
public enum CodecError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ends at `offset` but `needed` more bytes were expected.
    case truncated(offset: Int, needed: Int)
    /// The input does not start with the expected magic bytes.
    case badMagic(expected: [UInt8], found: [UInt8])
    /// The encoding's format version is not one this build reads.
    case unsupportedVersion(kind: String, found: UInt64, supported: UInt64)
    /// An unknown type tag.
    case invalidTag(offset: Int, tag: UInt8, context: String)
    /// A variable-length integer longer than 10 bytes or out of range.
    case malformedInteger(offset: Int)
    /// An integer written in more bytes than its shortest encoding (a
    /// trailing zero group): refused, so equal values have equal bytes.
    case overlongInteger(offset: Int)
    /// A length or count larger than the bytes that remain could hold.
    case lengthTooLarge(offset: Int, length: UInt64, remaining: Int)
    /// A string that is not valid UTF-8.
    case invalidUTF8(offset: Int)
    /// Lists and maps nested deeper than the decoder allows.
    case nestingTooDeep(offset: Int, limit: Int)
    /// A key that appears twice in one map, record or table.
    case duplicateKey(offset: Int, key: String)
    /// Record fields or map keys not in ascending UTF-8 order (the
    /// encoding is canonical: equal values have equal bytes).
    case unorderedFields(offset: Int)
    /// A reference to a field name that was not defined earlier.
    case unknownFieldName(offset: Int, index: UInt64)
    /// Bytes left after a complete encoding.
    case trailingBytes(offset: Int, count: Int)
    /// An index declaration that cannot hold (no fields, or a unique index
    /// two records violate).
    case invalidIndex(offset: Int, table: String, index: String, reason: String)
    /// A database's chunked encoding that does not check (a checksum, a
    /// size, a count or the records of a chunk), with the reason.
    case damaged(offset: Int, reason: String)

    /// A one-line explanation with the offset.
    public var description: String {
        switch self {
        case let .truncated(offset, needed): return "input ends at offset \(offset); \(needed) more bytes expected"
        case let .badMagic(expected, found): return "expected magic \(expected), found \(found)"
        case let .unsupportedVersion(kind, found, supported):
            return found == 0
                ? "\(kind) format version 0 does not exist (versions start at 1)"
                : "\(kind) format version \(found) is newer than this build reads (up to \(supported))"
        case let .invalidTag(offset, tag, context): return "unknown \(context) tag \(tag) at offset \(offset)"
        case let .malformedInteger(offset): return "malformed integer at offset \(offset)"
        case let .overlongInteger(offset):
            return "integer at offset \(offset) is not in its shortest encoding"
        case let .lengthTooLarge(offset, length, remaining):
            return "length \(length) at offset \(offset) exceeds the \(remaining) bytes that remain"
        case let .invalidUTF8(offset): return "invalid UTF-8 in the string at offset \(offset)"
        case let .nestingTooDeep(offset, limit): return "values nested deeper than \(limit) at offset \(offset)"
        case let .duplicateKey(offset, key): return "duplicate key \(key) at offset \(offset)"
        case let .unorderedFields(offset): return "field or key out of order at offset \(offset)"
        case let .unknownFieldName(offset, index): return "undefined field name #\(index) at offset \(offset)"
        case let .trailingBytes(offset, count):
            return "\(count) unexpected bytes after the encoding at offset \(offset)"
        case let .invalidIndex(offset, table, index, reason):
            return "index \(table).\(index) at offset \(offset) is invalid: \(reason)"
        case let .damaged(offset, reason): return "damaged at offset \(offset): \(reason)"
        }
    }
}

extension CodecError {
    /// The version found and the newest this build reads, when the bytes
    /// are a newer format's (not damage: a newer build wrote them); nil
    /// for any other error, version 0 included. For the package's other
    /// storages (PostgreSQL), which report it in their own errors.
    package var newerVersion: (found: UInt64, supported: UInt64)? {
        guard case let .unsupportedVersion(_, found, supported) = self, found > supported else { return nil }
        return (found, supported)
    }
}
