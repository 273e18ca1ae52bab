import Foundation

extension StoreLog {
    /// Transaction `t` rebuilt without its log record, for a record that
    /// does not read back (damaged) while a later snapshot holds what it
    /// did: the value at `t` is the oldest sound snapshot at or after `t`
    /// of this history, with the transactions after `t` up to it undone
    /// (each carries what it replaced); the rebuilt transaction is what
    /// turns `before` into that value, with `t`'s ID, time, message and
    /// significance from its summary. What the record alone kept is lost:
    /// its metadata, what it reverts and what it covers (an undo or a
    /// combined transaction then reads as an ordinary one), and changes
    /// that wrote a value equal to the one before (no difference to
    /// rebuild). O(snapshot + the transactions between).
    ///
    /// `strata repair` copies such a transaction in place of the damaged
    /// one, so that one damaged record does not cost the history after it.
    ///
    /// - Parameters:
    ///   - t: the transaction, `1...count`.
    ///   - before: the value at `t - 1`, which the transaction applies to.
    /// - Throws: ``StoreError/outOfRange(t:current:)`` outside `1...count`;
    ///   ``StoreError/corruptLog(segment:offset:reason:)`` naming `t`'s
    ///   record when no snapshot rebuilds it (none at or after `t`, none
    ///   sound and of this history, or a transaction between that does not
    ///   read back either), with each snapshot's reason.
    public func rebuiltTransaction(at t: Int64, applyingTo before: Database) throws -> Transaction {
        guard t >= 1, t <= count else { throw StoreError.outOfRange(t: t, current: count) }
        let directory = snapshotDirectory
        let candidates = snapshotFiles().filter { $0.basis >= t }
        var reasons: [String] = []
        for (basis, name) in candidates {
            do {
                let (snapshot, _, basisID) = try SnapshotFile.read(name, in: directory, fileSystem: fileSystem)
                guard basisID == history.id(of: basis) else {
                    reasons.append("\(name) was taken from another history")
                    continue
                }
                var after = snapshot
                for u in stride(from: basis, to: t, by: -1) {
                    after = try apply(after, inverse(transaction(at: u)))
                }
                let summary = history.summary(t)
                return diff(from: before, to: after).transaction(
                    t: t,
                    id: summary.id,
                    timestamp: summary.timestamp,
                    message: summary.message,
                    significance: summary.significance
                )
            } catch {
                reasons.append("\(name): \(error)")
            }
        }
        let position = history.position(t)
        let found = candidates.isEmpty ? "no snapshot at or after it" : reasons.joined(separator: "; ")
        throw StoreError.corruptLog(
            segment: log.segments[position.segment].name,
            offset: position.offset,
            reason: "transaction t \(t) cannot be rebuilt: \(found)"
        )
    }
}

extension StoreLog {
    /// The snapshot files of this history that do not read back whole, or
    /// hold a value of another history, each with the reason: what a copy
    /// of the history leaves behind. Snapshots past the log are reported
    /// by ``warnings``. O(the snapshots' bytes): each is read and decoded.
    public func unreadableSnapshots() -> [(file: String, reason: String)] {
        let directory = snapshotDirectory
        var unreadable: [(file: String, reason: String)] = []
        for (basis, name) in snapshotFiles() {
            do {
                let (_, _, basisID) = try StoreError.mappingFormat {
                    try SnapshotFile.read(name, in: directory, fileSystem: fileSystem)
                }
                // A version 1 file names no transaction.
                if let basisID, basisID != history.id(of: basis) {
                    unreadable.append((name, "it holds a value of another history"))
                }
            } catch let error as FileSystemError where error.code == ENOENT {
                // Removed since listed (pruned by the store's writer).
            } catch {
                unreadable.append((name, "\(error)"))
            }
        }
        return unreadable
    }
}

extension StoreLog {
    var snapshotDirectory: String { path + "/snapshots" }

    /// The snapshot files named within the log (basis at most ``count``),
    /// oldest first. O(directory entries).
    func snapshotFiles() -> [(basis: Int64, name: String)] {
        ((try? fileSystem.contents(ofDirectory: snapshotDirectory)) ?? [])
            .compactMap { name in SnapshotFile.basis(ofName: name).map { (basis: $0, name: name) } }
            .filter { $0.basis <= count }
            .sorted { $0.basis < $1.basis }
    }
}
