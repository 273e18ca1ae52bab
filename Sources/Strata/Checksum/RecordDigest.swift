/// A record's 64-bit digest, keyed per process: what `strata verify` sums
/// per table to compare a snapshot's records with the replayed log's
/// without looking any record up.
///
/// The sums are compared within one process only (nothing is written), so
/// the function is free to change between builds. It was the standard
/// library's SipHash, about 8% of `strata verify`'s samples on a
/// million-record store (three snapshots of a million records each, and
/// every record the replay changed); this one takes two 64-bit multiplies
/// per 16 bytes, and about 5%, nearly all of it waiting for the record's
/// bytes to arrive from memory.
///
/// Each 8-byte word goes into the state as `rotate((state ^ word) × key)`
/// with an odd key: for a fixed state, a one-to-one function of the word,
/// and for a fixed word, of the state. So a record that differs from
/// another in one word (or in its length, mixed in first) always has
/// another state at the end, before the finalizer (murmur3's 64-bit mix
/// with a key); no word can wipe out what came before it, as a product
/// that may be zero would. Sums of digests are equal for equal multisets of
/// records; otherwise they differ except for a chance of about 2^-64. The
/// keys are drawn from the system's random source in each process (also
/// under `SWIFT_DETERMINISTIC_HASHING`, and 64 bits on every platform): a
/// file written without knowing them cannot choose records whose digests
/// cancel out.
struct RecordDigest {
    private var state: UInt64

    /// An empty digest.
    init() { state = Self.keys.3 }

    /// The state after `word`: one-to-one in each of `state` and `word`
    /// (`key` is odd).
    @inline(__always)
    private static func step(_ state: UInt64, _ word: UInt64, _ key: UInt64) -> UInt64 {
        let x = (state ^ word) &* key
        return x << 29 | x >> 35
    }

    /// Adds a 64-bit word (a tag, a length or an integer payload).
    @inline(__always)
    mutating func combine(_ word: UInt64) {
        state = Self.step(state, word, Self.keys.0)
    }

    /// Adds `bytes`, their length included: O(bytes.count).
    mutating func combine(bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        var h = Self.step(state, UInt64(count), Self.keys.0)
        var offset = 0
        while offset + 16 <= count {
            h = Self.step(h, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self), Self.keys.1)
            h = Self.step(h, bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self), Self.keys.2)
            offset += 16
        }
        // The last 0–15 bytes, zero-padded (the length is in already).
        var a: UInt64 = 0
        var b: UInt64 = 0
        for i in offset..<count {
            let byte = UInt64(bytes[i]) << (UInt64((i - offset) & 7) * 8)
            if i - offset < 8 { a |= byte } else { b |= byte }
        }
        h = Self.step(h, a, Self.keys.1)
        state = Self.step(h, b, Self.keys.2)
    }

    /// The digest of what was combined: every bit of the state spread over
    /// every bit of the result (murmur3's finalizer), so that the sums of
    /// digests behave as sums of random numbers.
    func finalize() -> UInt64 {
        var x = state ^ Self.keys.4
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return x
    }

    /// The process's keys: the first three odd (multipliers), the last two
    /// any value (a starting state and a finalizing mask).
    private static let keys: (UInt64, UInt64, UInt64, UInt64, UInt64) = {
        var random = SystemRandomNumberGenerator()
        let (a, b, c) = (random.next() | 1, random.next() | 1, random.next() | 1) as (UInt64, UInt64, UInt64)
        return (a, b, c, random.next(), random.next())
    }()
}
