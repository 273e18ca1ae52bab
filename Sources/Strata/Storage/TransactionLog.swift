/// The append-only log: segment files of checksummed frames, named by the
/// sequence number of their first record (`00000000000000000001.log`).
///
/// The log knows payloads, not transactions. Opening reads every segment,
/// cuts a torn tail (a partial last frame left by a crash), and refuses
/// damage anywhere else unless asked to keep what precedes it. Not
/// thread-safe: the store's actor owns it.
final class TransactionLog {
    /// Where a record is: its segment and the frame's offset and size.
    struct Position: Sendable, Equatable {
        var segment: Int
        var offset: Int
        var size: Int
        var end: Int { offset + size }
    }

    enum Recovery: Sendable {
        /// Refuse to open when a record before the last is damaged.
        case strict
        /// Keep every record before the first damage; drop the rest.
        case truncateAtDamage
    }

    struct Segment {
        var name: String
        var firstSequence: Int64
        var size: Int
    }

    let directory: String
    let fileSystem: any FileSystem
    let segmentLimit: Int
    private(set) var segments: [Segment] = []
    /// The last segment, open for appending (shared with the group syncs
    /// in flight, which may outlive its place here).
    private var file: SharedFile?
    /// Read descriptors of earlier segments, opened on first use.
    private var readers: [Int: any StorageFile] = [:]
    /// Sequence number the next appended record gets (1 for the first).
    private(set) var nextSequence: Int64 = 1

    /// Total bytes of all segments.
    var byteCount: Int { segments.reduce(0) { $0 + $1.size } }

    private init(directory: String, fileSystem: any FileSystem, segmentLimit: Int) {
        self.directory = directory
        self.fileSystem = fileSystem
        self.segmentLimit = segmentLimit
    }

    static func segmentName(_ firstSequence: Int64) -> String {
        let digits = String(firstSequence)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".log"
    }

    func path(_ segment: Segment) -> String { directory + "/" + segment.name }

    /// The file of segment `index` (for a reader off the owning actor, which
    /// opens it itself).
    func path(ofSegment index: Int) -> String { path(segments[index]) }

    /// Opens (creating when absent) the log in `directory` and reads it,
    /// handing `visit` every intact payload with its position, in order
    /// (the slice lives only for the call: one segment is in memory at a
    /// time).
    /// - Returns: the log, ready to append; what was recovered.
    static func open(
        directory: String,
        fileSystem: any FileSystem,
        segmentLimit: Int,
        recovery: Recovery,
        visit: (ArraySlice<UInt8>, Position) -> Void
    ) throws -> (TransactionLog, [StoreWarning]) {
        try fileSystem.createDirectory(directory)
        let log = TransactionLog(directory: directory, fileSystem: fileSystem, segmentLimit: segmentLimit)
        let names = try fileSystem.contents(ofDirectory: directory).filter { $0.hasSuffix(".log") }
        var warnings: [StoreWarning] = []
        var stop = false
        var expected: Int64 = 1
        for (index, name) in names.enumerated() {
            if stop {
                // Everything after the damage goes (truncateAtDamage only).
                try fileSystem.remove(directory + "/" + name)
                continue
            }
            let isLast = index == names.count - 1
            let file = try fileSystem.open(directory + "/" + name, create: false)
            defer { file.close() }
            let bytes = try file.read(at: 0, count: try file.size())
            let scan = try LogScanner(name: name, bytes: bytes, isLast: isLast, recovery: recovery).scan()
            if scan.header == nil {
                // A segment cut before its header was complete holds nothing.
                try fileSystem.remove(directory + "/" + name)
                if let warning = scan.warning {
                    warnings.append(warning)
                    if case .truncatedAtDamage = warning { stop = true }
                }
                continue
            }
            guard scan.header == expected else {
                throw StoreError.corruptLog(
                    segment: name,
                    offset: 8 + 4,
                    reason: "starts at record \(scan.header!), expected \(expected) (a segment is missing or foreign)"
                )
            }
            expected += Int64(scan.frames.count)
            let segmentIndex = log.segments.count
            for frame in scan.frames {
                visit(
                    bytes[(frame.offset + LogFormat.frameHeaderSize)..<frame.end],
                    Position(segment: segmentIndex, offset: frame.offset, size: frame.size)
                )
            }
            if scan.validEnd < bytes.count {
                try file.truncate(to: scan.validEnd)
                try file.sync()
            }
            if let warning = scan.warning {
                warnings.append(warning)
                if case .truncatedAtDamage = warning { stop = true }
            }
            log.segments.append(Segment(name: name, firstSequence: scan.header!, size: scan.validEnd))
        }
        log.nextSequence = expected
        if let last = log.segments.last {
            log.file = SharedFile(try fileSystem.open(log.path(last), create: false))
        }
        return (log, warnings)
    }

    /// The payload of the record at `position`, its frame checked again
    /// (the bytes may have changed on disk since the log was opened).
    /// - Throws: ``StoreError/corruptLog(segment:offset:reason:)`` when the
    ///   frame no longer checks; `FileSystemError` when it cannot be read.
    func read(_ position: Position) throws -> [UInt8] {
        let segment = segments[position.segment]
        let reader = try readHandle(position.segment)
        let frame = try reader.read(at: position.offset, count: position.size)
        guard frame.count == position.size, let payload = LogFormat.payload(ofFrame: frame) else {
            throw StoreError.corruptLog(
                segment: segment.name,
                offset: position.offset,
                reason: "the record no longer matches its checksum"
            )
        }
        return payload
    }

    /// A descriptor for reading segment `index`: the append file for the
    /// last one, else one opened on first use and kept.
    private func readHandle(_ index: Int) throws -> any StorageFile {
        if index == segments.count - 1, let file { return file.file }
        if let reader = readers[index] { return reader }
        let reader = try fileSystem.open(path(segments[index]), create: false)
        readers[index] = reader
        return reader
    }

    private func closeReaders(from index: Int) {
        for (key, reader) in readers where key >= index {
            reader.close()
            readers[key] = nil
        }
    }

    /// Appends one record; not durable until `sync()`. On a write error the
    /// segment is cut back to where it was.
    func append(_ payload: [UInt8]) throws -> Position {
        precondition(payload.count <= LogFormat.maximumPayloadSize, "log record of \(payload.count) bytes")
        if needsNewSegment { try startSegment() }
        let frame = LogFormat.frame(payload)
        let index = segments.count - 1
        let offset = segments[index].size
        do {
            try file!.file.write(frame, at: offset)
        } catch {
            try file!.file.truncate(to: offset)
            throw error
        }
        segments[index].size += frame.count
        nextSequence += 1
        return Position(segment: index, offset: offset, size: frame.count)
    }

    /// Whether the next ``append(_:)`` starts a new segment (none is open,
    /// or the last one is full).
    var needsNewSegment: Bool { file == nil || segments[segments.count - 1].size >= segmentLimit }

    /// Starts a new segment whose first record is the next one. The
    /// previous segment's tail is synced first, so only the last segment
    /// is ever unsynced; it is then let go, and closed once no group sync
    /// still holds it. When this throws, the previous segment's unsynced
    /// records may not be durable.
    func startSegment() throws {
        if let file { try file.file.sync() }
        file = nil
        let segment = Segment(
            name: Self.segmentName(nextSequence),
            firstSequence: nextSequence,
            size: LogFormat.headerSize
        )
        let newFile = try fileSystem.open(path(segment), create: true)
        do {
            try newFile.write(LogFormat.header(firstSequence: nextSequence), at: 0)
            try newFile.sync()
            try fileSystem.syncDirectory(directory)
        } catch {
            newFile.close()
            try? fileSystem.remove(path(segment))
            throw error
        }
        segments.append(segment)
        file = SharedFile(newFile)
    }

    /// The open last segment, for a sync off the owning actor: the
    /// descriptor stays open while the returned reference is held, however
    /// the log moves on meanwhile (a rollover, a cut, closing).
    var activeFile: SharedFile? { file }

    /// Makes every appended record durable.
    func sync() throws {
        try file?.file.sync()
    }

    /// Drops every record from `position` on (it becomes the end of its
    /// segment; later segments are removed), synced unless `sync` is false
    /// (rolling back a failed write: the next successful sync makes the
    /// cut durable, and a crash before it leaves only unacknowledged records).
    func truncate(from position: Position, sequence: Int64, sync: Bool = true) throws {
        closeReaders(from: position.segment)
        while segments.count - 1 > position.segment {
            let last = segments.removeLast()
            file = nil
            try fileSystem.remove(path(last))
        }
        if file == nil { file = SharedFile(try fileSystem.open(path(segments[position.segment]), create: false)) }
        try file!.file.truncate(to: position.offset)
        segments[position.segment].size = position.offset
        nextSequence = sequence
        if sync {
            try file!.file.sync()
            try fileSystem.syncDirectory(directory)
        }
    }

    /// Drops everything: used when the first record itself goes.
    func removeAll() throws {
        closeReaders(from: 0)
        file = nil
        for segment in segments { try fileSystem.remove(path(segment)) }
        segments = []
        nextSequence = 1
        try fileSystem.syncDirectory(directory)
    }

    /// Closes the read descriptors and lets the append file go (closed
    /// at once unless a group sync still holds it).
    func close() {
        closeReaders(from: 0)
        file = nil
    }

    /// A segment file shared by the log and the group syncs in flight,
    /// closed when the last holder lets it go: a sync never meets a closed
    /// descriptor, nor one the kernel has since given to another file.
    ///
    /// `@unchecked Sendable`: the log's owner writes and truncates while
    /// one sync thread calls `fdatasync` on the same descriptor, which
    /// POSIX allows (the kernel orders them); nothing else crosses threads.
    final class SharedFile: @unchecked Sendable {
        let file: any StorageFile

        init(_ file: any StorageFile) { self.file = file }

        deinit { file.close() }
    }
}
