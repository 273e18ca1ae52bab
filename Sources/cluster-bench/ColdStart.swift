import BenchWorkloads
import Foundation
import Strata
import StrataPostgres

/// A peer's cold start on a store of `songs` songs held by PostgreSQL: from
/// the server alone (its snapshot, in chunks, then the log after it) and
/// with a local cache (``Peer/open(_:cache:)``), each beside opening a file
/// store holding the same value (its snapshot).
struct ColdStart {
    let settings: PostgresSettings
    let songs: Int
    let seed: UInt64
    let rounds: Int

    func measure() async throws {
        let label = songs >= 1_000_000 ? "\(songs / 1_000_000)M" : "\(songs / 1_000)k"
        progress("cold start, \(label) songs: loading")
        var library = MusicLibrary(seed: seed)
        let value = library.database(songs: songs)
        var builder = TransactionBuilder(on: Database())
        for (name, table) in value.tables {
            for (id, record) in table.records { try builder.insert(record, id: id, into: name) }
        }
        let first = builder.transaction(message: "import")
        let imported = try apply(Database(), first)

        let store = "bench-coldstart-\(UUID())"
        let storage = try await PostgresHistoryStorage.open(store: store, settings: settings, create: true)
        guard try await storage.append(first) == .appended else {
            throw ClusterBenchError.verificationFailed("the import was not stored")
        }
        try await storage.putSnapshot(imported)
        await storage.close()

        let directory = FileManager.default.temporaryDirectory.path + "/strata-cluster-store-\(UUID())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StoreOptions()
        options.createIfMissing = true
        let file = try await Store.open(at: directory, options: options)
        try await file.commit(first)
        try await file.snapshot()
        try await file.close()

        // The local cache of a peer that ran on this machine before.
        let cache = directory + "-cache"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let caching = try await PostgresHistoryStorage.open(store: store, settings: settings)
        let warm = try await Peer.open(caching, cache: cache)
        try await warm.saveCache()
        await caching.close()

        progress("cold start, \(label) songs")
        let clock = ContinuousClock()
        var fromServer: [Double] = []
        var fromCache: [Double] = []
        var fromFiles: [Double] = []
        // Alternated, after one untimed round (page cache, allocator).
        for round in -1..<rounds {
            let start = clock.now
            let late = try await PostgresHistoryStorage.open(store: store, settings: settings)
            let peer = try await Peer.open(late)
            let server = (clock.now - start).seconds
            guard peer.current.recordCount == imported.recordCount else {
                throw ClusterBenchError.verificationFailed("a peer opened from PostgreSQL differs")
            }
            await late.close()

            let cacheStart = clock.now
            let restarting = try await PostgresHistoryStorage.open(store: store, settings: settings)
            let cached = try await Peer.open(restarting, cache: cache)
            let withCache = (clock.now - cacheStart).seconds
            guard cached.current.recordCount == imported.recordCount, await cached.summaries.isEmpty else {
                throw ClusterBenchError.verificationFailed("a peer opened from its cache differs or read the log")
            }
            await restarting.close()

            let fileStart = clock.now
            let reopened = try await Store.open(at: directory)
            let files = (clock.now - fileStart).seconds
            guard reopened.current.recordCount == imported.recordCount else {
                throw ClusterBenchError.verificationFailed("the file store differs")
            }
            try await reopened.close()
            if round >= 0 {
                fromServer.append(server)
                fromCache.append(withCache)
                fromFiles.append(files)
            }
        }
        try Figure(
            section: CommitRates.section,
            subject: "cold start, \(label) songs, from PostgreSQL alone (snapshot + log)",
            value: median(fromServer) * 1e3,
            unit: "ms",
            baselineName: "file store open",
            baselineValue: median(fromFiles) * 1e3
        ).emit()
        try Figure(
            section: CommitRates.section,
            subject: "cold start, \(label) songs, with a local cache (cached value + log after it)",
            value: median(fromCache) * 1e3,
            unit: "ms",
            baselineName: "file store open",
            baselineValue: median(fromFiles) * 1e3
        ).emit()
    }
}
