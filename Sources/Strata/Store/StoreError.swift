import Foundation

/// Why a store could not be opened or an operation failed. Each case names
/// the file, offset, transaction or record involved.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// Another process (or another open in this one) holds the store for writing.
    case locked(path: String)
    /// A log record in the middle of the log is damaged. Open with
    /// `StoreOptions.recovery = .truncateAtDamage` to keep everything before it.
    case corruptLog(segment: String, offset: Int, reason: String)
    /// A file was written by a newer format than this build reads, or a
    /// log record was, in a segment whose own header this build reads
    /// (`file` is then the segment's path). Not damage: thrown whatever
    /// `StoreOptions.recovery` says, and nothing is cut.
    case unsupportedVersion(file: String, found: UInt32, supported: UInt32)
    /// A snapshot (or a compaction block) failed its checks (reported as a
    /// warning when an older snapshot or the log can stand in for it).
    case corruptSnapshot(file: String, reason: String)
    /// Writing or syncing failed; the transaction is not committed and the
    /// store's value is unchanged.
    case writeFailed(FileSystemError)
    /// A previous write failure could not be rolled back; reopen the store.
    case needsReopen(FileSystemError)
    /// The store was closed.
    case closed
    /// The store was opened read-only (``StoreOptions/readOnly``): nothing
    /// was written.
    case readOnly(path: String)
    /// No transaction with this ID or number is in the history.
    case unknownTransaction(String)
    /// A transaction with this ID is already in the history (a commit
    /// retried after it landed); nothing was committed.
    case duplicateTransaction(id: UUID)
    /// `t` is outside the history (0 through the current basis).
    case outOfRange(t: Int64, current: Int64)
    /// No snapshot with this basis is on disk.
    case noSnapshot(basis: Int64)
    /// Undoing a transaction conflicts with a later change.
    case revertConflict(transaction: String, conflict: ApplyError)
    /// No store at `path`: the directory does not exist. Set
    /// ``StoreOptions/createIfMissing`` to create one.
    case noStore(path: String)
    /// `path` is not a Strata store: not a directory, a directory holding
    /// other files and no manifest, an empty directory (unless
    /// ``StoreOptions/createIfMissing``), or an empty path.
    case notAStore(path: String, reason: String)
    /// The store's manifest is damaged. Open with
    /// `StoreOptions.recovery = .truncateAtDamage` to rebuild it from the log.
    case corruptManifest(file: String, reason: String)
    /// The log ends at `reached` but the store knows its history reached
    /// at least `expected` (a log segment is missing or was cut): acknowledged
    /// transactions are gone. Open with `StoreOptions.recovery =
    /// .truncateAtDamage` to open at `reached` (the loss is then reported
    /// in ``Store/warnings``).
    case missingHistory(reached: Int64, expected: Int64, reason: String)
    /// A transaction's encoding exceeds what one log record holds; nothing
    /// was written.
    case transactionTooLarge(bytes: Int, limit: Int)
    /// A read-only store found a log record that no longer reads as it did
    /// when the store opened: its writer cut the history since (a
    /// truncate, perhaps followed by new commits), or the file was
    /// damaged. Reopen the store to read the history as it is now
    /// (``Store/verify(at:fileSystem:)`` tells damage).
    case historyChanged(segment: String, offset: Int, reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .locked(let path): return "store \(path) is open for writing elsewhere (its lock is held)"
        case let .corruptLog(segment, offset, reason):
            return "log segment \(segment) is damaged at offset \(offset): \(reason)"
        case let .unsupportedVersion(file, found, supported):
            return "\(file) has format version \(found); this build reads up to \(supported)"
        case let .corruptSnapshot(file, reason): return "snapshot \(file) is damaged: \(reason)"
        case .writeFailed(let error): return "commit failed, nothing written: \(error)"
        case .needsReopen(let error): return "store needs to be reopened after a failed write: \(error)"
        case .closed: return "the store is closed"
        case .readOnly(let path): return "store \(path) is open read-only; nothing was written"
        case .unknownTransaction(let id): return "no transaction \(id) in the history"
        case .duplicateTransaction(let id):
            return "transaction \(id) is already in the history; nothing was committed"
        case let .outOfRange(t, current): return "t \(t) is outside the history (0...\(current))"
        case .noSnapshot(let basis): return "no snapshot with basis \(basis) is on disk"
        case let .revertConflict(transaction, conflict):
            return "cannot revert transaction \(transaction): \(conflict)"
        case .noStore(let path):
            return "no store at \(path) (the directory does not exist; set createIfMissing to create one)"
        case let .notAStore(path, reason): return "\(path.isEmpty ? "\"\"" : path) is not a Strata store: \(reason)"
        case let .corruptManifest(file, reason): return "manifest \(file) is damaged: \(reason)"
        case let .missingHistory(reached, expected, reason):
            let reach = expected > reached ? " but the history reached at least t \(expected)" : ""
            return "acknowledged history is missing: the log ends at t \(reached)\(reach) (\(reason)); "
                + "open with recovery .truncateAtDamage to open at t \(reached)"
        case let .transactionTooLarge(bytes, limit):
            return "transaction of \(bytes) encoded bytes exceeds the log record limit of \(limit)"
        case let .historyChanged(segment, offset, reason):
            return "log segment \(segment) at offset \(offset) does not read back as when this read-only store "
                + "opened (\(reason)): the file is damaged, or its writer cut the history since (a truncate); "
                + "reopen the store to read the history as it is now (a verify tells damage from a cut)"
        }
    }
}

/// Something an open recovered from: reported, not fatal.
public enum StoreWarning: Sendable, Equatable, CustomStringConvertible {
    /// A partial last record (a write cut short by a crash) was cut off.
    case tornTail(segment: String, offset: Int, bytes: Int)
    /// Damage in the log; everything from `offset` on was dropped
    /// (only with `.truncateAtDamage`).
    case truncatedAtDamage(segment: String, offset: Int, reason: String)
    /// A snapshot was skipped for an older one or the log.
    case skippedSnapshot(file: String, reason: String)
    /// Acknowledged transactions after `t` could not be recovered (damage,
    /// a missing or cut segment) and are gone: at least `atLeast` of them
    /// (only with `.truncateAtDamage`; `.strict` refuses to open).
    case lostTransactions(after: Int64, atLeast: Int64, reason: String)
    /// The manifest was damaged and was rebuilt from the log (only with
    /// `.truncateAtDamage`).
    case rebuiltManifest(reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case let .tornTail(segment, offset, bytes):
            return "cut a partial record of \(bytes) bytes at offset \(offset) of log segment \(segment)"
        case let .truncatedAtDamage(segment, offset, reason):
            return "dropped the log from offset \(offset) of segment \(segment): \(reason)"
        case let .skippedSnapshot(file, reason): return "skipped snapshot \(file): \(reason)"
        case let .lostTransactions(t, count, reason):
            // No count known (the evidence is a file, not a number past t).
            guard count > 0 else { return "acknowledged history after t \(t) may be lost: \(reason)" }
            return "lost at least \(count) acknowledged transaction\(count == 1 ? "" : "s") after t \(t): \(reason)"
        case .rebuiltManifest(let reason): return "rebuilt the manifest from the log: \(reason)"
        }
    }
}

extension StoreError {
    /// The store's report of a file whose bytes do not check: damage in the
    /// log, a snapshot or the manifest, or a format newer than this build.
    init(_ error: FormatError) {
        if case let .newerVersion(found, supported) = error.problem {
            self = .unsupportedVersion(file: error.file, found: found, supported: supported)
            return
        }
        switch error.kind {
        case .logSegment, .segmentSummary:
            self = .corruptLog(segment: error.file, offset: error.offset, reason: error.reason)
        case .snapshot, .block: self = .corruptSnapshot(file: error.file, reason: error.reason)
        case .manifest: self = .corruptManifest(file: error.file, reason: error.reason)
        }
    }

    /// The store's report of a log record that does not decode (`error`),
    /// at `offset` of segment `segment` (the file `file`): a record a newer
    /// build wrote is ``unsupportedVersion(file:found:supported:)``, not
    /// damage, so that no recovery option cuts it away; anything else is
    /// ``corruptLog(segment:offset:reason:)``.
    static func undecodableRecord(_ error: any Error, segment: String, file: String, offset: Int) -> StoreError {
        if let newer = (error as? CodecError)?.newerVersion {
            return .unsupportedVersion(
                file: file,
                found: UInt32(clamping: newer.found),
                supported: UInt32(clamping: newer.supported)
            )
        }
        return .corruptLog(segment: segment, offset: offset, reason: "record does not decode: \(error)")
    }

    /// Whether `error` says a log record is a newer build's (see
    /// ``undecodableRecord(_:segment:file:offset:)``).
    static func isNewerRecord(_ error: any Error) -> Bool {
        (error as? CodecError)?.newerVersion != nil
    }

    /// Runs `body`, reporting a ``FormatError`` it throws as a `StoreError`.
    static func mappingFormat<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as FormatError {
            throw StoreError(error)
        }
    }
}

extension StoreWarning {
    /// The store's report of what a log scan recovered from.
    init(_ finding: LogScanner.Finding) {
        switch finding {
        case let .tornTail(segment, offset, bytes): self = .tornTail(segment: segment, offset: offset, bytes: bytes)
        case let .damage(segment, offset, reason):
            self = .truncatedAtDamage(segment: segment, offset: offset, reason: reason)
        }
    }
}
