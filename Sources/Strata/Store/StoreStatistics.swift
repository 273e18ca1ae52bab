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
    /// The current value's bytes as the store estimates them for the
    /// memory budget: measured when it last grew or shrank twofold,
    /// scaled by its record count since.
    public var estimatedValueBytes: Int
    /// The bytes ``StoreOptions/memoryBudget`` allows for that value
    /// (`Int.max`: unlimited).
    public var memoryBudget: Int
    /// What checkpoints, compaction blocks and cached transactions hold
    /// against the budget, as the store counts them as it works (measured
    /// checkpoint costs, estimated blocks and transactions). The budget is
    /// kept to within what the last commit added; ``StoreMemory`` measures
    /// the same parts exactly.
    public var engineBytes: Int
    /// The estimated time to rebuild the current value from the last
    /// snapshot and the log after it (what open does), from measured rates.
    public var estimatedOpen: Duration
    /// The measured rates behind that estimate and the snapshot policy.
    public var rebuildCosts: RebuildCosts
    /// What the store holds in memory; nil unless asked for with
    /// ``Store/statistics(measuringMemory:)``.
    public var memory: StoreMemory?
}
