/// Reads one segment's bytes: checks the header, walks the frames, and
/// classifies the first bad frame as a torn tail or as damage.
///
/// A crash mid-append leaves a partial frame at the very end of the last
/// segment. Damage is anything else: a bad frame in an earlier segment, or
/// one followed by an intact frame (found by trying every later offset, so a
/// flipped length byte cannot pass for a torn tail and hide the records
/// after it).
struct LogScanner {
    /// What a scan found wrong, for the store to report.
    enum Finding: Equatable, Sendable {
        /// A partial last record (a write cut short by a crash).
        case tornTail(segment: String, offset: Int, bytes: Int)
        /// Damage; the segment is kept only up to `offset`.
        case damage(segment: String, offset: Int, reason: String)
    }

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
        var finding: Finding?
    }

    let name: String
    let bytes: [UInt8]
    let isLast: Bool
    /// Named by the manifest as created whole: a short header is damage.
    var isListed = false
    let recovery: Recovery

    func scan() throws -> Result {
        guard bytes.count >= LogFormat.headerSize else {
            // Creating a segment writes its header and syncs before any
            // record goes in (and before the manifest names it), so a short
            // header is a crash during creation.
            if isLast && !isListed {
                return Result(
                    header: nil,
                    validEnd: 0,
                    finding: .tornTail(segment: name, offset: 0, bytes: bytes.count)
                )
            }
            return try damage(at: 0, "segment shorter than its \(LogFormat.headerSize)-byte header", header: nil)
        }
        let first: Int64
        do {
            first = try LogFormat.firstSequence(inHeader: bytes)
        } catch {
            if case .newerVersion = error.problem { throw error.in(name) }
            return try damage(at: error.offset, error.reason, header: nil)
        }

        var result = Result(header: first, validEnd: LogFormat.headerSize)
        var offset = LogFormat.headerSize
        while offset < bytes.count {
            if let size = frameSize(at: offset) {
                result.frames.append(Frame(offset: offset, size: size))
                offset += size
                result.validEnd = offset
                continue
            }
            // Blocks reserved ahead of the appends and never written, left
            // by a crash: the log's end (LogFormat.reservationAlignment).
            // No frame is all zeros: its checksum covers its length.
            if isLast && bytes.count % LogFormat.reservationAlignment == 0 && bytes[offset...].allSatisfy({ $0 == 0 }) {
                return result
            }
            let problem = describe(at: offset)
            if isLast && !hasIntactFrame(after: offset) {
                result.finding = .tornTail(segment: name, offset: offset, bytes: bytes.count - offset)
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
        try? LogFormat.firstSequence(inHeader: bytes)
    }

    /// How many intact frames follow one another from the first intact
    /// frame at or after `offset`: what is lost when a segment is dropped
    /// there (a lower bound, for reporting).
    static func intactFrames(in bytes: [UInt8], from offset: Int = LogFormat.headerSize) -> Int {
        // None, or past the budget (the count unknown): 0 is a lower bound.
        guard case .found(var position) = firstIntactFrame(in: bytes, from: max(offset, 0)) else { return 0 }
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
        let length = Int(LittleEndian.read(UInt32.self, bytes, at: offset))
        if length > remaining - LogFormat.frameHeaderSize {
            return "frame of \(length) bytes runs past the end of the segment"
        }
        return "frame checksum mismatch"
    }

    /// Whether any later offset starts an intact frame. When the search
    /// costs more than its budget (a hostile tail made of candidate frames),
    /// answers true: the tail is then treated as damage, never cut silently.
    func hasIntactFrame(after offset: Int) -> Bool {
        if case .none = Self.firstIntactFrame(in: bytes, from: offset + 1) { return false }
        return true
    }

    /// What a search for an intact frame found.
    enum FrameSearch {
        /// The first intact frame starts at this offset.
        case found(Int)
        /// No offset starts one.
        case none
        /// The search spent its budget first: unknown.
        case overBudget
    }

    /// The first offset at or after `start` where an intact frame starts,
    /// within ``searchBudget(_:)`` bytes of checksums.
    static func firstIntactFrame(in bytes: [UInt8], from start: Int) -> FrameSearch {
        var candidate = start
        var budget = searchBudget(bytes.count)
        while candidate + LogFormat.frameHeaderSize <= bytes.count {
            if candidateFrameSize(in: bytes, at: candidate, budget: &budget) != nil { return .found(candidate) }
            if budget < 0 { return .overBudget }
            candidate += 1
        }
        return .none
    }

    /// What every frame's payload starts with: an encoded transaction's
    /// magic and kind. Checked before a candidate's checksum, so that a
    /// search through a torn tail of random-looking bytes (a large commit
    /// cut by a crash) computes almost no checksums: without it, every
    /// offset whose length fits would checksum up to the rest of the tail.
    static let payloadPrefix = BinaryCodec.magic + [BinaryCodec.Kind.transaction.rawValue]

    /// Bytes of checksums a search for an intact frame may compute.
    static func searchBudget(_ size: Int) -> Int { 16 * size + (64 << 20) }

    /// ``LogFormat/frameSize(in:at:)`` for a frame that starts with
    /// ``payloadPrefix``, charging the bytes it checksums to `budget`.
    static func candidateFrameSize(in bytes: [UInt8], at offset: Int, budget: inout Int) -> Int? {
        let payload = offset + LogFormat.frameHeaderSize
        guard payload + payloadPrefix.count <= bytes.count else { return nil }
        for (i, byte) in payloadPrefix.enumerated() where bytes[payload + i] != byte { return nil }
        let length = Int(LittleEndian.read(UInt32.self, bytes, at: offset))
        guard length <= bytes.count - payload else { return nil }
        budget -= length
        return LogFormat.frameSize(in: bytes, at: offset)
    }

    func damage(at offset: Int, _ reason: String, header: Int64?) throws -> Result {
        guard recovery == .truncateAtDamage else {
            throw FormatError(.logSegment, file: name, offset: offset, .damaged(reason))
        }
        return Result(
            header: header,
            validEnd: header == nil ? 0 : offset,
            finding: .damage(segment: name, offset: offset, reason: reason)
        )
    }
}
