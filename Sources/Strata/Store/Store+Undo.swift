import Foundation
import PersistentCollections

/// Undo and redo, the way an app's Edit menu offers them.
///
/// An *action* is one transaction of significance `.normal` or above, or a
/// run of such transactions (in commit order, minor ones between them
/// skipped) that share a value under ``undoGroupKey`` in their metadata.
/// `.minor` transactions (play counts, caches) are never undone or redone
/// and do not clear the redo stack.
///
/// ``undo()`` reverts the newest action not yet undone, ``redo()`` reverts
/// the newest undo not yet redone, and a new action clears what can be
/// redone. Each is a recorded transaction (nothing leaves the history)
/// whose message names what it reverted; their metadata under the reserved
/// `strata.` keys is how the history itself says what comes next, so undo
/// continues across reopening. A later edit of the same fields makes
/// either refuse with ``UndoError/conflict(action:records:)``.
extension Store {
    /// The metadata key whose equal values group consecutive transactions
    /// into one undoable action:
    ///
    ///     for chunk in songs.chunks(ofCount: 100) {
    ///         try await store.transact(message: "Import", metadata: [Store.undoGroupKey: "import 42"]) { ... }
    ///     }
    ///     try await store.undo()   // the whole import
    public static let undoGroupKey: Key = "undoGroup"

    /// Reverts the newest action not yet undone, as one transaction with
    /// the message "Undo “name”". Returns nil when there is nothing to
    /// undo. O(the transactions walked back to find it + the action's size).
    /// - Throws: ``UndoError/conflict(action:records:)`` naming every record
    ///   a later edit changed (nothing is committed); ``StoreError``.
    @discardableResult
    public func undo() async throws -> CommitReport? {
        try checkWritable()
        await settleAppended()
        guard let action = try nextUndo() else { return nil }
        let name = action.name
        let transactions = try action.transactions.reversed().map { try transaction(at: $0.t)! }
        let undone = transactions.map { Value.string($0.id.uuidString) }
        return try await commitReverting(
            transactions,
            name: name,
            message: "Undo “\(name)”",
            metadata: [UndoMarker.undoes: .list(PersistentVector(undone)), UndoMarker.action: .string(name)]
        )
    }

    /// Reverts the newest undo not yet redone (re-applies what it undid),
    /// with the message "Redo “name”". Returns nil when there is nothing to
    /// redo (no undo since the last action). O(the undos walked back + the
    /// action's size).
    /// - Throws: ``UndoError/conflict(action:records:)``; ``StoreError``.
    @discardableResult
    public func redo() async throws -> CommitReport? {
        try checkWritable()
        await settleAppended()
        guard let action = try nextRedo() else { return nil }
        let undo = try transaction(at: action.transactions[0].t)!
        return try await commitReverting(
            [undo],
            name: action.name,
            message: "Redo “\(action.name)”",
            metadata: [UndoMarker.redoes: .string(undo.id.uuidString), UndoMarker.action: .string(action.name)]
        )
    }

    /// What ``undo()`` would revert now, or nil (for an Edit menu's "Undo
    /// Import"). Reads the history back from the newest transaction.
    public func undoAction() throws -> UndoAction? { try nextUndo() }

    /// What ``redo()`` would re-apply now (its transactions: the undo it
    /// reverts), or nil.
    public func redoAction() throws -> UndoAction? { try nextRedo() }

    // MARK: Reading the stacks back from the history

    /// Walks back from the newest transaction: each undo cancels the next
    /// action below it (undos pop the undo stack, actions and redos push),
    /// so the first action not cancelled is the top of the stack.
    private func nextUndo() throws -> UndoAction? {
        var cancelled = 0
        var t = current.basis
        while t >= 1 {
            guard history.summary(t).significance > .minor else {
                t -= 1
                continue
            }
            let transaction = try self.transaction(at: t)!
            if transaction.metadata[UndoMarker.undoes] != nil {
                cancelled += 1
                t -= 1
                continue
            }
            var members = [transaction]
            t -= 1
            if let group = transaction.metadata[Self.undoGroupKey], transaction.metadata[UndoMarker.redoes] == nil {
                while t >= 1 {
                    guard history.summary(t).significance > .minor else {
                        t -= 1
                        continue
                    }
                    let earlier = try self.transaction(at: t)!
                    guard earlier.metadata[Self.undoGroupKey] == group, earlier.metadata[UndoMarker.undoes] == nil,
                        earlier.metadata[UndoMarker.redoes] == nil
                    else { break }
                    members.append(earlier)
                    t -= 1
                }
            }
            if cancelled > 0 {
                cancelled -= 1
                continue
            }
            return UndoAction(
                transactions: members.reversed().map(\.summary),
                name: transaction.metadata[UndoMarker.action]?.stringValue ?? transaction.message
            )
        }
        return nil
    }

    /// Walks back over undos and redos (redos cancel the undo below them)
    /// to the first undo not cancelled; an action ends the walk (it
    /// cleared the redo stack).
    private func nextRedo() throws -> UndoAction? {
        var cancelled = 0
        var t = current.basis
        while t >= 1 {
            defer { t -= 1 }
            guard history.summary(t).significance > .minor else { continue }
            let transaction = try self.transaction(at: t)!
            if transaction.metadata[UndoMarker.redoes] != nil {
                cancelled += 1
            } else if transaction.metadata[UndoMarker.undoes] != nil {
                if cancelled > 0 {
                    cancelled -= 1
                    continue
                }
                return UndoAction(
                    transactions: [transaction.summary],
                    name: transaction.metadata[UndoMarker.action]?.stringValue ?? transaction.message
                )
            } else {
                return nil
            }
        }
        return nil
    }

    // MARK: Committing

    /// Commits one transaction reverting `transactions` (newest first),
    /// each checked against the value the later ones' reverts leave.
    private func commitReverting(
        _ transactions: [Transaction],
        name: String,
        message: String,
        metadata: [Key: Value]
    ) async throws -> CommitReport {
        var value = head
        for original in transactions {
            let reverse = inverse(original).numbered(onto: value)
            let conflicts = reverse.conflicts(on: value)
            if !conflicts.isEmpty { throw UndoError.conflict(action: name, records: conflicts) }
            do {
                value = try apply(value, reverse)
            } catch let error as ApplyError {
                throw UndoError.indexConflict(action: name, error)
            }
        }
        let significance = transactions.map(\.significance).max() ?? .normal
        let revert = diff(from: head, to: value).transaction(
            message: message,
            significance: max(significance, .normal),
            metadata: metadata
        )
        do {
            return try await commit(revert)
        } catch let error as ApplyError {
            // A commit that landed meanwhile changed the same records.
            let conflicts = revert.numbered(onto: head).conflicts(on: head)
            if conflicts.isEmpty { throw UndoError.indexConflict(action: name, error) }
            throw UndoError.conflict(action: name, records: conflicts)
        }
    }
}
