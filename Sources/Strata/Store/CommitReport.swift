import PersistentCollections

/// What a commit did.
public struct CommitReport: Sendable {
    /// The committed transaction, numbered.
    public var transaction: Transaction
    /// The value before the commit.
    public var before: Database
    /// The value after it.
    public var after: Database

    /// The changes per table: record ID to change.
    public var changes: PersistentMap<Key, PersistentMap<RecordID, Change>> { transaction.changes }
}
