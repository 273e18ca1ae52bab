/// The on-disk framing of the transaction log.
///
///     segment := header, frame*
///     header  := "STRATLOG" (8) · format version (u32 LE) · first sequence number (i64 LE)
///                · CRC32C of the previous 20 bytes (u32 LE)                       24 bytes
///     frame   := payload length (u32 LE) · CRC32C of the length bytes and the payload (u32 LE)
///                · payload
///
/// The checksum covers the length, so a damaged length is caught before it
/// is trusted to skip ahead.
enum LogFormat {
    static let magic: [UInt8] = Array("STRATLOG".utf8)
    static let version: UInt32 = 1
    static let headerSize = 24
    static let frameHeaderSize = 8
    /// Larger payloads are refused when writing and read as damage.
    static let maximumPayloadSize = 1 << 30

    static func header(firstSequence: Int64) -> [UInt8] {
        var bytes = magic
        append(UInt32(version), to: &bytes)
        append(UInt64(bitPattern: firstSequence), to: &bytes)
        append(CRC32C.checksum(bytes), to: &bytes)
        return bytes
    }

    static func frame(_ payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frameHeaderSize + payload.count)
        append(UInt32(payload.count), to: &bytes)
        var crc = CRC32C()
        crc.update(bytes)
        crc.update(payload)
        append(crc.value, to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// The checksum a frame with this length and payload must carry.
    static func checksum(length: ArraySlice<UInt8>, payload: ArraySlice<UInt8>) -> UInt32 {
        var crc = CRC32C()
        crc.update(length)
        crc.update(payload)
        return crc.value
    }

    /// The size of the intact frame at `offset` of `bytes`, or nil when its
    /// header, length or checksum does not hold.
    static func frameSize(in bytes: [UInt8], at offset: Int) -> Int? {
        guard bytes.count - offset >= frameHeaderSize else { return nil }
        let length = Int(read(UInt32.self, bytes, at: offset))
        guard length <= maximumPayloadSize, length <= bytes.count - offset - frameHeaderSize else { return nil }
        let payloadStart = offset + frameHeaderSize
        let stored = read(UInt32.self, bytes, at: offset + 4)
        let actual = checksum(
            length: bytes[offset..<(offset + 4)],
            payload: bytes[payloadStart..<(payloadStart + length)]
        )
        return stored == actual ? frameHeaderSize + length : nil
    }

    /// The payload of a whole frame, or nil when it does not check.
    static func payload(ofFrame frame: [UInt8]) -> [UInt8]? {
        guard frameSize(in: frame, at: 0) == frame.count else { return nil }
        return Array(frame[frameHeaderSize...])
    }

    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func read<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], at offset: Int) -> T {
        var value: T = 0
        for i in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + i]) << (8 * i) }
        return value
    }
}
