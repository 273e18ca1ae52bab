/// LEB128 unsigned integers, 7 bits per byte, least significant first, the
/// high bit set on every byte but the last: every count, length and integer
/// in the codec and the packed records. One encoder and one decoder, with a
/// checked mode for bytes from outside and a trusted mode for bytes this
/// process wrote.
enum Varint {
    /// Why checked bytes are not a varint.
    enum Failure: Error {
        /// The bytes end inside the integer.
        case truncated
        /// More than 64 bits.
        case malformed
        /// Not the shortest encoding (a trailing zero byte): refused so that
        /// equal values always have equal bytes and hashes.
        case overlong
    }

    /// The number of bytes `value` encodes to. O(1).
    static func length(of value: UInt64) -> Int {
        // 1 byte per started 7 bits, at least 1.
        Swift.max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }

    /// Appends `value`'s encoding.
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Reads a varint at `offset` of bytes from outside, advancing `offset`
    /// past it; on failure `offset` is unspecified.
    static func read(_ bytes: [UInt8], at offset: inout Int) throws(Failure) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw .truncated }
            let b = bytes[offset]
            offset += 1
            if shift == 63 && b > 1 { throw .malformed }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 { throw .overlong }
                return result
            }
            shift += 7
            if shift > 63 { throw .malformed }
        }
    }

    /// Reads a varint that this process wrote (a packed record's bytes),
    /// advancing `offset` past it. Out-of-range reads trap: they mean a bug
    /// in this module, never bad input.
    static func readTrusted(_ bytes: [UInt8], at offset: inout Int) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = bytes[offset]
            offset += 1
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }
}
