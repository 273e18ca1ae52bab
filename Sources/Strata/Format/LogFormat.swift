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
    static let version: UInt32 = 1
    /// Every version keeps this header size and layout.
    static let headerSize = 24
    static let frameHeaderSize = 8
    /// Larger payloads are refused when writing and read as damage.
    static let maximumPayloadSize = 1 << 30
    static let segmentSuffix = ".log"

    /// The log reserves the active segment's blocks ahead of its appends
    /// (see `TransactionLog`), to a size that is a multiple of this. Zeros
    /// after the last record of the *last* segment, when the file's size is
    /// such a multiple, are that reservation, left by a crash: the log's
    /// end. Zeros anywhere else are what they always were: a torn tail or
    /// damage.
    static let reservationAlignment = 4_096

    /// A snapshot seals the active segment (at the next append, or at
    /// close) once it holds this much: open reads the last segment whole,
    /// so a large one before the snapshot would be read for nothing (a
    /// 4 MiB segment reads in a few milliseconds; 32 MiB, as this was, kept
    /// the `cli` bench store's `log --limit 20` near 100 ms). A log of
    /// smaller segments keeps the segments its size gives it, and segments
    /// sealed this way hold at least this much: at most one per 4 MiB of log.
    static let sealAtSnapshot = 4 << 20

    /// Bytes reserved at a time: a size change per ~1 MiB of log, not per
    /// commit; at most a segment rounded up to the alignment (a segment
    /// smaller than 4 KiB reserves 4 KiB), always a multiple of it.
    static func reservationStep(segmentLimit: Int) -> Int {
        // Clamped first: a limit near `Int.max` ("never roll over") would
        // overflow the rounding up.
        let limit = min(max(segmentLimit, 1), 1 << 20)
        return (limit + reservationAlignment - 1) / reservationAlignment * reservationAlignment
    }

    /// The file name of the segment whose first record is `firstSequence`.
    static func segmentName(_ firstSequence: Int64) -> String {
        FileName.numbered("", firstSequence, segmentSuffix)
    }

    /// The first record number a segment's file name gives, or nil for
    /// other files.
    static func firstSequence(ofName name: String) -> Int64? {
        FileName.number(in: name, prefix: "", suffix: segmentSuffix)
    }

    static func header(firstSequence: Int64) -> [UInt8] {
        FileHeader.encode(.logSegment, version: version, size: headerSize) {
            $0.append(UInt64(bitPattern: firstSequence))
        }
    }

    /// The first record number of a segment's sound header at the start of
    /// `bytes`.
    /// - Throws: ``FormatError`` when the header is short, damaged, from a
    ///   newer version, or names no record (a first number below 1, or
    ///   one no history reaches, from 2^62).
    static func firstSequence(inHeader bytes: [UInt8]) throws(FormatError) -> Int64 {
        let header = try FileHeader.decode(bytes, kind: .logSegment, size: { _ in headerSize }, supported: version)
        let first = Int64(bitPattern: header.read(UInt64.self, at: 12))
        // Below 2^62, so that counting records onward never overflows.
        guard first >= 1, first < 1 << 62 else {
            throw FormatError(.logSegment, offset: 12, .invalidField("first record number \(first)"))
        }
        return first
    }

    static func frame(_ payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frameHeaderSize + payload.count)
        LittleEndian.append(UInt32(payload.count), to: &bytes)
        var crc = CRC32C()
        crc.update(bytes)
        crc.update(payload)
        LittleEndian.append(crc.value, to: &bytes)
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
        let length = Int(LittleEndian.read(UInt32.self, bytes, at: offset))
        guard length <= maximumPayloadSize, length <= bytes.count - offset - frameHeaderSize else { return nil }
        let payloadStart = offset + frameHeaderSize
        let stored = LittleEndian.read(UInt32.self, bytes, at: offset + 4)
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
}
