/// Where the log and snapshots stand.
public struct StoreStatistics: Sendable, Hashable {
    /// Transactions in the history.
    public var transactionCount: Int
    /// Bytes of log on disk.
    public var logBytes: Int
    /// The basis of the newest snapshot (0: none).
    public var lastSnapshotBasis: Int64
    /// Bytes of log after that snapshot: what open replays, and what the
    /// snapshot policy measures.
    public var logBytesSinceSnapshot: Int
    /// Log syncs since the store was opened: with ``Durability/grouped``,
    /// fewer than commits.
    public var syncCount: Int
    /// Bytes of the snapshots on disk that the store has read or written.
    public var snapshotBytes: Int
    /// The bases of those snapshots, ascending.
    public var snapshotBases: [Int64]
    /// Past values kept in memory as rebuild starts.
    public var checkpointCount: Int
    /// Changes held by the pre-combined blocks of the compaction engine.
    public var compactedChanges: Int
    /// The estimated time to rebuild the current value from the last
    /// snapshot and the log after it (what open does), from measured rates.
    public var estimatedOpen: Duration
    /// The measured rates behind that estimate and the snapshot policy.
    public var rebuildCosts: RebuildCosts
    /// What the store holds in memory; nil unless asked for with
    /// ``Store/statistics(measuringMemory:)``.
    public var memory: StoreMemory?
}
