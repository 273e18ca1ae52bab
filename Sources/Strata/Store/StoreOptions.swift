import Foundation

/// When a commit's bytes reach stable storage.
public enum Durability: Sendable, Hashable {
    /// Each commit returns after its record is synced (the default).
    case everyCommit
    /// Commits arriving while a sync runs share the next one (group
    /// commit): each still returns only once it is durable.
    case grouped
    /// No syncing: a crash may lose recent commits (tests, bulk loads).
    case none
}

/// How a store is opened and kept.
public struct StoreOptions: Sendable {
    /// When commits are synced. Default `.everyCommit`.
    public var durability: Durability = .everyCommit
    /// What to do with damage in the middle of the log. Default `.strict`:
    /// refuse to open, naming the segment and offset.
    public var recovery: Recovery = .strict
    /// Write a snapshot when rebuilding the current value from the last
    /// one (reading it, then replaying the log after it: what open does) is
    /// estimated to take longer than this, from rates the store measures as
    /// it works. When reading one snapshot alone takes longer, one is
    /// written when the log after it costs as much again. Default 200 ms;
    /// nil for never (by cost).
    public var rebuildBudget: Duration? = .milliseconds(200)
    /// Also write a snapshot after this many transactions since the last
    /// one. Default nil (by cost alone).
    public var snapshotEveryTransactions: Int?
    /// Also write a snapshot after this many bytes of log since the last
    /// one, whatever the estimates say. Default 64 MiB; nil for never.
    public var snapshotEveryLogBytes: Int? = 64 << 20
    /// How many snapshots to keep (the newest sound ones). Default 3, at
    /// least 1. Applied after each snapshot and at every writable open
    /// (older ones are removed then), so an open with a smaller number
    /// than the store was written with trims the set.
    public var snapshotsKept: Int = 3
    /// zstd level of snapshots. Default 3; a level outside
    /// `ZstdCompressor.levels` counts as the nearest one there.
    public var compressionLevel: Int32 = 3
    /// A new log segment starts after this many bytes. Default 64 MiB.
    public var segmentSize: Int = 64 << 20
    /// How many changes the decoded transactions the store keeps in memory
    /// may hold together (older ones are read back from the log when
    /// needed). Default 100,000. The ``memoryBudget`` bounds their bytes too.
    public var cachedTransactionChanges: Int = 100_000
    /// A past value is kept in memory as a rebuild start every this many
    /// transactions, and after any transaction that brings the changes
    /// since the last one kept to 64 per transaction of the interval
    /// (1,024 at the default): a t inside a run of large imports then
    /// rebuilds in under a millisecond too. Default 16.
    ///
    /// A checkpoint costs only the trie paths that changed since the one
    /// before (one root-to-leaf path per changed record), so denser
    /// checkpoints cost little more memory than sparse ones over the
    /// same history, and a rebuild applies fewer changes: at 100k songs and
    /// 100k transactions, every 16 (3,125 kept) gave as-of p50 95 µs for
    /// 249 MB; every 128 (781), 259 µs for 212 MB.
    public var checkpointInterval: Int = 16
    /// At most this many checkpoints are kept; past it every other one goes
    /// and the interval doubles. Default 4,096 (0: none).
    public var checkpointsKept: Int = 4_096
    /// How much memory checkpoints, compaction blocks and cached
    /// transactions may hold together (see ``MemoryBudget``). Default
    /// ``MemoryBudget/proportional``: half the current value's bytes, at
    /// least 4 MiB.
    ///
    /// What checkpoints hold is what the changes between them replaced,
    /// whatever their spacing, so under the budget they cover the most
    /// recent history (the oldest go first): as-of there stays fast;
    /// further back it rebuilds from a snapshot and blocks (tens of
    /// milliseconds at 100k songs). ``MemoryBudget/unlimited`` keeps one
    /// every ``checkpointInterval`` transactions up to ``checkpointsKept``.
    public var memoryBudget: MemoryBudget = .proportional
    /// The byte cap of ``memoryBudget`` (it replaced a limit on checkpoint
    /// memory alone; setting this sets an absolute budget).
    @available(
        *,
        deprecated,
        message: "use memoryBudget: it bounds checkpoints, blocks and cached transactions together"
    )
    public var checkpointMemory: Int {
        get { memoryBudget.bytes ?? .max }
        set { memoryBudget = .bytes(newValue) }
    }
    /// At most this many changes stay in memory in the compaction engine's
    /// pre-combined blocks (the oldest kept go first; blocks of 256+
    /// transactions are read back from their files). Default 1,000,000. The
    /// ``memoryBudget`` bounds their bytes too.
    public var compactionChangesInMemory: Int = 1_000_000
    /// Create the store when `path` does not exist or is an empty
    /// directory. Default false: opening a path that holds no store throws
    /// ``StoreError/noStore(path:)`` (a mistyped path is an error, not a
    /// new empty store).
    public var createIfMissing = false
    /// Open the store to read only: no lock is taken, so it opens while
    /// another process (or another open in this one) holds it for writing,
    /// and nothing on disk is changed, not even to recover from a crash
    /// (a torn tail is read as the end; a cut recovery would make is made in
    /// memory only). The value is every transaction on disk when it opened
    /// (a writer's records not yet synced included); later commits by the
    /// writer are not seen (open again to see them). Every write (commits,
    /// revert, truncate, snapshots, undo) throws ``StoreError/readOnly(path:)``.
    /// Default false.
    public var readOnly = false
    /// The files underneath (tests inject failures here).
    public var fileSystem: any FileSystem = PosixFileSystem()

    /// Open-time handling of damage (``Strata/Recovery``, named here too).
    public typealias Recovery = Strata.Recovery

    /// The defaults.
    public init() {}
}
