import Foundation

extension Store {
    /// The metadata key of ``revert(to:message:)``'s transaction: the t it returned to.
    static let revertedToKey: Key = "revertedTo"

    /// Commits a transaction that restores the value after transaction `t`
    /// (0: empty). Nothing is deleted: the history keeps every
    /// transaction, and this one can itself be reverted.
    ///
    /// The transaction is significant and is committed even when it is
    /// empty (`t` is the latest transaction, or those after it undid one
    /// another): the history then records the user's action. To leave no
    /// entry in that case, compare the `tables` of ``database(asOf:)`` at
    /// `t` and of ``current`` first (the values themselves differ in their
    /// basis), as `strata revert --to` does.
    /// O(the changes between the two values) beyond the as-of.
    @discardableResult
    public func revert(to t: Int64, message: String? = nil) async throws -> CommitReport {
        // Admitted first: no commit lands between the diff and its append.
        try await admitWriter()
        let target = try database(asOf: t)
        let difference = diff(from: head, to: target)
        let transaction = difference.transaction(
            message: message ?? "Revert to t \(t)",
            significance: .significant,
            metadata: [Self.revertedToKey: .int(t)]
        )
        return try await appendAdmitted(transaction)
    }

    /// Commits the inverse of transaction `id`: its changes undone, later
    /// transactions kept. Reverting a revert redoes the original.
    ///
    /// - Throws: ``StoreError/revertConflict(transaction:conflict:)`` when a
    ///   later transaction changed what this one changed.
    @discardableResult
    public func revert(transaction id: UUID, message: String? = nil) async throws -> CommitReport {
        // Admitted first: a truncate cannot cut the transaction, nor a
        // commit land, between the lookup and the append.
        try await admitWriter()
        guard let original = try transaction(id: id) else { throw StoreError.unknownTransaction("\(id)") }
        var undo = inverse(original)
        undo.id = UUID()
        undo.timestamp = Date()
        undo.message = message ?? "Revert “\(original.message)”"
        undo.significance = .significant
        undo.reverts = original.id
        // A revert is an action of its own: not an undo, redo or group member.
        for key in UndoMarker.reserved { undo.metadata[key] = nil }
        // Undoing a return to t N does not return to t N.
        undo.metadata[Self.revertedToKey] = nil
        do {
            return try await appendAdmitted(undo)
        } catch let error as ApplyError {
            throw StoreError.revertConflict(transaction: "\(original.t) (\(original.message))", conflict: error)
        }
    }

    /// Removes every transaction after `t` from the log and the snapshots
    /// and compaction blocks after it, and makes the value after `t`
    /// current. The one destructive operation: for a user who wants that
    /// history gone.
    ///
    /// Commits already appended when it is called finish first: each is
    /// synced and published and returns to its caller (durable), and is
    /// then removed with the rest of the history after `t` (so a caller
    /// who truncates after ``current``'s basis while commits are in flight
    /// removes them, as asked). Commits that arrive while it runs wait, then
    /// build on the truncated value. No commit is left waiting, and none
    /// both returns and is missing before the truncate.
    ///
    /// Atomic against a crash: the cut is first recorded in the manifest,
    /// then what was built from the history after `t` is removed, then the
    /// log is cut; a store reopened after a crash at any step finishes the
    /// cut, so it opens either before it (nothing removed) or after it.
    /// - Throws: ``StoreError/outOfRange(t:current:)`` when `t` is past the
    ///   history once the commits in flight have finished;
    ///   ``StoreError/closed`` when the store closes meanwhile.
    public func truncate(after t: Int64) async throws {
        try checkWritable()
        try await holdingWriters {
            // No snapshot or compaction round may write files of the
            // history being cut after they are removed.
            while true {
                await settleAppended()
                if let task = snapshotTask {
                    await task.value
                } else if compacting {
                    await compactionSettled()
                } else {
                    break
                }
            }
            try cut(after: t)
        }
    }

    /// The cut itself: no suspension, so no commit, snapshot or compaction
    /// round starts between the checks above and the cut.
    private func cut(after t: Int64) throws {
        try checkWritable()
        let target = try database(asOf: t)
        guard let log, t < Int64(history.count) else { return }
        let id = history.id(of: t)!  // 0 ≤ t < count
        do {
            try log.updateManifest {
                $0.pendingCut = StoreManifest.PendingCut(t: t, id: id)
                $0.durableThrough = min($0.durableThrough, t)
            }
            try removeSnapshotsAndBlocks(after: t)
            if t == 0 {
                try log.removeAll()
            } else {
                try log.truncate(from: history.positions[Int(t)], sequence: t + 1)
            }
            try log.updateManifest { $0.pendingCut = nil }
        } catch let error as FileSystemError {
            failure = error
            throw StoreError.needsReopen(error)
        }
        history.removeAll(after: t)
        runIndex.removeAll(after: t)
        checkpoints.removeAll(after: t)
        snapshotSizes = snapshotSizes.filter { $0.key <= t }
        unpublished = []
        head = target
        lastSnapshotBasis = snapshotSizes.keys.max() ?? 0
        setCurrent(target)
        notifyAllObservers(on: target)
        // The value after the cut is the current one now, as after a commit.
        for feed in valueFeeds.values { feed.yield(target) }
        // Peers following this history hold numbers that now mean other
        // transactions: their streams end, and on listening again they
        // find their newest transaction gone (see `Peer.startFollowing`).
        for feed in basisFeeds.values { feed.finish() }
        basisFeeds = [:]
        // The value may be far smaller now: the budget follows it.
        applyMemoryBudget(remeasuring: true)
    }

    /// Removes the snapshot and block files built from transactions after `t`, durably.
    private func removeSnapshotsAndBlocks(after t: Int64) throws {
        let fileSystem = options.fileSystem
        for name in try fileSystem.contents(ofDirectory: snapshotDirectory) {
            if let basis = SnapshotFile.basis(ofName: name), basis > t {
                try fileSystem.remove(snapshotDirectory + "/" + name)
            }
        }
        try fileSystem.syncDirectory(snapshotDirectory)
        let blocks = path + "/" + Self.blockDirectoryName
        BlockFiles(directory: blocks, fileSystem: fileSystem).removeAll(after: t, blockSize: RunIndex.blockSize)
        try fileSystem.syncDirectory(blocks)
    }
}
