import Foundation
import Synchronization

extension FileCheck {
    /// Compares the snapshot `name` with the replay at `basis`. With a
    /// replayed value the comparison runs on another thread while the
    /// replay goes on (it holds a copy of the value, so the replay copies
    /// the paths it changes until the comparison ends); its findings are
    /// placed in the report where they would have been had it run here
    /// (`finishComparisons(waiting:)`), and a newer format it finds is kept
    /// as of `basis` (`noteNewer(_:at:)`). Without one, the snapshot is
    /// checked against its own records, here. With `replayEnds` (its
    /// basis is the log's last record), nothing runs beside it: it takes
    /// every core.
    /// - Throws: for a snapshot of a newer format checked here.
    mutating func compareSnapshot(_ name: String, basis: Int64, replayEnds: Bool = false) throws {
        pendingSnapshots[basis] = nil
        report.snapshots += 1
        let file = snapshotDirectory + "/" + name
        // One at a time: each holds a snapshot's bytes and an older value.
        finishComparisons()
        // Its sums are of no use from here: not started, they are skipped
        // (the block files read after them need not wait for them).
        summer.passed(basis)
        guard let value else {
            try checkAlone(file, basis: basis)
            return
        }
        // The check ends with the newer file found before this one.
        if newerFile != nil { return }
        let basisID = basis == 0 ? UUID(uuid: UUID.zero) : ids.last
        // Sums not ready are not waited for: the file is compared here.
        if let summed = snapshotSums.removeValue(forKey: basis), let taken = summed.takeIfDone(),
            let outcome = taken.settled(against: value, recordDigests: recordDigests, basisID: basisID)
        {
            try settle(outcome, file: file, basis: basis, basisID: basisID)
            return
        }
        comparisons.append(
            SnapshotComparison(
                file: file,
                basis: basis,
                basisID: basisID,
                value: value,
                recordDigests: recordDigests,
                fileSystem: fileSystem,
                workers: replayEnds ? nil : 1,
                problemsBefore: report.problems.count,
                notesBefore: report.notes.count
            )
        )
    }

    /// Waits for the comparisons started (without `waiting`, takes those
    /// that have ended, up to the first that has not), and puts what each
    /// found in the report at the place it was started from, in order; a
    /// snapshot of a newer format is kept (`noteNewer(_:at:)`). At most
    /// one is pending (`compareSnapshot(_:basis:)` finishes the one before
    /// it starts another), so the places recorded at its start still hold.
    mutating func finishComparisons(waiting: Bool = true) {
        var inserted = (problems: 0, notes: 0)
        var finished = 0
        for comparison in comparisons {
            guard let outcome = waiting ? comparison.wait() : comparison.outcomeIfEnded() else { break }
            finished += 1
            let (problems, notes) = (report.problems.count, report.notes.count)
            do {
                try settle(outcome, file: comparison.file, basis: comparison.basis, basisID: comparison.basisID)
            } catch {
                noteNewer(error, at: comparison.basis)
            }
            let found = (Array(report.problems[problems...]), Array(report.notes[notes...]))
            report.problems.removeSubrange(problems...)
            report.notes.removeSubrange(notes...)
            report.problems.insert(contentsOf: found.0, at: comparison.problemsBefore + inserted.problems)
            report.notes.insert(contentsOf: found.1, at: comparison.notesBefore + inserted.notes)
            inserted.problems += found.0.count
            inserted.notes += found.1.count
        }
        comparisons.removeFirst(finished)
    }

    /// Records what the comparison of snapshot `file` (its basis `basis`,
    /// the log's transaction there `basisID`) found.
    private mutating func settle(
        _ outcome: SnapshotComparison.Outcome,
        file: String,
        basis: Int64,
        basisID expectedID: UUID?
    ) throws {
        switch outcome {
        case .pruned:
            report.snapshots -= 1
        case .unreadable(let error):
            problem(file, "cannot be read: \(error)")
        case .compared(let size, let result):
            report.bytes += size
            switch result {
            case .success(let (difference, basisID)):
                if let found = basisID, found != expectedID {
                    report.notes.append(
                        "\(file): taken from another history (its transaction \(found) is not this log's "
                            + "t \(basis)); open skips it, and a writing open that reaches it removes it"
                    )
                } else if let difference {
                    problem(file, "differs from the log replayed to t \(basis): \(difference)")
                }
            case .failure(let error):
                if error.isNewerVersion { throw StoreError(error.in(file)) }
                problem(file, at: error.offset, error.reason)
            }
        }
    }

    /// Starts summing every snapshot listed (``SnapshotFile/Sums``), oldest
    /// first, one at a time on a thread of their own: the replay that
    /// reaches one then compares sums, without keeping its value while the
    /// file is read (the replay would copy the paths it changes meanwhile).
    mutating func startSummingSnapshots() {
        let summer = self.summer
        for (basis, name) in pendingSnapshots.sorted(by: { $0.key < $1.key }) where basis > 0 {
            let file = snapshotDirectory + "/" + name
            let fileSystem = self.fileSystem
            snapshotSums[basis] = Eventual(on: summer.queue) {
                // The replay compared it already, or the check has ended.
                if summer.hasPassed(basis) { return .skipped }
                switch SnapshotComparison.read(file, fileSystem: fileSystem) {
                case .pruned: return .pruned
                case .unreadable(let error): return .unreadable(error)
                case .read(let bytes):
                    let sums = Result { () throws(FormatError) in try SnapshotFile.sums(bytes, file: file, workers: 1) }
                    return .summed(size: bytes.count, sums)
                }
            }
        }
    }

    /// A snapshot the replay did not reach whole: its indexes against its
    /// own records.
    private mutating func checkAlone(_ file: String, basis: Int64) throws {
        let bytes: [UInt8]
        switch SnapshotComparison.read(file, fileSystem: fileSystem) {
        case .pruned:
            report.snapshots -= 1
            return
        case .unreadable(let error):
            problem(file, "cannot be read: \(error)")
            return
        case .read(let read):
            bytes = read
        }
        report.bytes += bytes.count
        report.notes.append(
            "\(file): the log's replay stopped before its basis t \(basis) (above); "
                + "checked against its own records only, not compared with the log"
        )
        do {
            let (snapshot, _) = try SnapshotFile.decode(bytes, file: file)
            if let indexProblem = snapshot._indexProblem() { problem(file, indexProblem) }
        } catch {
            if error.isNewerVersion { throw StoreError(error.in(file)) }
            problem(file, at: error.offset, error.reason)
        }
    }
}

/// Snapshots summed ahead of the replay (``SnapshotFile/Sums``), one at
/// a time on a thread of their own, skipping those the replay has passed.
final class SnapshotSums: Sendable {
    let queue = DispatchQueue(label: "Strata verify: snapshot sums")
    /// The largest basis the replay has reached (`Int64.max` once the
    /// check ends).
    private let reached = Atomic<Int64>(-1)

    /// Notes that the replay reached `basis`.
    func passed(_ basis: Int64) { reached.max(basis, ordering: .relaxed) }

    func hasPassed(_ basis: Int64) -> Bool { reached.load(ordering: .relaxed) >= basis }

    /// Ends the summing: what has not started is skipped, and what has is
    /// waited for, so that no thread reads the store's files after the
    /// check returns.
    func finish() {
        passed(.max)
        queue.sync {}
    }
}

extension SnapshotSums {
    enum Outcome: Sendable {
        /// Not summed: the replay passed it first.
        case skipped
        /// Removed since it was listed (a writer at work).
        case pruned
        case unreadable(String)
        /// Read (this many bytes) and summed (nil: an older format), or its damage.
        case summed(size: Int, Result<SnapshotFile.Sums?, FormatError>)
    }
}

extension SnapshotSums.Outcome {
    /// The outcome of the snapshot's comparison with `value` (the replay
    /// at its basis, its record digests summing to `recordDigests`, the
    /// log's transaction there `basisID`) when the sums settle it: the file
    /// unreadable, or equal to the value. Nil when the value must be
    /// compared with the file itself: a difference to name, damage, a file
    /// of another history, index entries, an older format, not summed. The
    /// sums do not validate the records' text and order, which only sums
    /// equal to the replay's vouch for: damage is named, and another
    /// history told from a damaged file, by the comparison, which does.
    func settled(
        against value: Database,
        recordDigests: [Key: UInt64],
        basisID: UUID?
    ) -> SnapshotComparison.Outcome? {
        switch self {
        case .pruned: return .pruned
        case .unreadable(let error): return .unreadable(error)
        case .summed(let size, .success(let sums?)):
            guard sums.basisID.map({ $0 == basisID }) ?? true, sums.match(value, recordDigests: recordDigests) else {
                return nil
            }
            return .compared(size: size, .success((difference: nil, basisID: sums.basisID)))
        // A newer format is found by the header, before any record: the
        // comparison would throw the same.
        case .summed(let size, .failure(let error)) where error.isNewerVersion:
            return .compared(size: size, .failure(error))
        case .summed(_, .failure), .summed(_, .success(nil)), .skipped: return nil
        }
    }
}

/// One snapshot compared with the replayed value at its basis, on another
/// thread from the moment it is made.
struct SnapshotComparison: Sendable {
    /// What the comparison found.
    enum Outcome: Sendable {
        /// Removed since it was listed (a writer at work).
        case pruned
        case unreadable(String)
        /// Read (this many bytes) and compared: the difference (nil:
        /// none) and the basis ID the file names, or its damage.
        case compared(size: Int, Result<(difference: String?, basisID: UUID?), FormatError>)
    }

    let file: String
    let basis: Int64
    /// The ID of the log's transaction at `basis` (nil: unknown).
    let basisID: UUID?
    /// How many problems and notes the report held when it was started.
    let problemsBefore: Int
    let notesBefore: Int
    private let outcome: Eventual<Outcome>

    init(
        file: String,
        basis: Int64,
        basisID: UUID?,
        value: Database,
        recordDigests: [Key: UInt64],
        fileSystem: any FileSystem,
        workers: Int?,
        problemsBefore: Int,
        notesBefore: Int
    ) {
        self.file = file
        self.basis = basis
        self.basisID = basisID
        self.problemsBefore = problemsBefore
        self.notesBefore = notesBefore
        // On a thread of its own, and on it alone while the replay goes
        // on (`workers` 1): the replay's decoding runs on the shared pool,
        // whose threads (one per core) a comparison on every core held
        // until it ended, while the replay waited for its next
        // transactions. At the log's end (nil: every core) nothing else
        // runs, and the pool's threads wait for it: it starts its own.
        outcome = Eventual(on: DispatchQueue(label: "Strata verify: snapshot comparison")) {
            switch Self.read(file, fileSystem: fileSystem) {
            case .pruned: return .pruned
            case .unreadable(let error): return .unreadable(error)
            case .read(let bytes):
                let result = Result { () throws(FormatError) in
                    try SnapshotFile.difference(
                        bytes,
                        file: file,
                        from: value,
                        recordDigests: recordDigests,
                        workers: workers,
                        ownThreads: workers == nil
                    )
                }
                return .compared(size: bytes.count, result)
            }
        }
    }

    /// The outcome, once the comparison has ended. Once.
    func wait() -> Outcome { outcome.take() }

    /// The outcome if the comparison has ended, else nil (without
    /// waiting). Once it is returned, the comparison is settled.
    func outcomeIfEnded() -> Outcome? { outcome.takeIfDone() }

    /// A snapshot file's bytes.
    enum Read {
        case pruned
        case unreadable(String)
        case read([UInt8])
    }

    static func read(_ file: String, fileSystem: any FileSystem) -> Read {
        do {
            return .read(try fileSystem.readWholeFile(file))
        } catch let error as FileSystemError where error.code == ENOENT {
            return .pruned
        } catch {
            return .unreadable("\(error)")
        }
    }
}
