import Foundation

extension Store {
    /// What opening read from disk.
    struct Loaded {
        var log: TransactionLog
        /// Nil for a read-only store, which takes no lock.
        var lock: StoreLock?
        var history: TransactionHistory
        var current: Database
        var snapshotBasis: Int64
        var snapshotSizes: [Int64: Int]
        var costs: RebuildCosts
    }

    /// Opens the store in directory `path`: the newest intact snapshot
    /// that belongs to the log's history, then the log after it applied as
    /// one flattened transaction.
    ///
    /// A missing directory is created only with
    /// ``StoreOptions/createIfMissing``, so a mistyped path is an error, not
    /// a new empty store.
    ///
    /// - Throws: ``StoreError/noStore(path:)`` when the directory does not
    ///   exist (and `createIfMissing` is off); ``StoreError/notAStore(path:reason:)``
    ///   for a file, a directory of other files or an empty path; ``StoreError/locked(path:)``
    ///   when another process (or a store of this one the app still holds)
    ///   has it: a store of this process let go of without ``close()``
    ///   keeps the lock while its background work (a snapshot or a
    ///   compaction round being written) ends, and open waits for that
    ///   instead, however long it takes (seconds for a large store);
    ///   ``StoreError/corruptLog(segment:offset:reason:)`` for damage before
    ///   the log's last record in what open reads (the log from the newest
    ///   snapshot on; a sealed segment before it is known by its summary,
    ///   and its damage is found by ``verify()`` or when read) and ``StoreError/missingHistory(reached:expected:reason:)``
    ///   for a missing or cut segment (unless `options.recovery` is
    ///   `.truncateAtDamage`); ``StoreError/unsupportedVersion(file:found:supported:)``
    ///   for files, or log records, from a newer format (whatever the
    ///   recovery option: not damage); `FileSystemError` when the directory
    ///   cannot be used.
    public static func open(at path: String, options: StoreOptions = StoreOptions()) async throws -> Store {
        // The store's files are found by this path for as long as it is
        // open: a relative one would follow the process's working directory.
        let path = absolute(path)
        if options.readOnly { return try await openReadOnly(at: path, options: options) }
        let fileSystem = options.fileSystem
        let isNew = try StoreDirectory.check(path, fileSystem: fileSystem, create: options.createIfMissing)
        if isNew { try fileSystem.createDirectory(path) }
        let key = StoreLock.Key(path, fileSystem: fileSystem)
        let lockFiles = try await lock(path, key: key, fileSystem: fileSystem)
        do {
            // The manifest first: from here on the directory reads as a
            // store, even if this first open is cut short.
            if isNew { try StoreManifest().write(in: path, fileSystem: fileSystem) }
            var (loaded, warnings) = try StoreError.mappingFormat { try load(path: path, options: options) }
            // The directories the store writes into, held open while it
            // is: their inodes stay theirs (numbers neither reused nor
            // renumbered) while it checks them by identity.
            let pinned = ["/log", "/snapshots"].compactMap { try? fileSystem.openForReading(path + $0) }
            loaded.lock = StoreLock(files: lockFiles + pinned, key: key)
            let store = Store(path: path, options: options, warnings: warnings, loaded: loaded)
            await store.pruneSnapshots()
            // Measures the value off the actor; until then its size is
            // estimated from its record count.
            await store.applyMemoryBudget()
            return store
        } catch {
            for file in lockFiles { file.close() }
            throw error
        }
    }

    /// `path` made absolute against the working directory (an empty path
    /// stays empty: no store).
    static func absolute(_ path: String) -> String {
        guard !path.isEmpty, !path.hasPrefix("/") else { return path }
        let directory = FileManager.default.currentDirectoryPath
        // No working directory (removed): the path stays relative, and
        // fails as it would have.
        guard !directory.isEmpty else { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }

    /// Opens without the lock, through a file system that cannot write;
    /// see ``StoreOptions/readOnly``.
    private static func openReadOnly(at path: String, options: StoreOptions) async throws -> Store {
        var options = options
        options.fileSystem = ReadOnlyFileSystem(base: options.fileSystem)
        _ = try StoreDirectory.check(path, fileSystem: options.fileSystem, create: false)
        let (loaded, warnings) = try await readingWhileWritten(path: path, options: options) {
            try StoreError.mappingFormat { try load(path: path, options: options) }
        }
        let store = Store(path: path, options: options, warnings: warnings, loaded: loaded)
        await store.applyMemoryBudget()
        return store
    }

    /// Runs `read` (a read-only open), again when it fails in a way a
    /// writer working meanwhile can cause: a file removed between being
    /// listed and read (a snapshot replaced, a segment cut by a truncate),
    /// or a manifest naming a segment not yet listed. Damage that is really
    /// on disk fails every attempt and is reported as the last one found it.
    static func readingWhileWritten<T>(path: String, options: StoreOptions, _ read: () throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try read()
            } catch let error as StoreError where attempt < Self.readAttempts {
                switch error {
                case .corruptLog, .missingHistory, .corruptManifest, .corruptSnapshot, .historyChanged: break
                default: throw error
                }
            } catch let error as FileSystemError where attempt < Self.readAttempts && error.code == ENOENT {
            }
            attempt += 1
            await pause(milliseconds: 20)
        }
    }

    /// Waits `milliseconds` whether or not the task is cancelled: a retry
    /// that ran out at once in a cancelled task (`Task.sleep` returns
    /// then) would report what lasts a moment (a lock held past its
    /// holder's close, a file being replaced) as the store's state.
    static func pause(milliseconds: Int) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { continuation.resume() }
        }
    }

    /// How many times a read-only open reads a store being written.
    static let readAttempts = 3

    /// Takes the store's lock. A lock held for a moment longer than its
    /// holder's close is retried for up to ~0.2 s: a process spawning a
    /// child holds a copy of every descriptor (the lock's too) from the
    /// fork until the child's exec closes it, so a store closed and reopened
    /// while the app starts a process could otherwise read as locked.
    ///
    /// A lock held by a store of this process that was let go of, kept
    /// while its background work finishes (see ``StoreLock``), is waited
    /// for instead: the app reopening its own store is not another writer.
    ///
    /// The directory is locked too: a lock file deleted while the store is
    /// open (by a clean-up script) and made again by the next open would
    /// otherwise let a second writer in.
    private static func lock(
        _ path: String,
        key: StoreLock.Key,
        fileSystem: any FileSystem
    ) async throws -> [any StorageFile] {
        var attempt = 0
        while true {
            do {
                let file = try fileSystem.lock(path + "/lock")
                do {
                    return [file] + (try fileSystem.lockDirectory(path).map { [$0] } ?? [])
                } catch {
                    file.close()
                    throw error
                }
            } catch let error as FileSystemError where error.code == EWOULDBLOCK || error.code == EAGAIN {
                if await StoreLock.awaitDroppedStores(key) {
                    // Its work done, the lock is tried afresh.
                    attempt = 0
                    continue
                }
                attempt += 1
                guard attempt < Self.lockAttempts else { throw StoreError.locked(path: path) }
                await pause(milliseconds: attempt < 5 ? 1 : 10)
            }
        }
    }

    /// How many times open tries a held lock (~0.2 s in all).
    static let lockAttempts = 24

    /// Opens the store in the directory at `url` (a file URL).
    public static func open(at url: URL, options: StoreOptions = StoreOptions()) async throws -> Store {
        try await open(at: url.path, options: options)
    }

    private static func load(path: String, options: StoreOptions) throws -> (Loaded, [StoreWarning]) {
        var attempt = ReadWholeLog(replayFrom: .max, failed: [], warnings: [])
        while true {
            do {
                var (loaded, warnings) = try load(path: path, options: options, retrying: attempt)
                warnings = attempt.warnings + warnings.filter { !attempt.warnings.contains($0) }
                return (loaded, warnings)
            } catch let record as UnappliableRecord {
                // Damage of its own kind: the records before it stay.
                guard options.recovery == .truncateAtDamage, record.t - 1 < attempt.cutAfter ?? .max else {
                    throw StoreError.corruptLog(segment: record.segment, offset: record.offset, reason: record.reason)
                }
                attempt.cutAfter = record.t - 1
                attempt.replayFrom = .max
                attempt.warnings.append(
                    .truncatedAtDamage(segment: record.segment, offset: record.offset, reason: record.reason)
                )
            } catch let retry as ReadWholeLog {
                // What an attempt changed on disk (a cut, a snapshot
                // removed) is done; what it reported is kept. Each retry
                // reads from an older start, the last from the first record.
                guard retry.replayFrom < attempt.replayFrom else {
                    throw StoreError.corruptLog(
                        segment: "",
                        offset: 0,
                        reason: "no snapshot loads and the log before t \(retry.replayFrom) cannot be read whole"
                    )
                }
                attempt.warnings += retry.warnings.filter { !attempt.warnings.contains($0) }
                attempt.failed.formUnion(retry.failed)
                attempt.replayFrom = retry.replayFrom
                attempt.foreign = retry.foreign
            }
        }
    }

    /// The newest snapshot did not load, and an older one needs records
    /// that were known by their segments' summaries only: open starts over
    /// reading whole the segments after that snapshot's basis, so that
    /// damage there is handled by the recovery option like any other (not
    /// met later, while replaying). The records before it stay known by
    /// their summaries: damage there costs as-of into that stretch, not
    /// the value (which a truncation would).
    private struct ReadWholeLog: Error {
        /// The basis of the snapshot to start from (0: none).
        var replayFrom: Int64
        /// The snapshots that did not load, not read again.
        var failed: Set<String>
        var warnings: [StoreWarning]
        /// The last transaction kept: one after it did not apply (see
        /// `UnappliableRecord`); nil: none found.
        var cutAfter: Int64?
        /// Snapshots of another history found so far: removed once an
        /// attempt has the value.
        var foreign: [String] = []
    }

    /// A log record whose checksum holds but whose transaction does not
    /// apply to the value before it (a segment of another store copied
    /// in): damage at its place in the log, which `.truncateAtDamage`
    /// cuts as it cuts a record that does not check.
    private struct UnappliableRecord: Error {
        var t: Int64
        var segment: String
        var offset: Int
        var reason: String
    }

    /// What reading the log found: the history it holds (cut where
    /// recovery cut it), and what the value phase of open needs.
    struct LogRead {
        var log: TransactionLog
        var history: TransactionHistory
        /// Transactions after `replayFrom`, decoded whole.
        var tail: [Transaction]
        var replayFrom: Int64
        /// Snapshots on disk that belong to the history kept, newest first.
        var bases: [(basis: Int64, name: String)]
        /// Their checked headers and file sizes, by name, as read to tell
        /// snapshots from files only named like them (none for a newer
        /// build's, whose header this build does not read).
        var headers: [String: (header: SnapshotFile.Header, size: Int)]
        /// Whether a segment was known by its summary only.
        var usedSummaries: Bool
        var warnings: [StoreWarning]
        /// Field-name IDs held for the newest snapshot: the value phase
        /// releases them.
        var reservedNames: [UInt32]
    }

    private static func load(
        path: String,
        options: StoreOptions,
        retrying attempt: ReadWholeLog
    ) throws -> (Loaded, [StoreWarning]) {
        let read = try readLog(
            path: path,
            options: options,
            replayingFrom: attempt.replayFrom,
            keepingThrough: attempt.cutAfter,
            historyOnly: false
        )
        defer { FieldNames.release(read.reservedNames) }
        var (history, warnings) = (read.history, read.warnings)
        let (log, tail, replayFrom, bases, usedSummaries) = (
            read.log, read.tail, read.replayFrom, read.bases, read.usedSummaries
        )
        let fileSystem = options.fileSystem
        let snapshotDirectory = path + "/snapshots"
        var current: Database?
        var costs = RebuildCosts()
        var snapshotBasis: Int64 = 0
        var snapshotSizes: [Int64: Int] = [:]
        let last = Int64(history.count)
        var failed: Set<String> = []
        var foreign = attempt.foreign
        for (position, (basis, name)) in bases.enumerated() where !attempt.failed.contains(name) {
            if usedSummaries, basis < replayFrom {
                log.close()
                throw ReadWholeLog(
                    replayFrom: basis,
                    failed: failed,
                    warnings: warnings,
                    cutAfter: attempt.cutAfter,
                    foreign: foreign
                )
            }
            failed.insert(name)
            do {
                var basisID: UUID?
                let (snapshot, size) = try costs.timingSnapshotRead {
                    let read = try SnapshotFile.read(name, in: snapshotDirectory, fileSystem: fileSystem)
                    basisID = read.basisID
                    return (read.0, read.size)
                }
                if let basisID, basisID != history.id(of: basis) {
                    // Taken from a history since cut and grown again: removed
                    // once the open has its value (an open that fails
                    // leaves every file as it found it).
                    if !options.readOnly { foreign.append(name) }
                    let outcome = options.readOnly ? "skipped" : "removed"
                    warnings.append(
                        .skippedSnapshot(
                            file: name,
                            reason:
                                "it was taken from another history (transaction \(basisID) at t \(basis)); \(outcome)"
                        )
                    )
                    continue
                }
                current = try costs.timingReplay(logBytes: history.logBytes(from: basis, to: last)) {
                    let run = try transactions(
                        after: basis,
                        through: last,
                        tail: tail,
                        replayFrom: replayFrom,
                        history: &history,
                        log: log
                    )
                    return try replay(run[...], onto: snapshot, history: history, log: log)
                }
                snapshotBasis = basis
                snapshotSizes[basis] = size
                snapshotSizes.merge(
                    olderSnapshots(bases[(position + 1)...], headers: read.headers, history: history),
                    uniquingKeysWith: { kept, _ in kept }
                )
                // A store whose snapshot covers its whole log, left with a
                // large last segment (by an earlier build, or a process that
                // died after its snapshot): sealed at the next commit or
                // close, as after a snapshot.
                if !options.readOnly, basis == last { log.requestSeal(atLeast: LogFormat.sealAtSnapshot) }
                break
            } catch let error as UnappliableRecord {
                // The log after the snapshot does not apply to it: the
                // snapshot may be what is wrong (one of version 1 names no
                // basis transaction). An older start, or the replay from
                // the first record, blames the log if it fails there too.
                warnings.append(.skippedSnapshot(file: name, reason: error.reason))
            } catch let error as FormatError {
                // A newer format or a damaged log is not the snapshot's to absorb.
                if error.isNewerVersion { throw StoreError(error.in(snapshotDirectory + "/" + name)) }
                if error.kind == .logSegment { throw StoreError(error) }
                warnings.append(.skippedSnapshot(file: name, reason: "\(StoreError(error))"))
            } catch let error as StoreError {
                switch error {
                case .unsupportedVersion, .corruptLog, .historyChanged: throw error
                default: warnings.append(.skippedSnapshot(file: name, reason: "\(error)"))
                }
            } catch let error as FileSystemError where error.code == ENOENT {
                // Removed since its header was read (pruned by the store's
                // writer): an older one, or the log, serves.
            } catch {
                warnings.append(.skippedSnapshot(file: name, reason: "\(error)"))
            }
        }
        if current == nil, usedSummaries {
            log.close()
            throw ReadWholeLog(
                replayFrom: 0,
                failed: failed,
                warnings: warnings,
                cutAfter: attempt.cutAfter,
                foreign: foreign
            )
        }
        if current == nil {
            current = try costs.timingReplay(logBytes: history.logBytes(from: 0, to: last)) {
                let run = try transactions(
                    after: 0,
                    through: last,
                    tail: tail,
                    replayFrom: replayFrom,
                    history: &history,
                    log: log
                )
                return try replay(run[...], onto: Database(), history: history, log: log)
            }
        }
        // (A cut may have removed one already.)
        for name in foreign where fileSystem.exists(snapshotDirectory + "/" + name) {
            try fileSystem.remove(snapshotDirectory + "/" + name)
        }
        return (
            Loaded(
                log: log,
                lock: nil,
                history: history,
                current: current!,
                snapshotBasis: snapshotBasis,
                snapshotSizes: snapshotSizes,
                costs: costs
            ),
            warnings
        )
    }

    /// The older snapshots on disk that are starts for as-of: each one's
    /// header (as `readLog` read it, not its payload) and its basis
    /// transaction's ID checked against the history, so that a snapshot of
    /// a history since cut and grown again, a damaged header or a version 1
    /// file (no ID) is left out. By basis, the file sizes. O(snapshots).
    private static func olderSnapshots(
        _ bases: ArraySlice<(basis: Int64, name: String)>,
        headers: [String: (header: SnapshotFile.Header, size: Int)],
        history: TransactionHistory
    ) -> [Int64: Int] {
        var sizes: [Int64: Int] = [:]
        for (basis, name) in bases {
            guard let expected = history.id(of: basis), let (header, size) = headers[name],
                header.basis == basis, header.basisID == expected
            else { continue }
            sizes[basis] = size
        }
        return sizes
    }

    /// Reads the store's log (the manifest, every segment or its summary,
    /// the snapshots' names), reconciles it with what the store knows of its
    /// history and, unless read-only, carries out the recovery decided
    /// (cuts, removals, the manifest rewritten).
    ///
    /// - Parameter historyOnly: every sealed segment is known by its
    ///   summary when it has a sound one, and no transaction is decoded
    ///   whole (no value will be built).
    static func readLog(
        path: String,
        options: StoreOptions,
        replayingFrom start: Int64 = .max,
        keepingThrough cutAfter: Int64? = nil,
        historyOnly: Bool
    ) throws -> LogRead {
        let fileSystem = options.fileSystem
        let readOnly = options.readOnly
        var warnings: [StoreWarning] = []
        var manifest: StoreManifest?
        do {
            manifest = try StoreManifest.read(in: path, fileSystem: fileSystem)
        } catch let error as FormatError {
            guard options.recovery == .truncateAtDamage, !error.isNewerVersion else { throw StoreError(error) }
            warnings.append(.rebuiltManifest(reason: "\(error.file): \(error.reason)"))
        }
        let pendingCut = manifest?.pendingCut
        let snapshotDirectory = path + "/snapshots"
        try fileSystem.createDirectory(snapshotDirectory)
        try fileSystem.createDirectory(path + "/" + Store.blockDirectoryName)
        var bases: [(basis: Int64, name: String)] = []
        for name in try fileSystem.contents(ofDirectory: snapshotDirectory) {
            if name.hasSuffix(SnapshotFile.temporarySuffix) {
                // A snapshot write cut short: never renamed into place (or,
                // seen read-only, one being written).
                if !readOnly { try fileSystem.remove(snapshotDirectory + "/" + name) }
            } else if let basis = SnapshotFile.basis(ofName: name) {
                bases.append((basis, name))
            }
        }
        bases.sort { $0.basis > $1.basis }
        // A name is no snapshot: a file whose header does not check, or
        // names another basis (damaged, or another store's copied in), is
        // neither a start nor evidence of history past the log. Left in
        // place, reported at every open. A newer build's is kept, for the
        // value phase to refuse.
        var headers: [String: (header: SnapshotFile.Header, size: Int)] = [:]
        bases.removeAll { basis, name in
            let reason: String
            do {
                let (header, size) = try SnapshotFile.header(of: name, in: snapshotDirectory, fileSystem: fileSystem)
                guard header.basis != basis else {
                    headers[name] = (header, size)
                    return false
                }
                reason = "its header names basis t \(header.basis), its name t \(basis)"
            } catch let error as FormatError where error.isNewerVersion {
                return false
            } catch let error as FileSystemError where error.code == ENOENT {
                // Removed since listed (pruned by the store's writer): no
                // snapshot, and nothing to report.
                return true
            } catch {
                reason = "\(error)"
            }
            warnings.append(.skippedSnapshot(file: name, reason: "\(reason); left in place, not read"))
            return true
        }

        // Transactions after the newest snapshot are decoded whole (they
        // are replayed); the rest only summarized.
        let replayFrom = historyOnly ? .max : min(start, bases.first?.basis ?? 0)
        // The snapshot's names before the tail's: see `SnapshotFile.reserveNames`.
        let reservedNames =
            historyOnly
            ? []
            : bases.first.map {
                SnapshotFile.reserveNames(of: $0.name, in: snapshotDirectory, fileSystem: fileSystem)
            } ?? []
        // Released by the value phase once the snapshot is decoded.
        var handedOver = false
        defer { if !handedOver { FieldNames.release(reservedNames) } }
        var history = TransactionHistory(cachedChanges: options.cachedTransactionChanges)
        var usedSummaries = false
        var tail: [Transaction] = []
        var damage: (position: TransactionLog.Position, error: any Error)?
        let (log, found) = try TransactionLog.open(
            directory: path + "/log",
            fileSystem: fileSystem,
            segmentLimit: options.segmentSize,
            recovery: options.recovery == .strict ? .strict : .truncateAtDamage,
            listedNewest: pendingCut == nil ? manifest?.newestSegment ?? 0 : 0,
            summarized: { entries, positions in
                // Only what precedes the snapshot: later records are replayed, so read.
                let first = Int64(history.count + 1)
                guard first + Int64(entries.count) - 1 <= replayFrom else { return false }
                var decoded: [TransactionSummary] = []
                decoded.reserveCapacity(entries.count)
                for (i, entry) in entries.enumerated() {
                    guard let summary = try? BinaryCodec.summary(digest: entry.digest, t: first + Int64(i)) else {
                        return false
                    }
                    decoded.append(summary)
                }
                history.reserveCapacity(history.count + decoded.count)
                for (summary, position) in zip(decoded, positions) { history.append(summary, at: position) }
                // A segment of no records has nothing to read whole.
                if !decoded.isEmpty { usedSummaries = true }
                return true
            }
        ) { payload, position in
            do {
                let expected = Int64(history.count + 1)
                let (summary, basis) = try summaryAndBasis(payload)
                guard summary.t == expected, basis == expected - 1 else {
                    throw StoreError.corruptLog(
                        segment: "",
                        offset: position.offset,
                        reason: "transaction t \(summary.t) where \(expected) was expected"
                    )
                }
                if summary.t > replayFrom {
                    tail.append(try BinaryCodec.decodeTransaction(Array(payload)))
                }
                history.append(summary, at: position)
                // Digests make the segments' summaries, which a read-only open never writes.
                return readOnly ? [] : BinaryCodec.digest(summary)
            } catch {
                damage = (position, error)
                return nil
            }
        }
        // Its writer may cut or rewrite the log while it reads.
        log.isReadOnly = readOnly
        warnings += found.findings.map(StoreWarning.init)
        if let damage {
            let segment = log.segments[damage.position.segment].name
            // A newer build's record is no damage: refused whatever the
            // recovery option (nothing is cut before `finishRecovery`).
            if StoreError.isNewerRecord(damage.error) {
                throw StoreError.undecodableRecord(
                    damage.error,
                    segment: segment,
                    file: log.path(ofSegment: damage.position.segment),
                    offset: damage.position.offset
                )
            }
            let reason: String
            if case .corruptLog(_, _, let message)? = damage.error as? StoreError {
                reason = message
            } else {
                reason = "record does not decode: \(damage.error)"
            }
            guard options.recovery == .truncateAtDamage else {
                throw StoreError.corruptLog(segment: segment, offset: damage.position.offset, reason: reason)
            }
            warnings.append(.truncatedAtDamage(segment: segment, offset: damage.position.offset, reason: reason))
        }

        // How far the history is known to have reached, against what the log holds.
        let reached = Int64(history.count)
        var keep = reached
        var expected = max(manifest?.durableThrough ?? 0, bases.first?.basis ?? 0)
        var lossReasons: [String] = []
        if let manifest, pendingCut == nil, manifest.newestSegment > 0 {
            expected = max(expected, manifest.newestSegment - 1)
            if found.newestSegment < manifest.newestSegment {
                lossReasons.append("log segment \(LogFormat.segmentName(manifest.newestSegment)) is missing")
            }
        }
        if let pendingCut {
            // truncate(after:) was cut short: finish it, if it is this log's.
            expected = max(expected, pendingCut.t)
            if pendingCut.t <= reached, pendingCut.t == 0 || history.summary(pendingCut.t).id == pendingCut.id {
                keep = pendingCut.t
                expected = min(expected, keep)
            } else if pendingCut.t <= reached {
                guard options.recovery == .truncateAtDamage else {
                    throw StoreError.corruptManifest(
                        file: path + "/" + StoreManifest.fileName,
                        reason: "its pending cut names transaction \(pendingCut.id) at t \(pendingCut.t), "
                            + "which the log does not hold"
                    )
                }
                warnings.append(.rebuiltManifest(reason: "dropped a pending cut of another history"))
            }
        }
        // A record that did not apply when a first attempt replayed it.
        if let cutAfter, cutAfter < keep { keep = cutAfter }
        if let bases = bases.first, bases.basis > reached {
            lossReasons.append("snapshot \(bases.name) has basis t \(bases.basis)")
        }
        if reached < expected, manifest.map({ $0.durableThrough > reached }) ?? false {
            lossReasons.append("the log was durable through t \(manifest!.durableThrough)")
        }
        if let cut = found.cut { lossReasons.append("\(cut.segment) at offset \(cut.offset): \(cut.reason)") }
        let lost = max(expected, found.reachedOnDisk) - reached
        if lost > 0 || !lossReasons.isEmpty {
            let reason = lossReasons.isEmpty ? "the log ends early" : lossReasons.joined(separator: "; ")
            guard options.recovery == .truncateAtDamage else {
                throw StoreError.missingHistory(
                    reached: reached,
                    expected: max(expected, found.reachedOnDisk),
                    reason: reason
                )
            }
            warnings.append(.lostTransactions(after: reached, atLeast: max(0, lost), reason: reason))
        }

        // What was built from a history being dropped goes before the log
        // is cut, so a crash between the two leaves nothing stale behind.
        // Read-only, the same decisions are kept in memory: nothing on disk changes.
        var removedSnapshot = false
        for (basis, name) in bases where basis > keep {
            if !readOnly { try fileSystem.remove(snapshotDirectory + "/" + name) }
            removedSnapshot = true
            if basis <= reached { continue }
            let outcome = readOnly ? "" : "; removed"
            warnings.append(.skippedSnapshot(file: name, reason: "it is newer than the log (t \(basis))\(outcome)"))
        }
        if removedSnapshot, !readOnly { try fileSystem.syncDirectory(snapshotDirectory) }
        bases.removeAll { $0.basis > keep }
        if !readOnly {
            BlockFiles(directory: path + "/" + Store.blockDirectoryName, fileSystem: fileSystem)
                .removeAll(after: keep, blockSize: RunIndex.blockSize)
            try log.finishRecovery()
        }
        if keep < reached {
            if !readOnly { try log.truncate(from: history.positions[Int(keep)], sequence: keep + 1) }
            history.removeAll(after: keep)
            tail.removeAll { $0.t > keep }
        }
        if !readOnly {
            try log.adoptManifest(
                StoreManifest(
                    durableThrough: keep,
                    newestSegment: log.segments.last.flatMap { LogFormat.firstSequence(ofName: $0.name) } ?? 0
                ),
                in: path,
                written: manifest
            )
        }

        handedOver = true
        return LogRead(
            log: log,
            history: history,
            tail: tail,
            replayFrom: replayFrom,
            bases: bases,
            headers: headers,
            usedSummaries: usedSummaries,
            warnings: warnings,
            reservedNames: reservedNames
        )
    }

    /// Transactions `first + 1 ... last`: from `tail` (decoded at open, from
    /// `replayFrom + 1`) where it reaches, else read back from the log (a
    /// newer snapshot turned out damaged).
    private static func transactions(
        after first: Int64,
        through last: Int64,
        tail: [Transaction],
        replayFrom: Int64,
        history: inout TransactionHistory,
        log: TransactionLog
    ) throws -> [Transaction] {
        guard first < last else { return [] }
        var run: [Transaction] = []
        run.reserveCapacity(Int(last - first))
        if first < replayFrom {
            run += try history.run((first + 1)...min(replayFrom, last), log: log)
        }
        let tailStart = max(first, replayFrom)
        if tailStart < last {
            run += tail[Int(tailStart - replayFrom)..<Int(last - replayFrom)]
        }
        return run
    }

    /// The summary at the head of a log record. A summary has no fixed
    /// size (a message or metadata of megabytes): it is read from the
    /// first 4 KiB when it fits there (sparing a copy of a large record),
    /// else from the whole record.
    static func summaryAndBasis(_ payload: ArraySlice<UInt8>) throws -> (TransactionSummary, Int64) {
        let prefix = 4_096
        if payload.count > prefix,
            let decoded = try? BinaryCodec.decodeTransactionSummary(Array(payload.prefix(prefix)))
        {
            return decoded
        }
        return try BinaryCodec.decodeTransactionSummary(Array(payload))
    }

    /// `base` with `run` applied as one flattened transaction.
    static func replay(_ run: ArraySlice<Transaction>, onto base: Database) throws -> Database {
        guard !run.isEmpty else { return base }
        return try apply(base, flatten(run))
    }

    /// `replay(_:onto:)`, for a run of the log: a transaction that does
    /// not apply to the value before it (records whose checksums hold but
    /// that are not this history's: a segment of another store copied in)
    /// is found by applying the run one by one, and named as damage at
    /// its place in the log.
    /// - Throws: `UnappliableRecord`.
    private static func replay(
        _ run: ArraySlice<Transaction>,
        onto base: Database,
        history: TransactionHistory,
        log: TransactionLog
    ) throws -> Database {
        do {
            return try replay(run, onto: base)
        } catch let error where error is FlattenError || error is ApplyError {
            var value = base
            for transaction in run {
                do {
                    try value._apply(transaction)
                } catch {
                    let position = history.position(transaction.t)
                    throw UnappliableRecord(
                        t: transaction.t,
                        segment: log.segments[position.segment].name,
                        offset: position.offset,
                        reason: "transaction t \(transaction.t) does not apply to the value before it: \(error)"
                    )
                }
            }
            // Each applies to the value before it: that is the value.
            return value
        }
    }
}
