import Foundation

extension Store {
    /// What opening read from disk.
    struct Loaded {
        var log: TransactionLog
        var lockFile: (any StorageFile)?
        var transactions: [Transaction]
        var positions: [TransactionLog.Position]
        var current: Database
        var snapshotBasis: Int64
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
        let (log, records, logWarnings) = try TransactionLog.open(
            directory: path + "/log",
            fileSystem: fileSystem,
            segmentLimit: options.segmentSize,
            recovery: options.recovery == .strict ? .strict : .truncateAtDamage
        )
        var warnings = logWarnings
        var transactions: [Transaction] = []
        var positions: [TransactionLog.Position] = []
        transactions.reserveCapacity(records.count)
        for (payload, position) in records {
            let segment = log.segments[position.segment].name
            do {
                let transaction = try BinaryCodec.decodeTransaction(payload)
                let expected = Int64(transactions.count + 1)
                guard transaction.t == expected, transaction.basis == expected - 1 else {
                    throw StoreError.corruptLog(
                        segment: segment,
                        offset: position.offset,
                        reason: "transaction t \(transaction.t) where \(expected) was expected"
                    )
                }
                transactions.append(transaction)
                positions.append(position)
            } catch {
                let reason = (error as? StoreError).map { "\($0)" } ?? "record does not decode: \(error)"
                guard options.recovery == .truncateAtDamage else {
                    if let error = error as? StoreError { throw error }
                    throw StoreError.corruptLog(segment: segment, offset: position.offset, reason: reason)
                }
                try log.truncate(from: position, sequence: Int64(transactions.count + 1))
                warnings.append(.truncatedAtDamage(segment: segment, offset: position.offset, reason: reason))
                break
            }
        }

        let snapshotDirectory = path + "/snapshots"
        try fileSystem.createDirectory(snapshotDirectory)
        var bases: [(basis: Int64, name: String)] = []
        for name in try fileSystem.contents(ofDirectory: snapshotDirectory) {
            if name.hasSuffix(SnapshotFile.temporarySuffix) {
                // A snapshot write cut short: never renamed into place.
                try fileSystem.remove(snapshotDirectory + "/" + name)
            } else if let basis = SnapshotFile.basis(ofName: name) {
                bases.append((basis, name))
            }
        }
        var current = Database()
        var snapshotBasis: Int64 = 0
        var started = false
        for (basis, name) in bases.sorted(by: { $0.basis > $1.basis }) {
            guard basis <= Int64(transactions.count) else {
                warnings.append(.skippedSnapshot(file: name, reason: "it is newer than the log (t \(basis))"))
                continue
            }
            do {
                let file = try fileSystem.open(snapshotDirectory + "/" + name, create: false)
                defer { file.close() }
                let snapshot = try SnapshotFile.decode(try file.read(at: 0, count: try file.size()), file: name)
                current = try replay(transactions[Int(basis)...], onto: snapshot)
                snapshotBasis = basis
                started = true
                break
            } catch let error as StoreError {
                if case .unsupportedVersion = error { throw error }
                warnings.append(.skippedSnapshot(file: name, reason: "\(error)"))
            } catch {
                warnings.append(.skippedSnapshot(file: name, reason: "\(error)"))
            }
        }
        if !started {
            current = try replay(transactions[...], onto: Database())
        }
        return (
            Loaded(
                log: log,
                lockFile: nil,
                transactions: transactions,
                positions: positions,
                current: current,
                snapshotBasis: snapshotBasis
            ),
            warnings
        )
    }

    /// `base` with `run` applied as one flattened transaction.
    static func replay(_ run: ArraySlice<Transaction>, onto base: Database) throws -> Database {
        guard !run.isEmpty else { return base }
        return try apply(base, flatten(run))
    }
}
