import Foundation
import Synchronization

extension Store {
    /// The deep check of the store at `path`, from its files alone: every
    /// checksum of every log segment, segment summary, snapshot and block
    /// file; every transaction decoded, in sequence, and replayed from the
    /// empty value; every snapshot equal to the replay at its basis, and
    /// every index (of each snapshot and of the value the whole log
    /// replays to) holding exactly its records' entries.
    ///
    /// Reads without the lock and changes nothing, so it checks a store
    /// another process has open for writing (as of the moment each file is
    /// read: a partial last record of a write in progress is a note, not
    /// damage). Damage is reported, not thrown: every file is checked
    /// whatever an earlier one held. O(store size): reads every byte once,
    /// keeping one segment, one snapshot and one compaction block in memory
    /// at a time besides the replayed value. A snapshot is compared on
    /// another core while the replay goes on, holding the value at its
    /// basis: until it ends, what the replay changes is copied (at most the
    /// value's size again).
    ///
    /// - Throws: ``StoreError/noStore(path:)`` and ``StoreError/notAStore(path:reason:)``
    ///   for a path that holds no store; ``StoreError/unsupportedVersion(file:found:supported:)``
    ///   for a file of a newer format (its contents cannot be judged);
    ///   `FileSystemError` when a directory cannot be listed.
    public static func verify(
        at path: String,
        fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> VerificationReport {
        let fileSystem = ReadOnlyFileSystem(base: fileSystem)
        _ = try StoreDirectory.check(path, fileSystem: fileSystem, create: false)
        var layout = FileCheck.layout(of: path, fileSystem: fileSystem)
        var attempt = 1
        while true {
            var check = FileCheck(path: path, fileSystem: fileSystem)
            try check.run()
            // The replayed value is freed on another thread: node by node, it
            // took 0.6 s of a 1M-record store's 4.2 s check, which the caller
            // (a command about to exit) need not wait for. Not the stores'
            // upkeep thread, whose work it would hold up.
            if let value = check.value.take() {
                let parcel = Parcel(consume value)
                DispatchQueue.global(qos: .utility).async { parcel.drop() }
            }
            // A writer that cut its history (a truncate, a revert's cut) or
            // removed files (compaction) while the check read them leaves
            // files that disagree with one another for a moment: what looks
            // like damage then is checked again, up to `verifyAttempts` in all.
            var changed = false
            if !check.report.isSound && attempt < Self.verifyAttempts {
                let now = FileCheck.layout(of: path, fileSystem: fileSystem)
                changed = now != layout
                layout = now
            }
            guard changed else {
                if !check.report.isSound && attempt > 1 {
                    check.report.notes.append(
                        "the store's files changed during \(attempt - 1) earlier check\(attempt > 2 ? "s" : ""), "
                            + "checked again"
                    )
                }
                return check.report
            }
            attempt += 1
        }
    }

    /// How many times ``verify(at:fileSystem:)`` checks a store whose files
    /// a writer changed under the check (each time it found damage).
    static let verifyAttempts = 3
}

extension FileCheck {
    /// What changes when a writer cuts the history or removes files: the
    /// manifest's bytes and the names in the log and snapshot directories
    /// (appends, which only lengthen the last segment, do not count).
    struct Layout: Equatable {
        var manifest: [UInt8]?
        var names: [[String]]
    }

    static func layout(of path: String, fileSystem: any FileSystem) -> Layout {
        let manifest = try? fileSystem.readWholeFile(path + "/" + StoreManifest.fileName)
        let names = ["/log", "/snapshots", "/" + Store.blockDirectoryName].map {
            ((try? fileSystem.contents(ofDirectory: path + $0)) ?? []).sorted()
        }
        return Layout(manifest: manifest, names: names)
    }
}

/// One run of ``Store/verify(at:fileSystem:)``.
struct FileCheck {
    let path: String
    let fileSystem: any FileSystem
    var report = VerificationReport()
    /// The replayed value; nil once the replay cannot go on (a record
    /// missing, damaged or out of sequence).
    var value: Database? = Database()
    /// Per table, the sum of its records' digests in `value`
    /// (``SnapshotFile/recordDigest(_:_:)``), kept as the replay changes
    /// records: a snapshot's records are compared with these sums. Read
    /// only while `value` is there (once it is dropped, they are not kept).
    var recordDigests: [Key: UInt64] = [:]
    /// The IDs of the transactions read, by t - 1.
    var ids: [UUID] = []
    /// The most transactions a gap between segments is taken to hide.
    static let largestGap: Int64 = 1 << 26
    /// Snapshots not yet compared, by basis.
    var pendingSnapshots: [Int64: String] = [:]
    /// The last record number the log reaches, and the first that is
    /// damaged, missing or out of sequence (nil: none).
    var reached: Int64 = 0
    var damagedFrom: Int64?
    /// The first snapshot the replay reached, log record or segment, in
    /// the replay's order (by t), in a format newer than this build reads:
    /// thrown once the replay of its segment ends and every comparison
    /// before it has (the whole check then ends as opening the store
    /// would, not as "sound", and a newer build's records are not reported
    /// as damage). See `noteNewer(_:at:)`.
    var newerFile: (error: any Error, t: Int64)?
    /// Snapshots being compared on other threads, in the order the
    /// replay reached them (see `compareSnapshot(_:basis:)`).
    var comparisons: [SnapshotComparison] = []
    /// Snapshots being summed ahead of the replay, by basis (see
    /// `startSummingSnapshots()`).
    var snapshotSums: [Int64: Eventual<SnapshotSums.Outcome>] = [:]
    let summer = SnapshotSums()
    /// Block files being read ahead of the replay, by name (see
    /// `startReadingBlocks()`).
    var blockReads: [String: Eventual<BlockRead>] = [:]

    init(path: String, fileSystem: any FileSystem) {
        self.path = path
        self.fileSystem = fileSystem
    }

    var logDirectory: String { path + "/log" }
    var snapshotDirectory: String { path + "/snapshots" }
    var blockDirectory: String { path + "/" + Store.blockDirectoryName }

    /// Keeps `error`, of a file in a newer format found at `t` of the
    /// replay, unless one found earlier in the replay is kept.
    mutating func noteNewer(_ error: any Error, at t: Int64) {
        if newerFile.map({ t < $0.t }) ?? true { newerFile = (error, t) }
    }

    mutating func problem(_ file: String, at offset: Int? = nil, _ reason: String) {
        report.problems.append(.init(file: file, offset: offset, reason: reason))
    }

    mutating func run() throws {
        let manifest = try checkManifest()
        for name in try fileSystem.contents(ofDirectory: snapshotDirectory) {
            if let basis = SnapshotFile.basis(ofName: name) {
                pendingSnapshots[basis] = name
            } else if name.hasSuffix(SnapshotFile.temporarySuffix) {
                report.notes.append("\(snapshotDirectory)/\(name): a snapshot being written, or cut short")
            }
        }
        // The newest snapshot's names first, as open does: a fresh process
        // then numbers names as the snapshots do, and their records load as
        // copies of their bytes instead of being rewritten one by one.
        let reserved = pendingSnapshots.max { $0.key < $1.key }.map {
            SnapshotFile.reserveNames(of: $0.value, in: snapshotDirectory, fileSystem: fileSystem)
        }
        defer { reserved.map(FieldNames.release) }
        startSummingSnapshots()
        startReadingBlocks()
        defer { summer.finish() }
        do {
            try checkFiles(manifest: manifest)
        } catch {
            // A snapshot compared meanwhile may have been reached first:
            // its error (a newer format) is the one the check ends with.
            finishComparisons()
            throw newerFile?.error ?? error
        }
        finishComparisons()
        if let newerFile { throw newerFile.error }
        if let value, let indexProblem = value._indexProblem() {
            problem(path, "the value the log replays to: \(indexProblem)")
        }
    }

    /// Everything but the snapshots the replay reached, whose comparisons
    /// may still be running when it returns.
    private mutating func checkFiles(manifest: StoreManifest?) throws {
        if let snapshot = pendingSnapshots[0] { try compareSnapshot(snapshot, basis: 0) }
        try checkLog(listedNewest: manifest?.newestSegment ?? 0)
        if let cut = manifest?.pendingCut {
            report.notes.append(
                "\(path)/\(StoreManifest.fileName): a truncate after t \(cut.t) was interrupted; "
                    + "the next open finishes it (the transactions after t \(cut.t) are dropped)"
            )
        } else if let manifest, manifest.durableThrough > reached {
            problem(
                path + "/" + StoreManifest.fileName,
                "the log was durable through t \(manifest.durableThrough) but reaches t \(reached)"
            )
        }
        // The snapshots left are past the log: their sums are not needed,
        // and the block files not read yet are read where they are checked
        // (one sum already running is waited for).
        summer.passed(.max)
        for (basis, name) in pendingSnapshots.sorted(by: { $0.key < $1.key }) {
            // Past the log: the history that produced it is missing.
            report.snapshots += 1
            let file = snapshotDirectory + "/" + name
            report.bytes += (try? fileSystem.openForReading(file)).flatMap { try? $0.size() } ?? 0
            if let damagedFrom, basis >= damagedFrom {
                // The log goes on past the damage, unread: the snapshot may
                // be sound (an open may start from it), and is not judged.
                report.notes.append(
                    "\(file): basis t \(basis) lies past the damage at t \(damagedFrom) (above); "
                        + "not compared with the log"
                )
            } else {
                problem(file, "basis t \(basis) is beyond the log, which ends at t \(reached)")
            }
        }
        try checkBlocks()
    }

    // MARK: Manifest

    private mutating func checkManifest() throws -> StoreManifest? {
        let file = path + "/" + StoreManifest.fileName
        do {
            let manifest = try StoreManifest.read(in: path, fileSystem: fileSystem)
            if manifest != nil {
                report.bytes += StoreManifest.size
            } else if hasHistory() {
                // Every store this build creates has one from its first
                // open on: without it, a log cut after its last durable
                // transaction cannot be told from a whole one.
                problem(
                    file,
                    "missing (deleted, or a store from before manifests): how far the history was durable "
                        + "cannot be checked; opening the store for writing writes one from the log as it is"
                )
            }
            return manifest
        } catch let error as FormatError {
            if error.isNewerVersion { throw StoreError(error) }
            problem(file, at: error.offset, error.reason)
            return nil
        }
    }

    /// What a torn tail of a segment looks like, for the note: a header or
    /// a frame cut short, a whole frame whose checksum fails (its pages
    /// need not reach the disk in order, or it is damaged), or zeros.
    private static func describeTail(_ bytes: [UInt8], at offset: Int, size: Int) -> String {
        let cut = "a write in progress, or cut short by a crash; the next open cuts it"
        if offset < LogFormat.headerSize { return "a segment header cut short (\(size) bytes: \(cut))" }
        if bytes[offset...].allSatisfy({ $0 == 0 }) { return "\(size) zero bytes after the last record (\(cut))" }
        let header = LogFormat.frameHeaderSize
        let length = size >= header ? Int(LittleEndian.read(UInt32.self, bytes, at: offset)) : 0
        if length > 0, length <= size - header {
            return "a last record whose checksum fails (\(size) bytes: \(cut), or damage)"
        }
        return "a partial last record (\(size) bytes: \(cut))"
    }

    /// Whether the store holds a log segment or a snapshot.
    private func hasHistory() -> Bool {
        let segments = (try? fileSystem.contents(ofDirectory: logDirectory)) ?? []
        let snapshots = (try? fileSystem.contents(ofDirectory: snapshotDirectory)) ?? []
        return segments.contains { LogFormat.firstSequence(ofName: $0) != nil }
            || snapshots.contains { SnapshotFile.basis(ofName: $0) != nil }
    }

    // MARK: Log

    private mutating func checkLog(listedNewest: Int64) throws {
        let files = try fileSystem.contents(ofDirectory: logDirectory)
        let names = files.filter { LogFormat.firstSequence(ofName: $0) != nil }
        let summaries = Set(files.filter { SegmentSummary.segment(ofName: $0) != nil })
        var expected: Int64 = 1
        // The log ends at the last segment longer than a header (a close's
        // snapshot leaves a new segment of a header alone after it); one
        // that cannot be sized is taken to hold records.
        let lastHolding =
            names.lastIndex { name in
                guard let handle = try? fileSystem.openForReading(logDirectory + "/" + name) else { return true }
                defer { handle.close() }
                return (try? handle.size()).map { $0 > LogFormat.headerSize } ?? true
            } ?? -1
        for (index, name) in names.enumerated() {
            let file = logDirectory + "/" + name
            let bytes: [UInt8]
            do {
                bytes = try fileSystem.readWholeFile(file)
            } catch let error as FileSystemError {
                problem(file, "cannot be read: \(error)")
                value = nil
                continue
            }
            report.segments += 1
            report.bytes += bytes.count
            let isLast = index == names.count - 1
            let scan: LogScanner.Result
            do {
                scan = try LogScanner(
                    name: name,
                    bytes: bytes,
                    isLast: isLast,
                    isListed: LogFormat.firstSequence(ofName: name) == listedNewest,
                    recovery: .truncateAtDamage
                ).scan()
            } catch let error as FormatError {
                noteNewer(StoreError(error.in(file)), at: expected)
                finishComparisons()
                throw newerFile!.error
            }
            switch scan.finding {
            case .tornTail(_, let offset, let size)?:
                report.notes.append("\(file) at offset \(offset): \(Self.describeTail(bytes, at: offset, size: size))")
            case .damage(_, let offset, let reason)?:
                problem(file, at: offset, reason)
            case nil: break
            }
            let isDamaged = scan.finding.map { if case .damage = $0 { true } else { false } } ?? false
            guard let first = scan.header else {
                if isDamaged {
                    damagedFrom = damagedFrom ?? expected
                    value = nil
                }
                continue
            }
            if first != expected {
                // After damage in an earlier segment, the records it hid
                // are unknown: no gap to report. (This segment's own damage
                // lies after its header, and hides no gap before it.)
                if damagedFrom == nil {
                    let what = first > expected ? "a segment before it is missing" : "it overlaps the one before"
                    problem(file, at: 12, "starts at record \(first) where \(expected) was expected: \(what)")
                    damagedFrom = expected
                }
                value = nil
                // A header numbered past any gap missing segments could
                // leave (more transactions than 64 Mi) is not followed:
                // the IDs of the gap would not fit in memory.
                if first - expected > Self.largestGap {
                    problem(file, at: 12, "its first record number \(first) is implausibly far past \(expected)")
                    break
                }
                // Later segments are still checked, numbered from this one
                // (the missing transactions' IDs are unknown).
                if first > expected {
                    ids += repeatElement(UUID(uuid: UUID.zero), count: Int(first - expected))
                } else {
                    ids.removeLast(min(ids.count, Int(expected - first)))
                }
                expected = first
            }
            if isDamaged {
                // What follows the damage in this segment is not read: how
                // many records it held is not known. The records before it
                // are replayed (below), so that a snapshot of one of them
                // is still compared; the replay stops after them.
                damagedFrom = damagedFrom ?? expected + Int64(scan.frames.count)
            }
            let entries = replay(
                scan.frames,
                of: bytes,
                file: file,
                endsLog: index >= lastHolding,
                expected: &expected
            )
            // A comparison that has ended may have found a newer snapshot;
            // one found here waits for those before it.
            finishComparisons(waiting: newerFile != nil)
            if let newerFile { throw newerFile.error }
            if isDamaged { value = nil }
            let summaryName = SegmentSummary.name(ofSegment: name)
            // A summary is compared with a segment read whole only.
            if summaries.contains(summaryName), !isDamaged {
                checkSummary(summaryName, of: bytes.count, first: first, entries: entries, isLast: isLast)
            }
        }
        reached = expected - 1
        report.transactions = damagedFrom.map { $0 - 1 } ?? reached
    }

    /// Decodes each record (on every core), checks it follows the one
    /// before, and replays it; compares the replay with each snapshot it
    /// reaches. The replayed value is held here alone, so each transaction
    /// changes its nodes in place, but while a snapshot comparison holds
    /// the value at its basis: the transactions then copy the paths they
    /// change.
    /// - Returns: the entries the segment's summary must list.
    private mutating func replay(
        _ frames: [LogScanner.Frame],
        of bytes: [UInt8],
        file: String,
        endsLog: Bool,
        expected: inout Int64
    ) -> [SegmentSummary.Entry] {
        var entries: [SegmentSummary.Entry] = []
        entries.reserveCapacity(frames.count)
        // Cut into runs of about `decodeBytes`: each is decoded (on every
        // core) while the one before it is replayed.
        var runs: [Range<Int>] = []
        var runStart = 0
        var runBytes = 0
        for (i, frame) in frames.enumerated() {
            runBytes += frame.size
            if runBytes >= Self.decodeBytes || i - runStart + 1 == Self.decodeFrames || i == frames.count - 1 {
                runs.append(runStart..<(i + 1))
                runStart = i + 1
                runBytes = 0
            }
        }
        // Each run decoded while the one before it is replayed.
        let decoding = { (run: Range<Int>) in
            Eventual { [frames = Array(frames[run])] in FileCheck.decode(frames, of: bytes) }
        }
        var ahead = runs.first.map(decoding)
        for (k, run) in runs.enumerated() {
            let decodedRun = ahead!.take()
            ahead = k + 1 < runs.count ? decoding(runs[k + 1]) : nil
            for (position, (index, decoded)) in zip(run, decodedRun).enumerated() {
                if position % Self.prefetchAhead == 0 {
                    // The next few transactions' paths read together (see `Database._prefetch`).
                    let next = decodedRun[position..<min(decodedRun.count, position + Self.prefetchAhead)]
                    value?._prefetch(next.lazy.compactMap { try? $0.get() })
                }
                let frame = frames[index]
                let transaction: Transaction
                switch decoded {
                case .success(let value): transaction = value
                case .failure(let error) where StoreError.isNewerRecord(error):
                    // Not judged: the check ends as opening the store would.
                    noteNewer(
                        StoreError.undecodableRecord(error, segment: file, file: file, offset: frame.offset),
                        at: expected
                    )
                    value = nil
                    return entries
                case .failure(let error):
                    problem(file, at: frame.offset, "record \(expected) does not decode: \(error)")
                    damagedFrom = damagedFrom ?? expected
                    value = nil
                    expected += 1
                    ids.append(UUID(uuid: UUID.zero))
                    continue
                }
                if transaction.t != expected || transaction.basis != expected - 1 {
                    problem(
                        file,
                        at: frame.offset,
                        "record is transaction t \(transaction.t) on basis \(transaction.basis) where t \(expected) was expected"
                    )
                    damagedFrom = damagedFrom ?? expected
                    value = nil
                }
                let checksum = LittleEndian.read(UInt32.self, bytes, at: frame.offset + 4)
                entries.append(
                    .init(size: frame.size, checksum: checksum, digest: BinaryCodec.digest(transaction.summary))
                )
                ids.append(transaction.id)
                if var current = value {
                    // Held here alone, so that its nodes change in place.
                    value = nil
                    do {
                        // The sums take a transaction's changes once all of them applied.
                        let sums = try current._apply(transaction, digest: SnapshotFile.recordDigest)
                        for (table, sum) in sums { recordDigests[table, default: 0] &+= sum }
                        value = current
                    } catch {
                        problem(
                            file,
                            at: frame.offset,
                            "transaction t \(transaction.t) does not apply to the value before it: \(error)"
                        )
                    }
                }
                if let snapshot = pendingSnapshots[expected] {
                    do {
                        try compareSnapshot(snapshot, basis: expected, replayEnds: endsLog && index == frames.count - 1)
                    } catch {
                        noteNewer(error, at: expected)
                    }
                }
                expected += 1
            }
            // Freed on another thread (what the replay keeps is shared,
            // the rest is the run's maps of changes).
            Self.release(consume decodedRun)
        }
        return entries
    }

    /// A run of records decoded at once (in parallel): until it holds
    /// this many bytes or records.
    private static let decodeBytes = 2 << 20
    private static let decodeFrames = 4_096

    /// How many transactions' paths are read into cache together.
    private static let prefetchAhead = 8

    /// Drops a replayed run on another thread, which frees what only it held.
    private static func release(_ run: consuming [Result<Transaction, any Error>]) {
        let parcel = Parcel(consume run)
        DispatchQueue.global().async { parcel.drop() }
    }

    /// The transactions `frames` hold, decoded on every core.
    private static func decode(_ frames: [LogScanner.Frame], of bytes: [UInt8]) -> [Result<Transaction, any Error>] {
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, frames.count))
        let per = (frames.count + lanes - 1) / lanes
        let results = Mutex([[Result<Transaction, any Error>]](repeating: [], count: lanes))
        SnapshotFile.parallel(lanes) { lane in
            let range = (lane * per)..<min(frames.count, (lane + 1) * per)
            let decoded = range.map { index in
                let frame = frames[index]
                return Result {
                    try BinaryCodec.decodeTransaction(
                        Array(bytes[(frame.offset + LogFormat.frameHeaderSize)..<frame.end])
                    )
                }
            }
            results.withLock { $0[lane] = decoded }
        }
        return results.withLock { $0 }.flatMap { $0 }
    }

    private mutating func checkSummary(
        _ name: String,
        of segmentSize: Int,
        first: Int64,
        entries: [SegmentSummary.Entry],
        isLast: Bool
    ) {
        let file = logDirectory + "/" + name
        // Removed or rewritten meanwhile (a writer at work) is no damage.
        guard let bytes = try? fileSystem.readWholeFile(file) else { return }
        report.summaries += 1
        report.bytes += bytes.count
        let summary: SegmentSummary
        do {
            summary = try SegmentSummary.decode(bytes, file: file)
        } catch {
            // Derived data, written without a sync (and being written, when
            // a writer is at work): open ignores one that does not check.
            report.notes.append(
                "\(file) at offset \(error.offset): \(error.reason) (ignored by open, which reads the segment and rewrites it)"
            )
            return
        }
        // One that no longer describes its segment is ignored by open; one
        // that does must list exactly its records.
        guard summary.firstSequence == first, summary.segmentSize == segmentSize else {
            if isLast { return }
            report.notes.append("\(file): describes an earlier state of its segment; the next open rewrites it")
            return
        }
        if summary.entries != entries {
            problem(file, "lists records that are not its segment's")
        }
    }
}
