import Foundation

/// One entry of an index: the indexed values of a record, then its ID, in
/// an order-preserving encoding, so that comparing two entries is comparing
/// their bytes (`memcmp` order) and equals the documented order of
/// ``Value`` (``Value/indexOrder``) field by field, then of ``RecordID``.
///
/// Storage is inline up to ``inlineCapacity`` bytes (most keys: a short
/// string, a small integer and an integer ID) and one heap array beyond (a
/// single allocation of 32 bytes plus the entry's), so that an entry takes
/// 32 bytes in a B+tree leaf.
struct IndexEntry: Sendable {
    /// Bytes kept inline: three words and four more bytes.
    static let inlineCapacity = 28

    enum Storage: Sendable {
        /// The bytes, big-endian in the words (the first byte is the most
        /// significant of `w0`), zero-padded, and the count.
        case inline(UInt64, UInt64, UInt64, UInt32, UInt8)
        /// More than `inlineCapacity` bytes. Never mutated.
        case heap([UInt8])
    }

    var storage: Storage

    /// The entry holding `bytes`. O(count).
    init(_ bytes: [UInt8]) {
        guard bytes.count <= Self.inlineCapacity else {
            storage = .heap(bytes)
            return
        }
        let words = bytes.withUnsafeBufferPointer { Self.words(of: UnsafeRawBufferPointer($0)) }
        storage = .inline(words.0, words.1, words.2, words.3, UInt8(bytes.count))
    }

    /// The first 28 bytes (zero-padded) as three big-endian words and a
    /// big-endian 32-bit tail: comparing them compares the bytes.
    static func words(of bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64, UInt64, UInt32) {
        func word(_ start: Int, _ width: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in start..<(start + width) {
                value <<= 8
                if i < bytes.count { value |= UInt64(bytes[i]) }
            }
            return value
        }
        return (word(0, 8), word(8, 8), word(16, 8), UInt32(word(24, 4)))
    }

    /// The number of bytes.
    var count: Int {
        switch storage {
        case .inline(_, _, _, _, let count): return Int(count)
        case .heap(let bytes): return bytes.count
        }
    }

    /// Calls `body` with the bytes, without allocating. O(1).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch storage {
        case .heap(let bytes):
            return try bytes.withUnsafeBytes(body)
        case let .inline(w0, w1, w2, w3, count):
            var buffer = (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)
            return try withUnsafeBytes(of: &buffer) { try body(UnsafeRawBufferPointer(rebasing: $0[..<Int(count)])) }
        }
    }

    /// The bytes. O(count); allocates.
    var bytes: [UInt8] { withBytes { Array($0) } }

    /// The leading words of either storage (a heap entry has more than 28
    /// bytes, so its words are four loads).
    var leadingWords: (UInt64, UInt64, UInt64, UInt32) {
        switch storage {
        case let .inline(w0, w1, w2, w3, _): return (w0, w1, w2, w3)
        case .heap(let bytes):
            return bytes.withUnsafeBytes {
                (
                    UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
                    UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                    UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
                    UInt32(bigEndian: $0.loadUnaligned(fromByteOffset: 24, as: UInt32.self))
                )
            }
        }
    }
}

extension IndexEntry: Comparable, Hashable {
    /// Byte order, a prefix first. O(1) unless the first 28 bytes are equal;
    /// never allocates.
    static func < (lhs: IndexEntry, rhs: IndexEntry) -> Bool {
        let a = lhs.leadingWords
        let b = rhs.leadingWords
        // Zero padding sorts a prefix before its extensions only when the
        // next byte is not zero; the counts settle equal words.
        if a.0 != b.0 { return a.0 < b.0 }
        if a.1 != b.1 { return a.1 < b.1 }
        if a.2 != b.2 { return a.2 < b.2 }
        if a.3 != b.3 { return a.3 < b.3 }
        if case .inline(_, _, _, _, let ac) = lhs.storage, case .inline(_, _, _, _, let bc) = rhs.storage {
            return ac < bc
        }
        // Both longer than 28 bytes, or one a zero-padded prefix of the other.
        return lhs.withBytes { x in
            rhs.withBytes { y in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
    }

    /// Equal bytes. O(1) for two inline entries.
    static func == (lhs: IndexEntry, rhs: IndexEntry) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case let (.inline(a0, a1, a2, a3, ac), .inline(b0, b1, b2, b3, bc)):
            return a0 == b0 && a1 == b1 && a2 == b2 && a3 == b3 && ac == bc
        case let (.heap(a), .heap(b)):
            return a == b
        default:
            return false
        }
    }

    func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: $0) }
    }
}
