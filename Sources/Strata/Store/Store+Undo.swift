import Foundation
import PersistentCollections

/// Undo and redo, the way an app's Edit menu offers them.
///
/// An *action* is one transaction of significance `.normal` or above that
/// changes something, or a run of such transactions (in commit order,
/// minor ones between them skipped) that share a value under
/// ``undoGroupKey`` in their metadata. `.minor` transactions (play counts,
/// caches) and empty ones (a message alone) are never undone or redone and
/// do not clear the redo stack.
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
    /// undo. Commits in flight count: the newest action may be one whose
    /// commit has not returned yet. O(the transactions walked back to find
    /// it + the action's size).
    /// - Throws: ``UndoError/conflict(action:records:)`` naming every record
    ///   a later edit changed (nothing is committed);
    ///   ``UndoError/cannotApply(action:_:)``; ``StoreError``.
    @discardableResult
    public func undo() async throws -> CommitReport? {
        try await admitWriter()
        // No suspension from here to the append: no commit, truncate or
        // other undo lands between choosing the action and committing.
        guard let action = try nextUndo() else { return nil }
        let members = try action.transactions.map { try appended($0.t) }
        let undone = members.map { Value.string($0.id.uuidString) }
        return try await appendReverting(
            members,
            name: action.name,
            message: "Undo “\(action.name)”",
            metadata: [UndoMarker.undoes: .list(PersistentVector(undone)), UndoMarker.action: .string(action.name)]
        )
    }

    /// Reverts the newest undo not yet redone (re-applies what it undid),
    /// with the message "Redo “name”". Returns nil when there is nothing to
    /// redo (no undo since the last action). O(the undos walked back + the
    /// action's size).
    /// - Throws: ``UndoError/conflict(action:records:)``;
    ///   ``UndoError/cannotApply(action:_:)``; ``StoreError``.
    @discardableResult
    public func redo() async throws -> CommitReport? {
        try await admitWriter()
        guard let action = try nextRedo() else { return nil }
        let undo = try appended(action.transactions[0].t)
        return try await appendReverting(
            [undo],
            name: action.name,
            message: "Redo “\(action.name)”",
            metadata: [UndoMarker.redoes: .string(undo.id.uuidString), UndoMarker.action: .string(action.name)]
        )
    }

    /// What ``undo()`` would revert now, or nil (for an Edit menu's "Undo
    /// Import"). Reads the history back from the newest transaction.
    public func undoAction() throws -> UndoAction? {
        guard log != nil else { throw StoreError.closed }
        return try nextUndo()
    }

    /// What ``redo()`` would re-apply now (its transactions: the undo it
    /// reverts), or nil.
    public func redoAction() throws -> UndoAction? {
        guard log != nil else { throw StoreError.closed }
        return try nextRedo()
    }

    // MARK: Reading the stacks back from the history

    /// Transaction `t` of the history, durable or in flight.
    private func appended(_ t: Int64) throws -> Transaction {
        guard let log else { throw StoreError.closed }
        return try history.transaction(t, log: log)
    }

    /// What a transaction is to undo and redo.
    private enum Role {
        /// Skipped: minor, or changing nothing.
        case none
        case action
        case undo
        case redo
    }

    private func role(_ transaction: Transaction) -> Role {
        guard transaction.significance > .minor else { return .none }
        if UndoMarker.isUndo(transaction) { return .undo }
        if UndoMarker.isRedo(transaction) { return .redo }
        return transaction.isEmpty ? .none : .action
    }

    /// The newest transaction at or below `t` that undo and redo consider,
    /// with its role: minor ones are skipped on their summaries, without
    /// being read; empty ones once read.
    private func considered(atOrBelow t: Int64) throws -> (t: Int64, transaction: Transaction, role: Role)? {
        var t = t
        while t >= 1 {
            if history.summary(t).significance > .minor {
                let transaction = try appended(t)
                let role = role(transaction)
                if role != .none { return (t, transaction, role) }
            }
            t -= 1
        }
        return nil
    }

    /// Walks back from the newest transaction: each undo cancels the next
    /// action below it (undos pop the undo stack, actions and redos push),
    /// so the first action not cancelled is the top of the stack.
    private func nextUndo() throws -> UndoAction? {
        var cancelled = 0
        var next = try considered(atOrBelow: Int64(history.count))
        while let (t, transaction, role) = next {
            next = try considered(atOrBelow: t - 1)
            if role == .undo {
                cancelled += 1
                continue
            }
            var members = [transaction]
            if role == .action, let group = UndoMarker.group(of: transaction) {
                while let earlier = next, earlier.role == .action, UndoMarker.group(of: earlier.transaction) == group {
                    members.append(earlier.transaction)
                    next = try considered(atOrBelow: earlier.t - 1)
                }
            }
            if cancelled > 0 {
                cancelled -= 1
                continue
            }
            return UndoAction(transactions: members.reversed().map(\.summary), name: UndoMarker.name(of: transaction))
        }
        return nil
    }

    /// Walks back over undos and redos (redos cancel the undo below them)
    /// to the first undo not cancelled; an action ends the walk (it
    /// cleared the redo stack).
    private func nextRedo() throws -> UndoAction? {
        var cancelled = 0
        var next = try considered(atOrBelow: Int64(history.count))
        while let (t, transaction, role) = next {
            switch role {
            case .redo: cancelled += 1
            case .undo:
                if cancelled == 0 {
                    return UndoAction(transactions: [transaction.summary], name: UndoMarker.name(of: transaction))
                }
                cancelled -= 1
            case .action, .none: return nil
            }
            next = try considered(atOrBelow: t - 1)
        }
        return nil
    }

    // MARK: Committing

    /// Appends one transaction reverting `members` (oldest first) on
    /// ``head``: the inverse of their combination, so that what they did
    /// and then undid among themselves is left alone. Every record a later
    /// transaction changed is a conflict: those whose state differs from
    /// what the action left, and those a transaction between the action's
    /// members changed. Does not suspend before the append.
    private func appendReverting(
        _ members: [Transaction],
        name: String,
        message: String,
        metadata: [Key: Value]
    ) async throws -> CommitReport {
        // Members that applied in order combine, unless a transaction
        // between them (a minor one the group skips) changed what they
        // changed: a conflict, named as such.
        let combined: Transaction
        do {
            combined = try _flatten(members, checkingValues: false)
        } catch FlattenError.incompatibleChanges(let table, let id, _) {
            throw UndoError.conflict(action: name, records: [UndoConflict(table: table, id: id, fields: [])])
        } catch FlattenError.incompatibleIndexChanges(let table, let index, _) {
            throw UndoError.indexChanged(action: name, table: table, index: index)
        }
        var revert = inverse(combined)
        revert.id = UUID()
        revert.timestamp = Date()
        revert.message = message
        revert.significance = max(combined.significance, .normal)
        revert.metadata = metadata
        revert = revert.numbered(onto: head)
        var conflicts = revert.conflicts(on: head)
        conflicts += try changedBetween(members, touching: combined, action: name)
        if !conflicts.isEmpty {
            throw UndoError.conflict(action: name, records: UndoConflict.merged(conflicts))
        }
        let next: Database
        do {
            next = try apply(head, revert)
        } catch let error as ApplyError {
            throw UndoError.cannotApply(action: name, error)
        }
        return try await append(revert, producing: next)
    }

    /// The records of `combined` that transactions between the first and
    /// the last of `members` (minor ones, skipped by the group) changed:
    /// fields the group also changed, or the record as a whole (an insert
    /// or delete on either side). An edit of other fields of a record the
    /// group updated is left alone, as it is after the group (its fields
    /// are not in the group's combined change, which then chains exactly).
    /// - Throws: ``UndoError/indexChanged(action:table:index:)`` when one of
    ///   those transactions changed an index declaration the group changed.
    private func changedBetween(
        _ members: [Transaction],
        touching combined: Transaction,
        action name: String
    ) throws -> [UndoConflict] {
        guard let first = members.first?.t, let last = members.last?.t, last - first + 1 > members.count else {
            return []
        }
        let memberTs = Set(members.map(\.t))
        var found: [UndoConflict] = []
        for t in first...last where !memberTs.contains(t) {
            let between = try appended(t)
            for (table, indexChanges) in between.indexChanges {
                guard let touched = combined.indexChanges[table] else { continue }
                if let index = indexChanges.keys.sorted().first(where: { touched[$0] != nil }) {
                    throw UndoError.indexChanged(action: name, table: table, index: index)
                }
            }
            for (table, changes) in between.changes {
                guard let touched = combined.changes[table] else { continue }
                for (id, change) in changes {
                    guard let groupChange = touched[id] else { continue }
                    switch (change, groupChange) {
                    case (.update(let between), .update(let group)):
                        let shared = between.keys.filter { group[$0] != nil }.sorted()
                        if !shared.isEmpty { found.append(UndoConflict(table: table, id: id, fields: shared)) }
                    case (.update(let between), _):
                        found.append(UndoConflict(table: table, id: id, fields: between.keys.sorted()))
                    default:
                        found.append(UndoConflict(table: table, id: id, fields: []))
                    }
                }
            }
        }
        return found
    }
}
