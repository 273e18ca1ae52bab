/// A user action as undo and redo see it: one transaction, or consecutive
/// transactions sharing an ``Store/undoGroupKey`` value in their metadata.
public struct UndoAction: Hashable, Sendable {
    /// The action's transactions, oldest first.
    public var transactions: [TransactionSummary]
    /// What a menu would name it: the newest transaction's message (for a
    /// redo, the message of the action its undo reverted).
    public var name: String
}

/// The metadata keys undo and redo record, so that what can be undone
/// next is read back from the history itself (and survives reopening).
enum UndoMarker {
    /// On an undo: the IDs of the transactions it reverted, as strings.
    static let undoes: Key = "strata.undoes"
    /// On a redo: the ID of the undo it reverted.
    static let redoes: Key = "strata.redoes"
    /// On both: the name of the action.
    static let action: Key = "strata.action"

    /// Keys a revert must not copy from the transaction it inverts: the
    /// revert is a new action of its own.
    static let reserved: [Key] = [undoes, redoes, action, Store.undoGroupKey]

    /// An undo: it lists the IDs it reverted, the last being the one it
    /// names as reverted (a copy of an undo's metadata on another
    /// transaction, an inverse of it for example, is not one).
    static func isUndo(_ transaction: Transaction) -> Bool {
        guard case .list(let ids)? = transaction.metadata[undoes], let reverted = transaction.reverts else {
            return false
        }
        return ids.last == .string(reverted.uuidString)
    }

    /// A redo: it names the undo it reverted, in its metadata and as the
    /// transaction it reverts.
    static func isRedo(_ transaction: Transaction) -> Bool {
        guard case .string(let id)? = transaction.metadata[redoes], let reverted = transaction.reverts else {
            return false
        }
        return id == reverted.uuidString
    }

    /// What a menu calls the action a transaction stands for: the name an
    /// undo or redo recorded, else its message.
    static func name(of transaction: Transaction) -> String {
        transaction.metadata[action]?.stringValue ?? transaction.message
    }

    /// The transaction's undo group; nil for none (a null value is none).
    static func group(of transaction: Transaction) -> Value? {
        guard let group = transaction.metadata[Store.undoGroupKey], group != .null else { return nil }
        return group
    }
}
