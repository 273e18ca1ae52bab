/// The append-only log: segment files of checksummed frames, named by the
/// sequence number of their first record (`00000000000000000001.log`).
///
/// The log knows payloads, not transactions. Opening reads every segment
/// (a sealed one with a sound summary by its summary alone), cuts a torn
/// tail (a partial last frame left by a crash), and refuses damage
/// anywhere else unless asked to keep what precedes it. Not thread-safe:
/// the store's actor owns it.
final class TransactionLog {
    /// Where a record is: its segment and the frame's offset and size.
    struct Position: Sendable, Equatable {
        var segment: Int
        var offset: Int
        var size: Int
        var end: Int { offset + size }
    }

    struct Segment {
        var name: String
        var size: Int
    }

    let directory: String
    let fileSystem: any FileSystem
    let segmentLimit: Int
    private(set) var segments: [Segment] = []
    /// The last segment, open for appending (shared with the group syncs
    /// in flight, which may outlive its place here).
    private var file: SharedFile?
    /// How far the active segment's blocks are reserved (its size on
    /// disk): appends below it change no metadata. Past the last record
    /// the file holds zeros, which read as the log's end.
    private var reservedEnd = 0
    /// False once the file system could not reserve (until the next segment).
    private var canReserve = true
    /// Read descriptors of earlier segments, opened on first use.
    private var readers: [Int: any StorageFile] = [:]
    /// Segment indexes of `readers`, least recently used first.
    private var readerUse: [Int] = []
    /// Sequence number the next appended record gets (1 for the first).
    private(set) var nextSequence: Int64 = 1
    /// The store's manifest, kept current as segments come and go (see
    /// ``StoreManifest``); nil for a log without one (tests of the log alone).
    private(set) var manifest = StoreManifest()
    private var manifestDirectory: String?
    /// What open found to cut, carried out by `finishRecovery()`.
    private var pendingTruncations: [(segment: Int, size: Int)] = []
    private var pendingRemovals: [String] = []
    /// Segments open read, with what it read: `finishRecovery()` writes
    /// their summaries (a store from before summaries, or a summary that
    /// did not check or differed), or removes them (a segment cut, or left last).
    private var readSegments: [(segment: Int, entries: SegmentSummary.Builder, whole: Bool, onDisk: SegmentSummary?)] =
        []
    /// Summary files open found describing nothing it keeps (removed first).
    private var staleSummaries: [String] = []
    /// The active segment's records as its summary will list them; nil when
    /// not every record's digest is known (the segment is then summarized
    /// by the next open that reads it).
    private var activeEntries: SegmentSummary.Builder? = SegmentSummary.Builder()
    /// Set by ``requestSeal(atLeast:)``: the next append (or close, through
    /// ``sealIfRequested()``) starts a new segment.
    private var sealRequested = false

    /// Whether a read-only store reads it: another process (its writer)
    /// may cut or rewrite it meanwhile, so a record that no longer reads
    /// as it did is not taken for damage alone (see `TransactionHistory`).
    var isReadOnly = false

    /// Which directory `directory` named at open: a new segment or a
    /// manifest is written only while it still does (nil: not known).
    private var directoryIdentity: FileIdentity?

    /// Total bytes of all segments.
    var byteCount: Int { segments.reduce(0) { $0 + $1.size } }

    private init(directory: String, fileSystem: any FileSystem, segmentLimit: Int) {
        self.directory = directory
        self.fileSystem = fileSystem
        self.segmentLimit = segmentLimit
    }

    func path(_ segment: Segment) -> String { directory + "/" + segment.name }

    /// The file of segment `index` (for a reader off the owning actor, which
    /// opens it itself).
    func path(ofSegment index: Int) -> String { path(segments[index]) }

    /// What opening found beyond the records kept: for the store to compare
    /// with what it knows of the history (manifest, snapshots) before the
    /// log is cut.
    struct Recovered {
        var findings: [LogScanner.Finding] = []
        /// The last record number seen anywhere on disk (intact frames in
        /// dropped segments included): a lower bound of how far the log reached.
        var reachedOnDisk: Int64 = 0
        /// The first record number of the newest segment on disk (0: none).
        var newestSegment: Int64 = 0
        /// Where the kept records end, when something after them is dropped:
        /// the segment, the offset and why.
        var cut: (segment: String, offset: Int, reason: String)?
    }

    /// Reads the log in `directory` without changing it, handing `visit`
    /// every intact payload with its position, in order (the slice lives
    /// only for the call: one segment is in memory at a time); `visit`
    /// returns false for a record that must be dropped with everything
    /// after it (it does not decode). Records after damage are dropped only
    /// under `.truncateAtDamage` (else this throws), and nothing on disk
    /// changes until ``finishRecovery()``: the store first removes what
    /// was built from the history being dropped (snapshots, blocks).
    ///
    /// A sealed segment with a sound summary that matches its file is not
    /// read: `summarized` gets the summary's digests and positions instead,
    /// and returns true when it took them (false: the segment is read and
    /// visited as any other). The last segment is always read.
    ///
    /// - Parameters:
    ///   - listedNewest: the first record of the newest segment the
    ///     manifest names (0: unknown); that segment was created whole, so a
    ///     short header there is damage, not a crash during creation.
    ///   - visit: returns the record's digest for the segment's summary, or
    ///     nil for a record that does not decode.
    /// - Returns: the log (not yet ready to append) and what was found.
    static func open(
        directory: String,
        fileSystem: any FileSystem,
        segmentLimit: Int,
        recovery: Recovery,
        listedNewest: Int64 = 0,
        summarized: ([SegmentSummary.Entry], [Position]) -> Bool = { _, _ in false },
        visit: (ArraySlice<UInt8>, Position) -> [UInt8]?
    ) throws -> (TransactionLog, Recovered) {
        try fileSystem.createDirectory(directory)
        let log = TransactionLog(directory: directory, fileSystem: fileSystem, segmentLimit: segmentLimit)
        log.directoryIdentity = fileSystem.identity(of: directory)
        // Only the names segments are given: another file that ends in
        // `.log` is not the store's to read, cut or remove.
        let files = try fileSystem.contents(ofDirectory: directory)
        let names = files.filter { LogFormat.firstSequence(ofName: $0) != nil }
        let summaryNames = Set(files.filter { SegmentSummary.segment(ofName: $0) != nil })
        // A summary without its segment (removed by a cut that stopped short).
        let segmentNames = Set(names)
        for name in summaryNames where !segmentNames.contains(SegmentSummary.segment(ofName: name)!) {
            log.staleSummaries.append(name)
        }
        var found = Recovered()
        var expected: Int64 = 1
        var dropping = false
        for (index, name) in names.enumerated() {
            let path = directory + "/" + name
            let file = try fileSystem.open(path, create: false)
            defer { file.close() }
            let isLast = index == names.count - 1
            let named = LogFormat.firstSequence(ofName: name)
            if let named { found.newestSegment = max(found.newestSegment, named) }
            let summaryName = SegmentSummary.name(ofSegment: name)
            let hasSummary = summaryNames.contains(summaryName)
            var onDisk: SegmentSummary?
            if !dropping, !isLast, hasSummary {
                onDisk = log.summary(summaryName, describing: file, firstSequence: expected)
                if let summary = onDisk, summarized(summary.entries, summary.positions(segment: log.segments.count)) {
                    expected += Int64(summary.entries.count)
                    log.segments.append(Segment(name: name, size: summary.segmentSize))
                    // Unknown here: it is the active one only if every later segment is dropped.
                    log.activeEntries = nil
                    continue
                }
            }
            // Read, then kept, cut or dropped: its summary is decided in finishRecovery().
            if hasSummary, dropping { log.staleSummaries.append(summaryName) }
            let bytes = try file.read(at: 0, count: try file.size())
            if dropping {
                // Everything after the cut goes; its intact records only
                // measure the loss.
                log.pendingRemovals.append(name)
                if let first = LogScanner.header(of: bytes) {
                    found.reachedOnDisk = max(
                        found.reachedOnDisk,
                        first - 1 + Int64(LogScanner.intactFrames(in: bytes))
                    )
                }
                continue
            }
            let listed = named != nil && named == listedNewest
            let scan: LogScanner.Result
            do {
                scan = try LogScanner(
                    name: name,
                    bytes: bytes,
                    isLast: isLast,
                    isListed: listed,
                    recovery: recovery
                ).scan()
            } catch let error as FormatError where error.isNewerVersion {
                // Not damage but another build's file: named by its path,
                // for a person to find (damage names the segment).
                throw error.in(directory + "/" + name)
            }
            guard let first = scan.header else {
                // A segment cut before its header was complete holds nothing.
                log.pendingRemovals.append(name)
                if let finding = scan.finding {
                    found.findings.append(finding)
                    if case .damage(_, let offset, let reason) = finding {
                        found.cut = (name, offset, reason)
                        dropping = true
                    }
                }
                continue
            }
            guard first == expected else {
                let reason =
                    first > expected
                    ? "starts at record \(first), expected \(expected): a segment before it is missing"
                    : "starts at record \(first), expected \(expected): a foreign or repeated segment"
                // A gap is missing history: the store refuses it as such
                // (strict) or opens before it. A segment that overlaps is damage.
                guard recovery == .truncateAtDamage || first > expected else {
                    throw FormatError(.logSegment, file: name, offset: 12, .damaged(reason))
                }
                log.pendingRemovals.append(name)
                found.reachedOnDisk = max(found.reachedOnDisk, first - 1 + Int64(scan.frames.count))
                found.findings.append(.damage(segment: name, offset: 0, reason: reason))
                found.cut = (name, 0, reason)
                dropping = true
                continue
            }
            let segmentIndex = log.segments.count
            var kept = scan.validEnd
            var entries = SegmentSummary.Builder()
            for frame in scan.frames {
                let position = Position(segment: segmentIndex, offset: frame.offset, size: frame.size)
                guard let digest = visit(bytes[(frame.offset + LogFormat.frameHeaderSize)..<frame.end], position)
                else {
                    kept = frame.offset
                    dropping = true
                    found.cut = (name, frame.offset, "record does not decode")
                    break
                }
                let checksum = LittleEndian.read(UInt32.self, bytes, at: frame.offset + 4)
                entries.append(size: frame.size, checksum: checksum, digest: digest)
                expected += 1
            }
            found.reachedOnDisk = max(found.reachedOnDisk, first - 1 + Int64(scan.frames.count))
            if case .damage(_, let offset, let reason)? = scan.finding, !dropping {
                dropping = true
                found.cut = (name, offset, reason)
                found.reachedOnDisk = max(
                    found.reachedOnDisk,
                    expected - 1 + Int64(LogScanner.intactFrames(in: bytes, from: offset + 1))
                )
            }
            if let finding = scan.finding { found.findings.append(finding) }
            if kept < bytes.count { log.pendingTruncations.append((segmentIndex, kept)) }
            log.segments.append(Segment(name: name, size: kept))
            log.activeEntries = entries
            log.readSegments.append((segmentIndex, entries, kept == bytes.count, hasSummary ? onDisk : nil))
            if hasSummary, onDisk == nil { log.staleSummaries.append(summaryName) }
        }
        found.reachedOnDisk = max(found.reachedOnDisk, expected - 1)
        log.nextSequence = expected
        return (log, found)
    }

    /// Carries out what ``open(directory:fileSystem:segmentLimit:recovery:listedNewest:visit:)``
    /// decided: cuts the kept segments' tails and removes dropped segments,
    /// durably; then the log is ready to append.
    func finishRecovery() throws {
        // Summaries first: none may outlive, even briefly, the bytes it describes.
        var summariesToRemove = staleSummaries
        var summariesToWrite: [(segment: Int, entries: SegmentSummary.Builder)] = []
        for read in readSegments {
            let name = segments[read.segment].name
            let isLast = read.segment == segments.count - 1
            if read.onDisk != nil { summariesToRemove.append(SegmentSummary.name(ofSegment: name)) }
            guard read.whole, !isLast else { continue }
            if let onDisk = read.onDisk, SegmentSummary.Builder(onDisk.entries) == read.entries {
                summariesToRemove.removeLast()
            } else {
                summariesToWrite.append((read.segment, read.entries))
            }
        }
        for name in pendingRemovals where name.hasSuffix(LogFormat.segmentSuffix) {
            summariesToRemove.append(SegmentSummary.name(ofSegment: name))
        }
        for name in Set(summariesToRemove) where fileSystem.exists(directory + "/" + name) {
            try fileSystem.remove(directory + "/" + name)
        }
        if !summariesToRemove.isEmpty, !pendingTruncations.isEmpty { try fileSystem.syncDirectory(directory) }
        for (index, size) in pendingTruncations {
            let file = try fileSystem.open(path(segments[index]), create: false)
            defer { file.close() }
            try file.truncate(to: size)
            try file.sync()
        }
        for name in pendingRemovals { try fileSystem.remove(directory + "/" + name) }
        if !pendingTruncations.isEmpty || !pendingRemovals.isEmpty { try fileSystem.syncDirectory(directory) }
        for (index, entries) in summariesToWrite { writeSummary(entries, ofSegment: segments[index].name) }
        pendingTruncations = []
        pendingRemovals = []
        readSegments = []
        staleSummaries = []
        if let last = segments.last {
            let opened = SharedFile(try fileSystem.open(path(last), create: false))
            activate(opened, size: last.size)
            // What was read may be only in the page cache (a writer at
            // `.none` that died): open then counts all of it as durable.
            try opened.file.sync()
        }
    }

    // MARK: Summaries

    /// The summary in file `name` when it checks and describes `segment` as
    /// it is on disk: its header is sound and names `firstSequence`, its
    /// size is the file's, and its last frame has the size and checksum
    /// listed (two small reads); nil otherwise (the segment is then read).
    private func summary(_ name: String, describing segment: any StorageFile, firstSequence: Int64) -> SegmentSummary? {
        guard let file = try? fileSystem.open(directory + "/" + name, create: false) else { return nil }
        defer { file.close() }
        // The header first: a file larger than its header says, or than its
        // segment could need, is not read at all.
        guard let size = try? segment.size(), let fileSize = try? file.size(),
            let header = try? file.read(at: 0, count: SegmentSummary.headerSize),
            header.count == SegmentSummary.headerSize,
            fileSize - SegmentSummary.headerSize == Int(LittleEndian.read(UInt32.self, header, at: 32)),
            fileSize - SegmentSummary.headerSize <= SegmentSummary.maximumBodySize(segmentSize: size),
            let bytes = try? file.read(at: 0, count: fileSize),
            let summary = try? SegmentSummary.decode(bytes, file: name),
            summary.firstSequence == firstSequence, summary.segmentSize == size,
            let segmentHeader = try? segment.read(at: 0, count: LogFormat.headerSize),
            (try? LogFormat.firstSequence(inHeader: segmentHeader)) == firstSequence
        else { return nil }
        guard let last = summary.entries.last else { return summary }
        guard let frame = try? segment.read(at: size - last.size, count: LogFormat.frameHeaderSize),
            frame.count == LogFormat.frameHeaderSize,
            Int(LittleEndian.read(UInt32.self, frame, at: 0)) == last.size - LogFormat.frameHeaderSize,
            LittleEndian.read(UInt32.self, frame, at: 4) == last.checksum
        else { return nil }
        return summary
    }

    /// Writes the summary of segment `segment` (its entries), best effort
    /// and unsynced: a summary lost or torn by a crash does not check, and
    /// the next open reads the segment instead.
    private func writeSummary(_ entries: SegmentSummary.Builder, ofSegment segment: String) {
        guard let first = LogFormat.firstSequence(ofName: segment), let bytes = entries.file(firstSequence: first),
            let file = try? fileSystem.open(directory + "/" + SegmentSummary.name(ofSegment: segment), create: true)
        else { return }
        defer { file.close() }
        do {
            try file.truncate(to: 0)
            try file.write(bytes, at: 0)
        } catch {
            try? file.truncate(to: 0)
        }
    }

    /// Removes segment `index`'s summary, best effort, when one of its
    /// records turns out damaged: the next open then reads the segment,
    /// and its recovery option decides (cut there, or refuse).
    func forgetSummary(ofSegment index: Int) {
        guard index < segments.count else { return }
        try? removeSummary(ofSegment: segments[index].name)
        // The active segment's entries were taken from its bytes as they
        // were appended: sealed with them, it would get a summary that
        // vouches for the damage, and open would not read it.
        if index == segments.count - 1 { activeEntries = nil }
    }

    /// Removes the summary of segment `segment`, if it has one: before the
    /// segment is cut or removed, so that no summary outlives what it describes.
    private func removeSummary(ofSegment segment: String) throws {
        let path = directory + "/" + SegmentSummary.name(ofSegment: segment)
        if fileSystem.exists(path) { try fileSystem.remove(path) }
    }

    /// Adopts `manifest` as the store's, kept in `directory`, rewriting it
    /// there when it differs from what is on disk (`written`).
    func adoptManifest(_ manifest: StoreManifest, in directory: String, written: StoreManifest?) throws {
        self.manifest = manifest
        manifestDirectory = directory
        if manifest != written { try manifest.write(in: directory, fileSystem: fileSystem) }
    }

    /// Changes the manifest and writes it durably (a no-op when unchanged).
    func updateManifest(_ change: (inout StoreManifest) -> Void) throws {
        var updated = manifest
        change(&updated)
        guard updated != manifest else { return }
        try checkDirectory()
        if let manifestDirectory { try updated.write(in: manifestDirectory, fileSystem: fileSystem) }
        manifest = updated
    }

    /// The payload of the record at `position`, its frame checked again
    /// (the bytes may have changed on disk since the log was opened).
    /// - Throws: ``FormatError`` when the frame no longer checks;
    ///   `FileSystemError` when it cannot be read.
    func read(_ position: Position) throws -> [UInt8] {
        let segment = segments[position.segment]
        let reader = try readHandle(position.segment)
        let frame = try reader.read(at: position.offset, count: position.size)
        guard frame.count == position.size, let payload = LogFormat.payload(ofFrame: frame) else {
            forgetSummary(ofSegment: position.segment)
            throw FormatError(
                .logSegment,
                file: segment.name,
                offset: position.offset,
                .damaged("the record no longer matches its checksum")
            )
        }
        return payload
    }

    /// A descriptor for reading segment `index`: the append file for the
    /// last one, else one opened on first use and kept.
    private func readHandle(_ index: Int) throws -> any StorageFile {
        if index == segments.count - 1, let file { return file.file }
        if let reader = readers[index] {
            readerUse.removeAll { $0 == index }
            readerUse.append(index)
            return reader
        }
        // A long history read end to end would otherwise hold a descriptor
        // per segment until close.
        if readers.count >= Self.maximumReaders, let oldest = readerUse.first {
            readerUse.removeFirst()
            readers.removeValue(forKey: oldest)?.close()
        }
        let reader = try fileSystem.open(path(segments[index]), create: false)
        readers[index] = reader
        readerUse.append(index)
        return reader
    }

    /// Read descriptors kept open at most (least recently used closed first).
    static let maximumReaders = 16

    private func closeReaders(from index: Int) {
        for (key, reader) in readers where key >= index {
            reader.close()
            readers[key] = nil
        }
        readerUse.removeAll { $0 >= index }
    }

    /// Appends one record; not durable until `sync()`. On a write error the
    /// segment is cut back to where it was.
    /// - Precondition: the payload fits a frame
    ///   (``LogFormat/maximumPayloadSize``: the store refuses larger ones).
    /// - Throws: `FileSystemError`.
    ///
    /// - Parameter digest: what the segment's summary lists for the record
    ///   (nil: the segment gets no summary until an open reads it).
    func append(_ payload: [UInt8], digest: [UInt8]? = nil) throws -> Position {
        precondition(payload.count <= LogFormat.maximumPayloadSize, "log record of \(payload.count) bytes")
        if needsNewSegment { try startSegment() }
        let frame = LogFormat.frame(payload)
        let index = segments.count - 1
        let offset = segments[index].size
        do {
            try file!.file.write(frame, at: offset)
        } catch {
            try file!.file.truncate(to: offset)
            reservedEnd = offset
            throw error
        }
        // After the write, not before: a torn frame is then followed by at
        // most one step of zeros, which keeps telling a torn tail from
        // damage cheap (`LogScanner.hasIntactFrame`).
        reserve(after: offset + frame.count)
        segments[index].size += frame.count
        nextSequence += 1
        if let digest {
            activeEntries?.append(
                size: frame.count,
                checksum: LittleEndian.read(UInt32.self, frame, at: 4),
                digest: digest
            )
        } else {
            activeEntries = nil
        }
        return Position(segment: index, offset: offset, size: frame.count)
    }

    /// Reserves the active segment's blocks ahead of the appends, a step
    /// at a time, so that the sync after an append does not also write the
    /// file's new size (see `StorageFile.preallocate(from:to:)`): a durable
    /// commit costs one data write, as a bare `fdatasync` of an
    /// already-sized file does. Rollover and close cut the zeros again.
    private func reserve(after end: Int) {
        guard end >= reservedEnd else { return }
        reservedEnd = end
        guard canReserve, let file else { return }
        let step = LogFormat.reservationStep(segmentLimit: segmentLimit)
        let target = (end / step + 1) * step
        // A file system that cannot is not asked again for this segment.
        if file.file.preallocate(from: end, to: target) { reservedEnd = target } else { canReserve = false }
    }

    /// Makes `shared`, of `size` bytes on disk, the file appends go to.
    private func activate(_ shared: SharedFile, size: Int) {
        file = shared
        reservedEnd = size
        canReserve = true
    }

    /// Cuts the zeros reserved past the last record of the active segment
    /// (a clean close leaves files exactly their records' size).
    func trimReserved() throws {
        guard let file, let last = segments.last, reservedEnd > last.size else { return }
        try file.file.truncate(to: last.size)
        reservedEnd = last.size
    }

    /// Throws when `directory` no longer names the directory it named at
    /// open (``FileSystem/checkIdentity(of:is:writing:)``).
    func checkDirectory() throws {
        try fileSystem.checkIdentity(of: directory, is: directoryIdentity, writing: "into the log directory")
    }

    /// Whether the next ``append(_:)`` starts a new segment (none is open,
    /// or the last one is full or to be sealed). A segment holding no
    /// record is neither: the next would take its name (its first record's
    /// sequence), under a limit no larger than a header or a seal asked
    /// for at close.
    var needsNewSegment: Bool {
        guard file != nil else { return true }
        let size = segments[segments.count - 1].size
        guard size > LogFormat.headerSize else { return false }
        return sealRequested || size >= segmentLimit
    }

    /// Seals the active segment at the next append (or at close) when it
    /// holds at least `bytes`: a snapshot asks, so that the records it
    /// covers end up in sealed segments, which open knows by their
    /// summaries instead of reading them (the last segment is always read).
    func requestSeal(atLeast bytes: Int) {
        guard file != nil, let last = segments.last, last.size >= bytes else { return }
        sealRequested = true
    }

    /// Seals the active segment now if ``requestSeal(atLeast:)`` asked
    /// for it (a new, empty segment becomes the active one): at close, so
    /// that the records a snapshot covers do not stay in a last segment,
    /// which every open reads whole, until the next commit.
    /// - Throws: `FileSystemError`, as ``startSegment()`` does.
    func sealIfRequested() throws {
        guard sealRequested, file != nil, needsNewSegment else { return }
        try startSegment()
    }

    /// Syncs the active segment: before a rollover, so that only the last
    /// segment is ever unsynced. Once it returns, every record appended so
    /// far is durable.
    func syncTail() throws {
        if let file { try file.file.sync() }
    }

    /// Starts a new segment whose first record is the next one. The
    /// previous segment's tail is synced first (``syncTail()``, a no-op
    /// when just done); it is then let go, and closed once no group sync
    /// still holds it. When this throws from the tail's sync, the previous
    /// segment's unsynced records may not be durable; after it, they are.
    func startSegment() throws {
        try checkDirectory()
        // The segment is sealed at its records' size; its sync makes it so.
        try trimReserved()
        try syncTail()
        if file != nil, let sealed = segments.last, let entries = activeEntries, entries.framesEnd == sealed.size {
            writeSummary(entries, ofSegment: sealed.name)
        }
        // Unknown until the new segment exists: a failed start leaves the
        // sealed one last, and what a cut into it keeps is not known here.
        activeEntries = nil
        sealRequested = false
        file = nil
        let segment = Segment(name: LogFormat.segmentName(nextSequence), size: LogFormat.headerSize)
        let newFile = try fileSystem.open(path(segment), create: true)
        do {
            // A leftover file of that name (a segment of a history since cut)
            // must not lend its old records to the new segment.
            try newFile.truncate(to: 0)
            try newFile.write(LogFormat.header(firstSequence: nextSequence), at: 0)
            try newFile.sync()
            try fileSystem.syncDirectory(directory)
        } catch {
            newFile.close()
            try? fileSystem.remove(path(segment))
            throw error
        }
        segments.append(segment)
        activate(SharedFile(newFile), size: segment.size)
        activeEntries = SegmentSummary.Builder()
        // Named only once whole: from now on a short header there is damage.
        // Best effort: the old segment's records are durable already (their
        // commits must not fail now), and a manifest that lags the log is
        // still true (it bounds the history from below); the next rollover
        // or close writes it again, and a failing disk fails the next sync.
        let first = nextSequence
        try? updateManifest {
            $0.newestSegment = first
            $0.durableThrough = max($0.durableThrough, first - 1)
        }
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
        // The manifest first: it must never name a segment or a reach the
        // log no longer has.
        let newest = LogFormat.firstSequence(ofName: segments[position.segment].name) ?? 0
        try updateManifest {
            $0.newestSegment = min($0.newestSegment, newest)
            $0.durableThrough = min($0.durableThrough, sequence - 1)
        }
        closeReaders(from: position.segment)
        for segment in segments[position.segment...] { try removeSummary(ofSegment: segment.name) }
        // Within the active segment its entries up to the cut stay known;
        // a cut into a sealed one leaves them unknown.
        activeEntries = position.segment == segments.count - 1 ? activeEntries?.prefix(endingAt: position.offset) : nil
        sealRequested = false
        while segments.count - 1 > position.segment {
            let last = segments.removeLast()
            file = nil
            try fileSystem.remove(path(last))
        }
        if file == nil { file = SharedFile(try fileSystem.open(path(segments[position.segment]), create: false)) }
        try file!.file.truncate(to: position.offset)
        reservedEnd = position.offset
        segments[position.segment].size = position.offset
        nextSequence = sequence
        if sync {
            try file!.file.sync()
            try fileSystem.syncDirectory(directory)
        }
    }

    /// Drops everything: used when the first record itself goes.
    func removeAll() throws {
        try updateManifest {
            $0.newestSegment = 0
            $0.durableThrough = 0
        }
        closeReaders(from: 0)
        file = nil
        for segment in segments {
            try removeSummary(ofSegment: segment.name)
            try fileSystem.remove(path(segment))
        }
        segments = []
        activeEntries = SegmentSummary.Builder()
        sealRequested = false
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
