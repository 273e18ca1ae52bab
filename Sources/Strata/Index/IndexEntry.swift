/// One entry of an index: the indexed values of a record, then its ID, in
/// an order-preserving encoding, so that comparing two entries is comparing
/// their bytes (`memcmp` order) and equals the documented order of
/// ``Value`` (``Value/indexOrder``) field by field, then of ``RecordID``.
///
/// Storage is inline up to ``inlineCapacity`` bytes (most keys: a short
/// string, a small integer and an integer ID) and one exact-size heap
/// buffer beyond, so that an entry takes 32 bytes in a B+tree leaf.
struct IndexEntry: Sendable {
    /// Bytes kept inline: three words and four more bytes.
    static let inlineCapacity = 28

    enum Storage: Sendable {
        /// The bytes, big-endian in the words (the first byte is the most
        /// significant of `w0`), zero-padded, and the count.
        case inline(UInt64, UInt64, UInt64, UInt32, UInt8)
        /// More than `inlineCapacity` bytes.
        case heap(_IndexEntryBytes)
    }

    var storage: Storage

    /// The entry holding `bytes`. O(count).
    init(_ bytes: [UInt8]) {
        guard bytes.count <= Self.inlineCapacity else {
            storage = .heap(_IndexEntryBytes(bytes))
            return
        }
        var words: (UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0)
        bytes.withUnsafeBufferPointer { source in
            func word(_ start: Int) -> UInt64 {
                var value: UInt64 = 0
                for i in 0..<8 {
                    value <<= 8
                    if start + i < source.count { value |= UInt64(source[start + i]) }
                }
                return value
            }
            words.0 = word(0)
            words.1 = word(8)
            words.2 = word(16)
            var last: UInt32 = 0
            for i in 24..<28 {
                last <<= 8
                if i < source.count { last |= UInt32(source[i]) }
            }
            words.3 = last
        }
        storage = .inline(words.0, words.1, words.2, words.3, UInt8(bytes.count))
    }

    /// The number of bytes.
    var count: Int {
        switch storage {
        case .inline(_, _, _, _, let count): return Int(count)
        case .heap(let bytes): return bytes.bytes.count
        }
    }

    /// The bytes. O(count); allocates.
    var bytes: [UInt8] {
        switch storage {
        case .heap(let heap): return heap.bytes
        case let .inline(w0, w1, w2, w3, count):
            var result: [UInt8] = []
            result.reserveCapacity(Int(count))
            for word in [w0, w1, w2] {
                for shift in stride(from: 56, through: 0, by: -8) {
                    result.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
                }
            }
            for shift in stride(from: 24, through: 0, by: -8) {
                result.append(UInt8(truncatingIfNeeded: w3 >> UInt32(shift)))
            }
            return Array(result.prefix(Int(count)))
        }
    }

    /// Whether the entry's bytes begin with `prefix`.
    func hasPrefix(_ prefix: IndexEntry) -> Bool {
        prefix.count <= count && bytes.starts(with: prefix.bytes)
    }
}

/// The bytes of an entry too long to keep inline. Never mutated.
final class _IndexEntryBytes: Sendable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

extension IndexEntry: Comparable, Hashable {
    /// Byte order, a prefix first. O(1) for two inline entries.
    static func < (lhs: IndexEntry, rhs: IndexEntry) -> Bool {
        if case let .inline(a0, a1, a2, a3, ac) = lhs.storage, case let .inline(b0, b1, b2, b3, bc) = rhs.storage {
            // Zero padding sorts a prefix before its extensions only when the
            // next byte is not zero; the counts settle equal words.
            if a0 != b0 { return a0 < b0 }
            if a1 != b1 { return a1 < b1 }
            if a2 != b2 { return a2 < b2 }
            if a3 != b3 { return a3 < b3 }
            return ac < bc
        }
        return lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    /// Equal bytes. O(1) for two inline entries.
    static func == (lhs: IndexEntry, rhs: IndexEntry) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case let (.inline(a0, a1, a2, a3, ac), .inline(b0, b1, b2, b3, bc)):
            return a0 == b0 && a1 == b1 && a2 == b2 && a3 == b3 && ac == bc
        case let (.heap(a), .heap(b)):
            return a === b || a.bytes == b.bytes
        default:
            return false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch storage {
        case let .inline(w0, w1, w2, w3, count):
            hasher.combine(w0)
            hasher.combine(w1)
            hasher.combine(w2)
            hasher.combine(w3)
            hasher.combine(count)
        case .heap(let heap):
            hasher.combine(heap.bytes)
        }
    }
}
