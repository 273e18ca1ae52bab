import Foundation
import Strata
import StrataPostgres

/// From a commit returning on one peer to its value being current on
/// another, each peer on its own connection, the follower through
/// LISTEN/NOTIFY (``Peer/startFollowing()``).
struct Visibility {
    let settings: PostgresSettings
    let rounds: Int

    func measure() async throws {
        progress("visibility latency")
        let store = "bench-visibility-\(UUID())"
        let writerStorage = try await PostgresHistoryStorage.open(store: store, settings: settings, create: true)
        let followerStorage = try await PostgresHistoryStorage.open(store: store, settings: settings)
        let writer = try await Peer.open(writerStorage)
        let follower = try await Peer.open(followerStorage)
        let values = await follower.values()
        await follower.startFollowing()
        var iterator = values.makeAsyncIterator()
        let clock = ContinuousClock()
        var latencies: [Double] = []
        for n in 0..<(rounds + 10) {
            let report = try await writer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
            let returned = clock.now
            while follower.current.basis < report.transaction.t {
                guard await iterator.next() != nil else {
                    throw ClusterBenchError.verificationFailed("the follower stopped")
                }
            }
            // The first ten warm the connections.
            if n >= 10 { latencies.append((clock.now - returned).seconds * 1e3) }
        }
        guard follower.current == writer.current else {
            throw ClusterBenchError.verificationFailed("the follower's value differs from the writer's")
        }
        await follower.close()
        await writerStorage.close()
        await followerStorage.close()
        for (name, p) in [("p50", 0.5), ("p99", 0.99)] {
            try Figure(
                section: CommitRates.section,
                subject: "visibility, commit returned → current on another peer, \(name)",
                value: percentile(latencies, p),
                unit: "ms"
            ).emit()
        }
    }
}
