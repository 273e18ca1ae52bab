/// Reads one segment's bytes: checks the header, walks the frames, and
/// classifies the first bad frame as a torn tail or as damage.
///
/// A crash mid-append leaves a partial frame at the very end of the last
/// segment. Damage is anything else: a bad frame in an earlier segment, or
/// one followed by an intact frame (found by trying every later offset, so a
/// flipped length byte cannot pass for a torn tail and hide the records
/// after it).
struct LogScanner {
    struct Frame {
        var offset: Int
        var size: Int
        var end: Int { offset + size }
    }

    struct Result {
        /// The first record's sequence number; nil when the segment holds
        /// nothing usable (a header cut short by a crash).
        var header: Int64?
        var frames: [Frame] = []
        /// Where the intact prefix ends.
        var validEnd: Int
        var warning: StoreWarning?
    }

    let name: String
    let bytes: [UInt8]
    let isLast: Bool
    /// Named by the manifest as created whole: a short header is damage.
    var isListed = false
    let recovery: TransactionLog.Recovery

    func scan() throws -> Result {
        guard bytes.count >= LogFormat.headerSize else {
            // Creating a segment writes its header and syncs before any
            // record goes in (and before the manifest names it), so a short
            // header is a crash during creation.
            if isLast && !isListed {
                return Result(
                    header: nil,
                    validEnd: 0,
                    warning: .tornTail(segment: name, offset: 0, bytes: bytes.count)
                )
            }
            return try damage(at: 0, "segment shorter than its \(LogFormat.headerSize)-byte header", header: nil)
        }
        guard Array(bytes[0..<8]) == LogFormat.magic else {
            return try damage(at: 0, "not a Strata log segment (bad magic)", header: nil)
        }
        // The checksum first: a damaged version field is damage, not a newer
        // format. (The 24-byte header keeps this layout in every version.)
        let version = LogFormat.read(UInt32.self, bytes, at: 8)
        let crc = LogFormat.read(UInt32.self, bytes, at: 20)
        guard crc == CRC32C.checksum(bytes[0..<20]) else {
            return try damage(at: 0, "header checksum mismatch", header: nil)
        }
        if version > LogFormat.version {
            throw StoreError.unsupportedVersion(file: name, found: version, supported: LogFormat.version)
        }
        guard version >= 1 else { return try damage(at: 8, "format version 0", header: nil) }
        let first = Int64(bitPattern: LogFormat.read(UInt64.self, bytes, at: 12))
        guard first >= 1 else { return try damage(at: 12, "first record number \(first)", header: nil) }

        var result = Result(header: first, validEnd: LogFormat.headerSize)
        var offset = LogFormat.headerSize
        while offset < bytes.count {
            if let size = frameSize(at: offset) {
                result.frames.append(Frame(offset: offset, size: size))
                offset += size
                result.validEnd = offset
                continue
            }
            let problem = describe(at: offset)
            if isLast && !hasIntactFrame(after: offset) {
                result.warning = .tornTail(segment: name, offset: offset, bytes: bytes.count - offset)
                return result
            }
            var damaged = try damage(at: offset, problem, header: first)
            damaged.frames = result.frames
            return damaged
        }
        return result
    }

    /// The first record number in an intact segment header, or nil.
    static func header(of bytes: [UInt8]) -> Int64? {
        guard bytes.count >= LogFormat.headerSize, Array(bytes[0..<8]) == LogFormat.magic,
            LogFormat.read(UInt32.self, bytes, at: 20) == CRC32C.checksum(bytes[0..<20])
        else { return nil }
        let first = Int64(bitPattern: LogFormat.read(UInt64.self, bytes, at: 12))
        return first >= 1 ? first : nil
    }

    /// How many intact frames follow one another from the first intact
    /// frame at or after `offset`: what is lost when a segment is dropped
    /// there (a lower bound, for reporting).
    static func intactFrames(in bytes: [UInt8], from offset: Int = LogFormat.headerSize) -> Int {
        var position = max(offset, 0)
        while position + LogFormat.frameHeaderSize <= bytes.count,
            LogFormat.frameSize(in: bytes, at: position) == nil
        {
            position += 1
        }
        var count = 0
        while let size = LogFormat.frameSize(in: bytes, at: position) {
            count += 1
            position += size
        }
        return count
    }

    /// The size of the intact frame at `offset`, or nil.
    func frameSize(at offset: Int) -> Int? {
        LogFormat.frameSize(in: bytes, at: offset)
    }

    func describe(at offset: Int) -> String {
        let remaining = bytes.count - offset
        if remaining < LogFormat.frameHeaderSize { return "partial frame header (\(remaining) bytes)" }
        let length = Int(LogFormat.read(UInt32.self, bytes, at: offset))
        if length > remaining - LogFormat.frameHeaderSize {
            return "frame of \(length) bytes runs past the end of the segment"
        }
        return "frame checksum mismatch"
    }

    /// Whether any later offset starts an intact frame.
    func hasIntactFrame(after offset: Int) -> Bool {
        var candidate = offset + 1
        while candidate + LogFormat.frameHeaderSize <= bytes.count {
            if frameSize(at: candidate) != nil { return true }
            candidate += 1
        }
        return false
    }

    func damage(at offset: Int, _ reason: String, header: Int64?) throws -> Result {
        guard recovery == .truncateAtDamage else {
            throw StoreError.corruptLog(segment: name, offset: offset, reason: reason)
        }
        return Result(
            header: header,
            validEnd: header == nil ? 0 : offset,
            warning: .truncatedAtDamage(segment: name, offset: offset, reason: reason)
        )
    }
}
