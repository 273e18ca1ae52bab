import Foundation

/// One entry of an index: the indexed values of a record, then its ID, in
/// an order-preserving encoding, so that comparing two entries is comparing
/// their bytes (`memcmp` order) and equals the documented order of
/// ``Value`` (``Value/indexOrder``) field by field, then of ``RecordID``.
///
/// Storage is inline up to ``inlineCapacity`` bytes (most keys: a short
/// string, a small integer and an integer ID), so that an entry takes 32
/// bytes in a B+tree leaf. A longer entry keeps its first 16 bytes inline
/// and the rest in an array: a 40-byte title entry then costs a 48-byte
/// block beside its slot, where the whole entry in an array took 80.
struct IndexEntry: Sendable {
    /// Bytes kept inline: three words, a 32-bit and a 16-bit tail.
    static let inlineCapacity = 30

    enum Storage: Sendable {
        /// The bytes, big-endian in the words (the first byte is the most
        /// significant of the first word), zero-padded, and the count.
        case inline(UInt64, UInt64, UInt64, UInt32, UInt16, UInt8)
        /// More than `inlineCapacity` bytes: the first 16 as two
        /// big-endian words, then the others. Never mutated.
        case split(UInt64, UInt64, [UInt8])
    }

    var storage: Storage

    /// The entry holding `bytes`. O(count).
    init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { IndexEntry($0) }
    }

    /// The entry holding a copy of `bytes`. O(count).
    init(_ bytes: UnsafeRawBufferPointer) {
        let w = Self.words(of: bytes)
        if bytes.count <= Self.inlineCapacity {
            storage = .inline(w.0, w.1, w.2, UInt32(w.3 >> 16), UInt16(truncatingIfNeeded: w.3), UInt8(bytes.count))
        } else {
            storage = .split(w.0, w.1, Array(bytes[16...]))
        }
    }

    /// The first 30 bytes (zero-padded) as three big-endian words and a
    /// big-endian 48-bit tail: comparing them compares the bytes. O(1).
    static func words(of bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64, UInt64, UInt64) {
        // One copy into zeroed words, four byte swaps: entries are decoded
        // by the million at open.
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let count = Swift.min(bytes.count, 30)
        if count > 0 {
            withUnsafeMutableBytes(of: &words) {
                $0.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: count)
            }
        }
        return (
            UInt64(bigEndian: words.0), UInt64(bigEndian: words.1), UInt64(bigEndian: words.2),
            UInt64(bigEndian: words.3) >> 16
        )
    }

    /// The number of bytes.
    var count: Int {
        switch storage {
        case .inline(_, _, _, _, _, let count): return Int(count)
        case .split(_, _, let rest): return 16 + rest.count
        }
    }

    /// Calls `body` with the bytes, contiguous, without allocating on the
    /// heap. O(count).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch storage {
        case let .inline(w0, w1, w2, w3, w4, count):
            var buffer = (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian, w4.bigEndian)
            return try withUnsafeBytes(of: &buffer) { try body(UnsafeRawBufferPointer(rebasing: $0[..<Int(count)])) }
        case let .split(w0, w1, rest):
            return try withUnsafeTemporaryAllocation(byteCount: 16 + rest.count, alignment: 8) { buffer in
                buffer.storeBytes(of: w0.bigEndian, toByteOffset: 0, as: UInt64.self)
                buffer.storeBytes(of: w1.bigEndian, toByteOffset: 8, as: UInt64.self)
                rest.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[16...]).copyMemory(from: $0) }
                return try body(UnsafeRawBufferPointer(buffer))
            }
        }
    }

    /// The bytes. O(count); allocates.
    var bytes: [UInt8] { withBytes { Array($0) } }

    /// The first 30 bytes as in ``words(of:)``, from either storage (a
    /// split entry has more than 30 bytes, so its rest has at least 15).
    @inline(__always)
    var leadingWords: (UInt64, UInt64, UInt64, UInt64) {
        switch storage {
        case let .inline(w0, w1, w2, w3, w4, _): return (w0, w1, w2, UInt64(w3) << 16 | UInt64(w4))
        case let .split(w0, w1, rest):
            return rest.withUnsafeBytes {
                (
                    w0, w1,
                    UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
                    UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 6, as: UInt64.self)) & 0xFFFF_FFFF_FFFF
                )
            }
        }
    }
}

extension IndexEntry: Comparable, Hashable {
    /// Byte order, a prefix first. O(1) unless the first 30 bytes are equal;
    /// never allocates.
    /// Inlined into the B+tree's binary searches (a probe's words are then
    /// read once per search, not per comparison); the rare byte-wise
    /// comparison is a call.
    @inline(__always)
    static func < (lhs: IndexEntry, rhs: IndexEntry) -> Bool {
        let a = lhs.leadingWords
        let b = rhs.leadingWords
        // Zero padding sorts a prefix before its extensions only when the
        // next byte is not zero; the counts settle equal words.
        if a.0 != b.0 { return a.0 < b.0 }
        if a.1 != b.1 { return a.1 < b.1 }
        if a.2 != b.2 { return a.2 < b.2 }
        if a.3 != b.3 { return a.3 < b.3 }
        if case .inline(_, _, _, _, _, let ac) = lhs.storage, case .inline(_, _, _, _, _, let bc) = rhs.storage {
            return ac < bc
        }
        return lhs.precedesBytewise(rhs)
    }

    /// Byte order when both entries are longer than 30 bytes, or one is a
    /// zero-padded prefix of the other.
    @inline(never)
    func precedesBytewise(_ rhs: IndexEntry) -> Bool {
        let lhs = self
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
        case let (.inline(a0, a1, a2, a3, a4, ac), .inline(b0, b1, b2, b3, b4, bc)):
            return a0 == b0 && a1 == b1 && a2 == b2 && a3 == b3 && a4 == b4 && ac == bc
        case let (.split(a0, a1, a), .split(b0, b1, b)):
            return a0 == b0 && a1 == b1 && a == b
        default:
            return false
        }
    }

    func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: $0) }
    }
}
