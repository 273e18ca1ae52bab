import Foundation

extension Store {
    /// What opening read from disk.
    struct Loaded {
        var log: TransactionLog
        var lockFile: (any StorageFile)?
        var history: TransactionHistory
        var current: Database
        var snapshotBasis: Int64
        var snapshotSizes: [Int64: Int]
        var costs: RebuildCosts
    }

    /// Opens the store in directory `path`, creating it when absent: the
    /// newest intact snapshot, then the log after it applied as one
    /// flattened transaction.
    ///
    /// - Throws: ``StoreError/locked(path:)`` when another process (or
    ///   another open in this one) has it; ``StoreError/corruptLog(segment:offset:reason:)``
    ///   for damage before the log's last record (unless
    ///   `options.recovery` is `.truncateAtDamage`);
    ///   ``StoreError/unsupportedVersion(file:found:supported:)`` for
    ///   files from a newer format; `FileSystemError` when the directory
    ///   cannot be used.
    public static func open(at path: String, options: StoreOptions = StoreOptions()) async throws -> Store {
        let fileSystem = options.fileSystem
        try fileSystem.createDirectory(path)
        let lockFile: any StorageFile
        do {
            lockFile = try fileSystem.lock(path + "/lock")
        } catch let error as FileSystemError where error.code == EWOULDBLOCK || error.code == EAGAIN {
            throw StoreError.locked(path: path)
        }
        do {
            var (loaded, warnings) = try load(path: path, options: options)
            loaded.lockFile = lockFile
            return Store(path: path, options: options, warnings: warnings, loaded: loaded)
        } catch {
            lockFile.close()
            throw error
        }
    }

    /// Opens the store in the directory at `url` (a file URL).
    public static func open(at url: URL, options: StoreOptions = StoreOptions()) async throws -> Store {
        try await open(at: url.path, options: options)
    }

    private static func load(path: String, options: StoreOptions) throws -> (Loaded, [StoreWarning]) {
        let fileSystem = options.fileSystem
        let snapshotDirectory = path + "/snapshots"
        try fileSystem.createDirectory(snapshotDirectory)
        try fileSystem.createDirectory(path + "/" + Store.blockDirectoryName)
        var bases: [(basis: Int64, name: String)] = []
        for name in try fileSystem.contents(ofDirectory: snapshotDirectory) {
            if name.hasSuffix(SnapshotFile.temporarySuffix) {
                // A snapshot write cut short: never renamed into place.
                try fileSystem.remove(snapshotDirectory + "/" + name)
            } else if let basis = SnapshotFile.basis(ofName: name) {
                bases.append((basis, name))
            }
        }
        bases.sort { $0.basis > $1.basis }

        // Transactions after the newest snapshot are decoded whole (they
        // are replayed); the rest only summarized.
        let replayFrom = bases.first?.basis ?? 0
        var history = TransactionHistory(cachedChanges: options.cachedTransactionChanges)
        var tail: [Transaction] = []
        var damage: (position: TransactionLog.Position, error: any Error)?
        let (log, logWarnings) = try TransactionLog.open(
            directory: path + "/log",
            fileSystem: fileSystem,
            segmentLimit: options.segmentSize,
            recovery: options.recovery == .strict ? .strict : .truncateAtDamage
        ) { payload, position in
            guard damage == nil else { return }
            do {
                let expected = Int64(history.count + 1)
                let (summary, basis) = try BinaryCodec.decodeTransactionSummary(Array(payload.prefix(4_096)))
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
            } catch {
                damage = (position, error)
            }
        }
        var warnings = logWarnings
        if let damage {
            let segment = log.segments[damage.position.segment].name
            let reason: String
            if case .corruptLog(_, _, let message)? = damage.error as? StoreError {
                reason = message
            } else {
                reason = "record does not decode: \(damage.error)"
            }
            guard options.recovery == .truncateAtDamage else {
                throw StoreError.corruptLog(segment: segment, offset: damage.position.offset, reason: reason)
            }
            try log.truncate(from: damage.position, sequence: Int64(history.count + 1))
            warnings.append(.truncatedAtDamage(segment: segment, offset: damage.position.offset, reason: reason))
        }

        var current: Database?
        var costs = RebuildCosts()
        var snapshotBasis: Int64 = 0
        var snapshotSizes: [Int64: Int] = [:]
        for (basis, name) in bases {
            guard basis <= Int64(history.count) else {
                warnings.append(.skippedSnapshot(file: name, reason: "it is newer than the log (t \(basis))"))
                continue
            }
            do {
                let (snapshot, size) = try costs.timingSnapshotRead {
                    try SnapshotFile.read(name, in: snapshotDirectory, fileSystem: fileSystem)
                }
                current = try costs.timingReplay(logBytes: history.logBytes(from: basis, to: Int64(history.count))) {
                    let run = try transactions(
                        after: basis,
                        through: Int64(history.count),
                        tail: tail,
                        replayFrom: replayFrom,
                        history: &history,
                        log: log
                    )
                    return try replay(run[...], onto: snapshot)
                }
                snapshotBasis = basis
                snapshotSizes[basis] = size
                break
            } catch let error as StoreError {
                switch error {
                case .unsupportedVersion, .corruptLog: throw error
                default: warnings.append(.skippedSnapshot(file: name, reason: "\(error)"))
                }
            } catch {
                warnings.append(.skippedSnapshot(file: name, reason: "\(error)"))
            }
        }
        if current == nil {
            current = try costs.timingReplay(logBytes: history.logBytes(from: 0, to: Int64(history.count))) {
                let run = try transactions(
                    after: 0,
                    through: Int64(history.count),
                    tail: tail,
                    replayFrom: replayFrom,
                    history: &history,
                    log: log
                )
                return try replay(run[...], onto: Database())
            }
        }
        return (
            Loaded(
                log: log,
                lockFile: nil,
                history: history,
                current: current!,
                snapshotBasis: snapshotBasis,
                snapshotSizes: snapshotSizes,
                costs: costs
            ),
            warnings
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

    /// `base` with `run` applied as one flattened transaction.
    static func replay(_ run: ArraySlice<Transaction>, onto base: Database) throws -> Database {
        guard !run.isEmpty else { return base }
        return try apply(base, flatten(run))
    }
}
