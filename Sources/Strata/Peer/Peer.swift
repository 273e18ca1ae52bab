import Foundation
import Synchronization

/// One participant in a history that several processes or hosts share: it
/// keeps the values in memory and reads and appends transactions through a
/// ``HistoryStorage``, which alone orders the commits.
///
/// A commit is built on the peer's newest value and appended at the next
/// number by compare-and-set. When another writer took that number first,
/// the peer reads what is new and applies its transaction again on the
/// newer value: `apply(_:_:)` checks what every change replaced, so a
/// real conflict throws ``ApplyError`` and anything else is retried at the
/// next number (a bounded number of times). Writers anywhere are therefore
/// serialized by the storage's own ordering, each commit applied on the
/// value just before it. A rebased commit is checked against every field
/// it writes, not against fields its body only read: a commit that must
/// not move past other writers' changes passes `maximumAttempts: 1`.
///
///     let storage = MemoryHistoryStorage()
///     let peer = try await Peer.open(storage)
///     try await peer.transact(message: "Add") { try $0.insert(["title": "Blue"], id: 1, into: "songs") }
///     await peer.startFollowing()  // apply what other writers append, as they do
///
/// Readers call ``current`` from any thread without awaiting.
public actor Peer {
    /// Where the history lives.
    public nonisolated let storage: any HistoryStorage
    private nonisolated let published: Mutex<Database>

    /// The newest value this peer has applied. Synchronous, from any
    /// thread. O(1).
    public nonisolated var current: Database { published.withLock { $0 } }

    /// The newest value applied (the actor's copy of ``current``).
    var head: Database
    /// The transactions applied since open, oldest first.
    public internal(set) var summaries: [TransactionSummary] = []
    var valueFeeds: [UUID: AsyncStream<Database>.Continuation] = [:]
    var following: Task<Void, Never>?
    var polling: Task<Void, Never>?
    var closed = false
    /// Set when the storage's history turned out to differ from the one
    /// this peer applied: every commit and catch-up throws it.
    var divergence: PeerError?
    /// Set when the storage's notifications ended: the next catch-up or
    /// commit first checks that the storage still holds this peer's
    /// newest transaction. A peer that is not following hears nothing,
    /// so it checks before every catch-up and commit when its storage can
    /// be cut (``HistoryStorage/canCutHistory``).
    var listeningLost = false
    var listeningLostCount = 0
    /// The local cache, when opened with one, and the basis of the value
    /// it holds (-1: none yet).
    var cache: PeerCache?
    var cachedBasis: Int64 = -1
    /// A cache write under way.
    var cacheWrite: Task<Void, Never>?
    /// Where cache files are written: off the cooperative pool (see ``BlockingQueue``).
    nonisolated let cacheQueue = BlockingQueue(label: "strata.peer.cache", qos: .utility)
    /// After a failed background write, the basis from which to try again.
    var cacheRetry: Int64 = 0
    /// The value the peer opened on and its basis transaction's ID, when
    /// known (a cached value carries it; a storage's snapshot does not).
    var start: (basis: Int64, id: UUID?) = (0, nil)

    /// Transactions read per request while catching up.
    static let catchUpBatch = 1_024

    init(storage: any HistoryStorage, start: Database) {
        self.storage = storage
        self.published = Mutex(start)
        self.head = start
    }

    /// A peer on `storage`: its newest snapshot, then every transaction
    /// after it. O(snapshot + transactions after it).
    /// - Throws: what the storage throws; ``PeerError/divergentHistory(t:reason:)``
    ///   when a stored transaction does not follow the one before it.
    public static func open(_ storage: any HistoryStorage) async throws -> Peer {
        try await open(storage, cache: nil)
    }

    /// A peer on `storage` that keeps a copy of its value in the local
    /// directory `cache` (created when missing; one directory per peer):
    /// when the copy there belongs to this history and is not far behind
    /// the storage's newest snapshot, the peer starts from it and reads
    /// only the transactions after it. The copy is refreshed in the
    /// background every 10,000 transactions applied and by
    /// ``saveCache()``. A copy that does not check (damage, another
    /// history, a history cut since) is ignored and replaced.
    /// O(cached value + transactions after it), or as ``open(_:)``.
    /// - Throws: as ``open(_:)``; ``PeerError/invalidCacheDirectory(path:)``
    ///   for an empty `directory`.
    public static func open(_ storage: any HistoryStorage, cache directory: String?) async throws -> Peer {
        // An empty path is no directory: its files would go to the root.
        if directory?.isEmpty == true { throw PeerError.invalidCacheDirectory(path: "") }
        let cache = directory.map { PeerCache(directory: $0) }
        var start = Database()
        var startID: UUID?
        var fromCache = false
        let newest = try await storage.snapshotBases().last
        var cached = cache?.load()
        // Far behind the storage's snapshot: not the better start (kept).
        if let (value, _) = cached, value.basis + cacheLead < (newest ?? 0) { cached = nil }
        if let cache, let (value, id) = cached, try await storage.transactionID(at: value.basis) != id {
            // Another history's value (one cut since): never a start again.
            cache.removeValues()
            cached = nil
        }
        if let (value, id) = cached {
            start = value
            startID = id
            fromCache = true
        } else if let newest, let snapshot = try await storage.snapshot(at: newest) {
            guard snapshot.basis == newest else {
                throw PeerError.divergentHistory(
                    t: newest,
                    reason: "the snapshot stored at \(newest) holds the value at \(snapshot.basis)"
                )
            }
            start = snapshot
            // Its basis transaction's ID: what tells, later, that the
            // history was cut under this peer.
            // (Unknown when it cannot be read now: no check then.)
            startID = try? await storage.transactionID(at: newest)
        }
        let peer = Peer(storage: storage, start: start)
        await peer.useCache(cache, start: (start.basis, startID), fromCache: fromCache)
        try await peer.catchUp()
        return peer
    }

    /// Transactions a cached value may lag behind the storage's newest
    /// snapshot and still be the better start (reading them costs less
    /// than reading the snapshot).
    static let cacheLead: Int64 = 50_000

    func useCache(_ cache: PeerCache?, start: (basis: Int64, id: UUID?), fromCache: Bool) {
        self.cache = cache
        self.start = start
        if fromCache { cachedBasis = start.basis }
    }

    /// Reads and applies every transaction stored after ``current``, then
    /// publishes the newest value. On a storage that can be cut
    /// (``HistoryStorage/canCutHistory``: a file store), a peer that is not
    /// following first asks whether the storage still holds the peer's
    /// newest transaction (a history cut and grown again holds others at
    /// the same numbers), and every peer asks again after reading new
    /// transactions, before applying them: a request each.
    /// O(new transactions' changes).
    /// - Returns: the newest value.
    /// - Throws: what the storage throws (what was applied before stays);
    ///   ``PeerError/divergentHistory(t:reason:)`` when the storage no
    ///   longer holds the peer's newest transaction (the peer closes), or a
    ///   transaction does not follow the one before it or does not apply.
    @discardableResult
    public func catchUp() async throws -> Database {
        try await checkContinuityIfListeningLost()
        // What was applied is published, also when a later read fails.
        defer { publish() }
        while true {
            let batch = try await storage.transactions(from: head.basis + 1, limit: Self.catchUpBatch)
            // On a history that can be cut, what was read follows this
            // peer's newest transaction only if the storage still holds it
            // after the read: a cut and new commits before the read would
            // have handed over another history's transactions (a following
            // peer hears of a cut only later, from its stream's end).
            if storage.canCutHistory, batch.contains(where: { $0.t > head.basis }) {
                do {
                    try await checkContinuity()
                } catch let error as PeerError {
                    diverged(error)
                    throw error
                }
            }
            // Another catch-up may have run while this one waited (the
            // actor is reentrant): what it applied is skipped.
            for transaction in batch where transaction.t > head.basis {
                try applyStored(transaction)
            }
            publish()
            if batch.count < Self.catchUpBatch {
                refreshCacheIfBehind()
                return head
            }
        }
    }

    /// Applies the stored `transaction`, the one after ``head``.
    func applyStored(_ transaction: Transaction) throws {
        guard transaction.t == head.basis + 1, transaction.basis == head.basis else {
            throw PeerError.divergentHistory(
                t: transaction.t,
                reason: "expected transaction \(head.basis + 1) on basis \(head.basis), "
                    + "read \(transaction.t) on basis \(transaction.basis)"
            )
        }
        do {
            head = try apply(head, transaction)
        } catch {
            throw PeerError.divergentHistory(t: transaction.t, reason: "it does not apply: \(error)")
        }
        summaries.append(transaction.summary)
    }

    /// Makes ``head`` the published value and tells the feeds.
    func publish() {
        let value = head
        let changed = published.withLock { current in
            defer { current = value }
            return current.basis != value.basis
        }
        guard changed else { return }
        for feed in valueFeeds.values { feed.yield(value) }
    }

    /// Stores a snapshot of ``current`` so that peers opened later start
    /// from it. O(value size).
    public func snapshot() async throws {
        try await storage.putSnapshot(head)
    }

    /// The values this peer publishes from now on, newest last (a slow
    /// reader sees the newest, not every one). Ends when the peer closes.
    public func values() -> AsyncStream<Database> {
        let (stream, continuation) = AsyncStream<Database>.makeStream(bufferingPolicy: .bufferingNewest(1))
        if closed {
            continuation.finish()
            return stream
        }
        let key = UUID()
        valueFeeds[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeFeed(key) }
        }
        return stream
    }

    private func removeFeed(_ key: UUID) { valueFeeds[key] = nil }

    deinit {
        following?.cancel()
        polling?.cancel()
        for feed in valueFeeds.values { feed.finish() }
    }

    /// Stops following and ends the feeds; commits then throw
    /// ``PeerError/closed``. Idempotent.
    public func close() {
        closed = true
        following?.cancel()
        following = nil
        polling?.cancel()
        polling = nil
        for feed in valueFeeds.values { feed.finish() }
        valueFeeds = [:]
    }
}
