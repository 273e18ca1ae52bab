/// A record's 64-bit digest, keyed per process: what `strata verify` sums
/// per table to compare a snapshot's records with the replayed log's
/// without looking any record up.
///
/// The sums are compared within one process only (nothing is written), so
/// the function is free to change between builds. It was the standard
/// library's SipHash, about 8% of `strata verify`'s samples on a
/// million-record store (three snapshots of a million records each, and
/// every record the replay changed); this one takes two 64-bit multiplies
/// per 16 bytes, one in each of two independent lanes, and about 5%.
///
/// Each 8-byte word goes into its lane's state as `rotate((state ^ word) ×
/// key)` with an odd key: for a fixed state, a one-to-one function of the
/// word, and for a fixed word, of the state; the two lanes end combined the
/// same way. So a record that differs from another in one word (or in its
/// length, mixed in first) always has another state at the end, before the
/// finalizer (murmur3's 64-bit mix with a key); no word can wipe out what
/// came before it, as a product that may be zero would. Sums of digests are equal for equal multisets of
/// records; otherwise they differ except for a chance of about 2^-64. The
/// keys are drawn from the system's random source in each process (also
/// under `SWIFT_DETERMINISTIC_HASHING`, and 64 bits on every platform): a
/// file written without knowing them cannot choose records whose digests
/// cancel out.
struct RecordDigest {
    private var state: UInt64
    /// The process's keys, read once per digest (each read of the global
    /// checks that it is initialized).
    private let keys: Keys

    /// An empty digest.
    init() {
        keys = Self.processKeys
        state = keys.start
    }

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
        state = Self.step(state, word, keys.word)
    }

    /// Adds `bytes`, their length included: O(bytes.count).
    ///
    /// The words go alternately into two states, so that each multiply
    /// waits for the one before it in its own lane only (about twice the
    /// speed of one chain), and the lanes are combined at the end, one-to-
    /// one in each: a record that differs from another in one word still
    /// ends in another state.
    mutating func combine(bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        var a = Self.step(state, UInt64(count), keys.word)
        var b = a ^ keys.lane
        var offset = 0
        while offset + 16 <= count {
            a = Self.step(a, word(bytes, offset), keys.even)
            b = Self.step(b, word(bytes, offset + 8), keys.odd)
            offset += 16
        }
        // The last 0–15 bytes as two words, zero-padded (the length is in
        // already): read as whole words ending at the last byte, shifted
        // past the bytes already taken, when there are 8 bytes to read.
        let rest = count - offset
        var (x, y): (UInt64, UInt64) = (0, 0)
        if rest >= 8 {
            x = word(bytes, offset)
            if rest > 8 {
                y = word(bytes, count - 8) >> UInt64(8 * (16 - rest))
            }
        } else if rest > 0, count >= 8 {
            x = word(bytes, count - 8) >> UInt64(8 * (8 - rest))
        } else {
            for i in 0..<rest { x |= UInt64(bytes[offset + i]) << UInt64(8 * i) }
        }
        a = Self.step(a, x, keys.even)
        b = Self.step(b, y, keys.odd)
        state = Self.step(a, b, keys.word)
    }

    /// The 8 bytes at `offset` as a little-endian word (the tail's shifts
    /// count on the first byte being the lowest).
    @inline(__always)
    private func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The digest of what was combined: every bit of the state spread over
    /// every bit of the result (murmur3's finalizer), so that the sums of
    /// digests behave as sums of random numbers.
    func finalize() -> UInt64 {
        var x = state ^ keys.mask
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return x
    }

    /// The keys: three odd multipliers, and any values for a starting
    /// state, the second lane's offset and a finalizing mask.
    private struct Keys {
        var word, even, odd: UInt64
        var start, lane, mask: UInt64
    }

    /// The process's keys.
    private static let processKeys: Keys = {
        var random = SystemRandomNumberGenerator()
        return Keys(
            word: random.next() | 1,
            even: random.next() | 1,
            odd: random.next() | 1,
            start: random.next(),
            lane: random.next(),
            mask: random.next()
        )
    }()
}
