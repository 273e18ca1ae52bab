import Foundation

/// What a sealed log segment holds, kept beside it (`<segment>.summary`):
/// each record's frame size and checksum and a short digest the store
/// chose (the transaction's ID, time, message and significance), so that
/// opening a store learns the history before its snapshot without reading
/// the records.
///
///     file   := header · entry*
///     header := "STRATSUM" · version (u32 LE) · first record number (u64 LE)
///               · segment size (u64 LE) · record count (u32 LE) · entries' size (u32 LE)
///               · entries' CRC32C (u32 LE) · CRC32C of the header before it (u32 LE)    44 bytes
///     entry  := frame size (varint) · frame CRC32C (u32 LE) · digest size (varint) · digest
///
/// A summary is derived data: written without a sync, trusted only when it
/// checks and describes the segment's file as it is (same first record,
/// same size, and a last frame of the size and checksum it names), and
/// otherwise ignored: the segment is read instead and the summary written
/// again. Only the records' framing is taken on trust from it; that
/// every record before the snapshot still reads is `Store.verify()`'s check.
struct SegmentSummary: Equatable {
    struct Entry: Equatable {
        /// The whole frame's size (header and payload).
        var size: Int
        /// The frame's stored CRC32C.
        var checksum: UInt32
        var digest: [UInt8]
    }

    var firstSequence: Int64
    /// The segment file's size: its header and every frame.
    var segmentSize: Int
    var entries: [Entry]

    static let version: UInt32 = 1
    static let headerSize = 44
    static let suffix = ".summary"

    /// The summary file's name for the segment named `segment`.
    static func name(ofSegment segment: String) -> String {
        String(segment.dropLast(LogFormat.segmentSuffix.count)) + suffix
    }

    /// The segment a summary file's name belongs to, or nil for other files.
    static func segment(ofName name: String) -> String? {
        guard name.hasSuffix(suffix) else { return nil }
        let segment = String(name.dropLast(suffix.count)) + LogFormat.segmentSuffix
        return LogFormat.firstSequence(ofName: segment) == nil ? nil : segment
    }

    /// The records' positions in segment number `segment` of the log.
    func positions(segment: Int) -> [TransactionLog.Position] {
        var offset = LogFormat.headerSize
        return entries.map { entry in
            defer { offset += entry.size }
            return TransactionLog.Position(segment: segment, offset: offset, size: entry.size)
        }
    }

    /// A segment's entries as they will be written, appended record by
    /// record: one buffer in the file's encoding, not an array per record.
    struct Builder: Equatable {
        private(set) var body: [UInt8] = []
        private(set) var count = 0
        /// Where the frames listed so far end in their segment.
        private(set) var framesEnd = LogFormat.headerSize

        init() {}

        init(_ entries: [Entry]) {
            for entry in entries { append(size: entry.size, checksum: entry.checksum, digest: entry.digest) }
        }

        mutating func append(size: Int, checksum: UInt32, digest: some Collection<UInt8>) {
            Varint.append(UInt64(size), to: &body)
            LittleEndian.append(checksum, to: &body)
            Varint.append(UInt64(digest.count), to: &body)
            body.append(contentsOf: digest)
            count += 1
            framesEnd += size
        }

        /// The entries of the frames that end at or before `offset` (a
        /// frame boundary: where a cut leaves the segment).
        func prefix(endingAt offset: Int) -> Builder {
            guard offset < framesEnd else { return self }
            var kept = Builder()
            var reader = ByteReader(body)
            // The body is this builder's own encoding: it reads back.
            while let size = try? reader.varint(), kept.framesEnd + Int(size) <= offset,
                let checksum = try? reader.take(4), let length = try? reader.varint(),
                let digest = try? reader.take(Int(length))
            {
                kept.append(
                    size: Int(size),
                    checksum: LittleEndian.read(UInt32.self, Array(checksum), at: 0),
                    digest: digest
                )
            }
            return kept
        }

        /// The summary file of a segment whose first record is
        /// `firstSequence`, holding exactly these frames; nil when its
        /// counts do not fit the header (never for a segment of the
        /// default size).
        func file(firstSequence: Int64) -> [UInt8]? {
            guard let count = UInt32(exactly: count), let size = UInt32(exactly: body.count) else { return nil }
            var bytes = FileHeader.encode(
                .segmentSummary,
                version: SegmentSummary.version,
                size: SegmentSummary.headerSize
            ) {
                $0.append(UInt64(bitPattern: firstSequence))
                $0.append(UInt64(framesEnd))
                $0.append(count)
                $0.append(size)
                $0.append(CRC32C.checksum(body))
            }
            bytes.append(contentsOf: body)
            return bytes
        }
    }

    /// The most a summary's entries may take for a segment of `segmentSize`
    /// bytes: a digest is a prefix of its record's payload plus a few
    /// bytes, and an entry adds at most 15; a larger file is not read.
    static func maximumBodySize(segmentSize: Int) -> Int { 2 * segmentSize + 4_096 }

    /// Decodes and checks a summary file's bytes.
    /// - Throws: ``FormatError`` for a summary that is short, damaged, from
    ///   a newer version, or whose frames do not fill its segment exactly.
    static func decode(_ bytes: [UInt8], file: String = "") throws(FormatError) -> SegmentSummary {
        func invalid(_ what: String, at offset: Int = headerSize) -> FormatError {
            FormatError(.segmentSummary, file: file, offset: offset, .damaged(what))
        }
        let header: FileHeader
        do {
            header = try FileHeader.decode(bytes, kind: .segmentSummary, size: { _ in headerSize }, supported: version)
        } catch {
            throw error.in(file)
        }
        let first = Int64(bitPattern: header.read(UInt64.self, at: 12))
        let segmentSize = header.read(UInt64.self, at: 20)
        let count = Int(header.read(UInt32.self, at: 28))
        let bodySize = Int(header.read(UInt32.self, at: 32))
        guard first >= 1, first < 1 << 62 else { throw invalid("impossible first record \(first)", at: 12) }
        guard bytes.count - headerSize == bodySize else {
            throw invalid("entries of \(bytes.count - headerSize) bytes, the header says \(bodySize)")
        }
        guard CRC32C.checksum(bytes[headerSize...]) == header.read(UInt32.self, at: 36) else {
            throw invalid("entries' checksum mismatch")
        }
        // Each entry takes at least 6 bytes: a count the bytes cannot hold allocates nothing.
        guard count <= bodySize / 6 else { throw invalid("\(count) entries in \(bodySize) bytes") }
        var reader = ByteReader(bytes, offset: headerSize)
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var end = LogFormat.headerSize
        do {
            for _ in 0..<count {
                let at = reader.offset
                let size = try reader.varint()
                guard size >= UInt64(LogFormat.frameHeaderSize),
                    size <= UInt64(LogFormat.frameHeaderSize + LogFormat.maximumPayloadSize)
                else { throw invalid("a frame of \(size) bytes", at: at) }
                let checksum = LittleEndian.read(UInt32.self, bytes, at: try reader.skip(4).lowerBound)
                let digest = try reader.take(reader.count(minimumSize: 1))
                entries.append(Entry(size: Int(size), checksum: checksum, digest: Array(digest)))
                end += Int(size)
            }
            try reader.expectEnd()
        } catch let error as FormatError {
            throw error
        } catch {
            throw invalid("entries do not decode: \(error)")
        }
        guard UInt64(end) == segmentSize else {
            throw invalid("frames end at \(end), the segment's size is \(segmentSize)")
        }
        return SegmentSummary(firstSequence: first, segmentSize: end, entries: entries)
    }
}
