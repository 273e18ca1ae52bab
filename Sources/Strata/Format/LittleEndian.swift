/// Fixed-width integers as every Strata file stores them: little-endian,
/// at byte offsets the layouts in this folder fix.
enum LittleEndian {
    /// Appends `value`'s bytes, least significant first.
    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// The integer stored at `offset` of `bytes`.
    /// - Precondition: `offset + T.size <= bytes.count` (callers check the
    ///   length against the layout first).
    static func read<T: FixedWidthInteger, C: Collection<UInt8>>(_: T.Type, _ bytes: C, at offset: Int) -> T
    where C.Index == Int {
        var value: T = 0
        let start = bytes.startIndex + offset
        for i in 0..<MemoryLayout<T>.size { value |= T(bytes[start + i]) << (8 * i) }
        return value
    }
}
