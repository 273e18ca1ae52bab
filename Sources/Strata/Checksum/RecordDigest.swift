/// A record's 64-bit digest, seeded per process: what `strata verify` sums
/// per table to compare a snapshot's records with the replayed log's
/// without looking any record up.
///
/// The sums are compared within one process only (nothing is written), so
/// the function is free to change between builds. It was the standard
/// library's SipHash, about 8% of `strata verify`'s samples on a
/// million-record store (three snapshots of a million records each, and
/// every record the replay changed); this one takes one 64 × 64 → 128-bit
/// multiply per 16 bytes, and about 5%, nearly all of it waiting for the
/// record's bytes to arrive from memory. Sums of digests are equal for
/// equal multisets of records; a damaged record changes its digest, and so
/// its table's sum, except for a chance of about 2^-64 per
/// difference. The keys are drawn like the standard library's seed (so
/// fixed under `SWIFT_DETERMINISTIC_HASHING`): a file written without
/// knowing them cannot choose records whose digests cancel out.
struct RecordDigest {
    private var state: UInt64

    /// An empty digest.
    init() { state = Self.keys.0 }

    /// Mixes `a` and `b`: the exclusive or of the halves of their full product.
    @inline(__always)
    private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    /// Adds a 64-bit word (a tag, a length or an integer payload).
    @inline(__always)
    mutating func combine(_ word: UInt64) {
        state = Self.mix(state ^ word ^ Self.keys.1, Self.keys.2)
    }

    /// Adds `bytes`, their length included: O(bytes.count).
    mutating func combine(bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        var h = state ^ Self.mix(UInt64(count) ^ Self.keys.0, Self.keys.3)
        var offset = 0
        while offset + 16 <= count {
            let a = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let b = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            h = Self.mix(a ^ Self.keys.1, b ^ h)
            offset += 16
        }
        // The last 0–15 bytes, zero-padded (the length is in already).
        var a: UInt64 = 0
        var b: UInt64 = 0
        for i in offset..<count {
            let byte = UInt64(bytes[i]) << (UInt64((i - offset) & 7) * 8)
            if i - offset < 8 { a |= byte } else { b |= byte }
        }
        state = Self.mix(a ^ Self.keys.2, b ^ h)
    }

    /// The digest of what was combined.
    func finalize() -> UInt64 {
        Self.mix(state ^ Self.keys.3, Self.keys.1 ^ 0x9e37_79b9_7f4a_7c15)
    }

    /// Four keys from the process's hashing seed, each odd (a multiply by
    /// an odd key loses no bits).
    private static let keys: (UInt64, UInt64, UInt64, UInt64) = {
        func key(_ n: UInt64) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(0x5245_4344_4947_0000 as UInt64 | n)
            return UInt64(bitPattern: Int64(hasher.finalize())) | 1
        }
        return (key(0), key(1), key(2), key(3))
    }()
}
