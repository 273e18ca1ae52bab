import Foundation
import Strata
import StrataPostgres

/// A peer opened on a store of `count` transactions and no snapshot: it
/// reads and applies all of them. Beside applying the same transactions in
/// memory.
struct CatchUp {
    let settings: PostgresSettings
    let count: Int

    func measure() async throws {
        progress("catching up \(count) transactions: loading")
        // One song added or updated per transaction, as an app's edits.
        var value = Database()
        var transactions: [Transaction] = []
        transactions.reserveCapacity(count)
        for n in 0..<count {
            var builder = TransactionBuilder(on: value)
            let id = RecordID(n % 20_000)
            if n < 20_000 {
                try builder.insert(["title": .string("Song \(n)"), "plays": 0], id: id, into: "songs")
            } else {
                try builder.update(id, in: "songs", [.set("plays", .int(Int64(n)))])
            }
            let transaction = builder.transaction(message: "edit \(n)")
            value = try apply(value, transaction)
            transactions.append(transaction)
        }
        let store = "bench-catchup-\(UUID())"
        let storage = try await PostgresHistoryStorage.open(store: store, settings: settings, create: true)
        for start in stride(from: 0, to: count, by: 10_000) {
            let part = Array(transactions[start..<min(count, start + 10_000)])
            guard try await storage.append(contentsOf: part) == .appended else {
                throw ClusterBenchError.verificationFailed("the history did not load")
            }
        }
        await storage.close()

        progress("catching up \(count) transactions")
        let clock = ContinuousClock()
        var times: [Double] = []
        var baselines: [Double] = []
        for _ in 0..<3 {
            let late = try await PostgresHistoryStorage.open(store: store, settings: settings)
            let start = clock.now
            let peer = try await Peer.open(late)
            times.append((clock.now - start).seconds)
            guard peer.current == value else { throw ClusterBenchError.verificationFailed("a late peer differs") }
            await late.close()

            let replayStart = clock.now
            var replayed = Database()
            for transaction in transactions { replayed = try apply(replayed, transaction) }
            baselines.append((clock.now - replayStart).seconds)
            guard replayed == value else { throw ClusterBenchError.verificationFailed("the replay differs") }
        }
        try Figure(
            section: CommitRates.section,
            subject: "a late peer catches up \(count) transactions",
            value: median(times),
            unit: "s",
            baselineName: "apply them in memory",
            baselineValue: median(baselines)
        ).emit()
    }
}
