import Foundation
import Strata
import Testing

/// A peer's local cache: a restarting peer reads only the transactions
/// after its cached value, and a cache that does not belong or does not
/// check is never used.
@Suite("A peer's local cache")
struct PeerCacheTests {
    /// Commits `count` transactions through `peer`, records of 0 B up to
    /// past 4 KB and, every 50th, 1 MB.
    static func commit(_ count: Int, through peer: Peer, from first: Int = 0) async throws {
        for n in first..<(first + count) {
            let size = n % 50 == 49 ? 1 << 20 : (n * 97) % 6_000
            try await peer.transact(message: "edit \(n)") {
                try $0.insert(
                    ["n": .int(Int64(n)), "blob": .bytes([UInt8](repeating: UInt8(n % 256), count: size)), "é": "ü"],
                    id: RecordID(n),
                    into: "t"
                )
            }
        }
    }

    static func cachedFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".strata") }
    }

    @Test("an empty cache path is refused, naming the mistake")
    func emptyCachePath() async throws {
        let storage = MemoryHistoryStorage()
        await #expect(throws: PeerError.invalidCacheDirectory(path: "")) { _ = try await Peer.open(storage, cache: "") }
        #expect("\(PeerError.invalidCacheDirectory(path: ""))".hasPrefix("an empty path cannot be"))
        let peer = try await Peer.open(storage, cache: nil)
        await peer.close()
    }

    @Test("a restarting peer starts from its cache and reads only the tail, over eight restarts")
    func restarts() async throws {
        let storage = MemoryHistoryStorage()
        let cache = temporaryStorePath("peer-cache")
        defer { removeStore(cache) }
        var written = 0
        for cycle in 0..<8 {
            let peer = try await Peer.open(storage, cache: cache)
            let (replayed, _) = try await PeerTests.replay(storage)
            #expect(peer.current == replayed, "cycle \(cycle)")
            // After the first, the peer read nothing but what came after
            // the value it saved.
            if cycle > 0 { #expect(await peer.summaries.isEmpty, "cycle \(cycle)") }
            try await Self.commit(60, through: peer, from: written)
            written += 60
            try await peer.saveCache()
            #expect(Self.cachedFiles(cache) == ["snapshot-" + String(format: "%020d", written) + ".strata"])
            await peer.close()
        }
        // The protocol's default reads the transaction for its ID.
        let stored = await storage.transactions(from: 7, limit: 1)
        #expect(try await storage.transactionID(at: 7) == stored.first?.id)
        #expect(try await storage.transactionID(at: 0) == nil)
        #expect(try await storage.transactionID(at: Int64(written + 1)) == nil)
        // Another writer's commits after the last save: read from the storage.
        let other = try await Peer.open(storage)
        try await Self.commit(5, through: other, from: written)
        let restarted = try await Peer.open(storage, cache: cache)
        #expect(await restarted.summaries.map(\.t) == Array(Int64(written + 1)...Int64(written + 5)))
        #expect(restarted.current == other.current)
    }

    @Test("a cache of another history, a damaged one, or one far behind the storage's snapshot is not used")
    func refusedCaches() async throws {
        let cache = temporaryStorePath("peer-cache")
        defer { removeStore(cache) }
        let first = MemoryHistoryStorage()
        let writer = try await Peer.open(first, cache: cache)
        try await Self.commit(20, through: writer)
        try await writer.saveCache()

        // Same numbers, other transactions: the basis ID differs.
        let second = MemoryHistoryStorage()
        let stranger = try await Peer.open(second)
        try await Self.commit(25, through: stranger, from: 1_000)
        let opened = try await Peer.open(second, cache: cache)
        #expect(opened.current == stranger.current)
        #expect(await opened.summaries.count == 25)
        try await opened.saveCache()
        #expect(Self.cachedFiles(cache) == ["snapshot-" + String(format: "%020d", 25) + ".strata"])

        // Every single flipped byte in the cached file: never used, never a crash.
        let file = cache + "/" + Self.cachedFiles(cache)[0]
        let pristine = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        for offset in stride(from: 0, to: pristine.count, by: max(1, pristine.count / 97)) {
            var damaged = pristine
            damaged[offset] ^= 0x20
            try Data(damaged).write(to: URL(fileURLWithPath: file))
            let peer = try await Peer.open(second, cache: cache)
            #expect(peer.current == stranger.current, "flipped byte at \(offset)")
            // It read the whole history, not the file.
            #expect(await peer.summaries.count == 25, "flipped byte at \(offset)")
            // The sound copy it writes in the background is done before the
            // next damage.
            try await peer.saveCache()
        }
        // Truncated: the same.
        try Data(pristine.prefix(pristine.count / 2)).write(to: URL(fileURLWithPath: file))
        let afterTruncation = try await Peer.open(second, cache: cache)
        #expect(afterTruncation.current == stranger.current)
        #expect(await afterTruncation.summaries.count == 25)
        try await afterTruncation.saveCache()

        // Sound again: used.
        try Data(pristine).write(to: URL(fileURLWithPath: file))
        #expect(await (try await Peer.open(second, cache: cache)).summaries.isEmpty)

        // The storage's snapshot more than 50,000 transactions past the
        // cached value: reading the snapshot costs less than the tail.
        var value = stranger.current
        for n in 0..<50_001 {
            var builder = TransactionBuilder(on: value)
            try builder.update(RecordID(1_000), in: "t", [.set("n", .int(Int64(n)))])
            let transaction = builder.transaction()
            #expect(try await second.append(transaction) == .appended)
            value = try apply(value, transaction)
        }
        await second.putSnapshot(value)
        let ahead = try await Peer.open(second, cache: cache)
        #expect(await ahead.summaries.isEmpty)
        #expect(ahead.current == value)
    }

    @Test("a peer without a cached value writes one in the background; a missing directory is made")
    func firstWrite() async throws {
        let storage = MemoryHistoryStorage()
        let seed = try await Peer.open(storage)
        try await Self.commit(30, through: seed)
        let cache = temporaryStorePath("peer-cache") + "/nested/cache"
        defer { removeStore(cache) }
        let peer = try await Peer.open(storage, cache: cache)
        // saveCache waits for a background write under way, then finds
        // nothing newer to write.
        try await peer.saveCache()
        #expect(Self.cachedFiles(cache).count == 1)
        // Files that are not the cache's older values stay.
        for name in ["notes.tmp", "other.txt", "snapshot-x.strata"] {
            #expect(FileManager.default.createFile(atPath: cache + "/" + name, contents: Data([1, 2, 3])))
        }
        try await Self.commit(3, through: peer, from: 30)
        try await peer.saveCache()
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: cache))
        #expect(
            names == [
                "notes.tmp", "other.txt", "snapshot-x.strata", "snapshot-" + String(format: "%020d", 33) + ".strata",
            ]
        )
        let again = try await Peer.open(storage, cache: cache)
        #expect(await again.summaries.isEmpty)
        #expect(again.current == peer.current)
    }

    @Test(
        "after a cut, the peer's cache of the cut history is removed; a restart reads only what follows its new cache"
    )
    func cacheAfterCut() async throws {
        let path = temporaryStorePath("cache-cut")
        let cache = temporaryStorePath("cache-cut-files")
        defer {
            removeStore(path)
            removeStore(cache)
        }
        let store = try await Store.open(at: path, options: testOptions())
        for n in 1...20 {
            try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        var peer = try await Peer.open(store, cache: cache)
        try await peer.saveCache()
        await peer.close()
        try await store.truncate(after: 5)
        for n in 100...104 {
            try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        // The cached value at 20 is another history's: not used, and gone.
        let counting = CountingStorage(store)
        peer = try await Peer.open(counting, cache: cache)
        #expect(await counting.firstReads.first == 1)
        #expect(Self.cachedFiles(cache).isEmpty)
        #expect(peer.current == store.current)
        try await peer.saveCache()
        await peer.close()
        #expect(Self.cachedFiles(cache) == ["snapshot-" + String(format: "%020d", 10) + ".strata"])
        // A newer-numbered file left by a cut history (written by hand
        // here) goes when the peer writes its next value.
        try FileManager.default.copyItem(
            atPath: cache + "/" + Self.cachedFiles(cache)[0],
            toPath: cache + "/snapshot-" + String(format: "%020d", 30) + ".strata"
        )
        let again = CountingStorage(store)
        peer = try await Peer.open(again, cache: cache)
        // Its name and its header disagree: not read, and the history read whole.
        #expect(await again.firstReads.first == 1)
        try await store.transact { try $0.insert(["n": 11], id: 11, into: "t") }
        _ = try await peer.catchUp()
        try await peer.saveCache()
        await peer.close()
        #expect(Self.cachedFiles(cache) == ["snapshot-" + String(format: "%020d", 11) + ".strata"])
        let last = CountingStorage(store)
        peer = try await Peer.open(last, cache: cache)
        #expect(await last.firstReads.first == 12)
        #expect(peer.current == store.current)
        await peer.close()
        try await store.close()
    }
}

/// A storage that passes every call to another and records where each
/// read of transactions starts.
actor CountingStorage: HistoryStorage {
    let base: any HistoryStorage
    private(set) var firstReads: [Int64] = []

    init(_ base: any HistoryStorage) { self.base = base }

    func latestT() async throws -> Int64 { try await base.latestT() }
    func append(_ transaction: Transaction) async throws -> HistoryAppend { try await base.append(transaction) }
    func append(_ transaction: Transaction, basisID: UUID) async throws -> HistoryAppend {
        try await base.append(transaction, basisID: basisID)
    }
    func transactions(from t: Int64, limit: Int) async throws -> [Transaction] {
        firstReads.append(t)
        return try await base.transactions(from: t, limit: limit)
    }
    func transactionID(at t: Int64) async throws -> UUID? { try await base.transactionID(at: t) }
    func newTransactions() async -> AsyncStream<Int64> { await base.newTransactions() }
    func putSnapshot(_ value: Database) async throws { try await base.putSnapshot(value) }
    func snapshotBases() async throws -> [Int64] { try await base.snapshotBases() }
    func snapshot(at basis: Int64) async throws -> Database? { try await base.snapshot(at: basis) }
    func isClosed() async -> Bool { await base.isClosed() }
    nonisolated var canCutHistory: Bool { base.canCutHistory }
}
