import DeterministicRandom
import Foundation
import Strata
import Synchronization

extension TypedScenario {
    static let songObservers = 1_000
    static let albumObservers = 100

    /// One commit touching one observed song (a play count: in an observed
    /// album, not in its index): its cost with 1,100 observers beside none,
    /// and beside re-running every observer on the new value.
    func measureObservation(_ context: BenchContext, label: String, database: Database, directory: String)
        async throws
    {
        let report = context.report
        context.progress.update("\(label): observation")
        let songs = database[table: "songs"].count
        var options = StoreOptions()
        options.createIfMissing = true
        options.durability = .none
        let store = try await Store.open(at: directory + "/observe.strata", options: options)
        try await StoreScenario.load(database, into: store)
        try await store.transact { try $0.createIndex("byAlbum", on: "songs", fields: ["album", "track"]) }

        // Observed: songs 0, s, 2s, … and the albums of the first hundred.
        let stride = max(1, songs / Self.songObservers)
        let observedSongs = (0..<Self.songObservers).map { Int64(($0 * stride) % songs) }
        var observedAlbums: [Int64] = []
        for id in observedSongs where observedAlbums.count < Self.albumObservers {
            let album = try store.current.record(TypedSong.self, id: id)!.album
            if !observedAlbums.contains(album) { observedAlbums.append(album) }
        }
        typealias Body = @Sendable (Database) throws -> [TypedSong]
        var bodies: [Body] = []
        for id in observedSongs {
            bodies.append { db in try db.record(TypedSong.self, id: id).map { [$0] } ?? [] }
        }
        for album in observedAlbums {
            bodies.append { db in
                try db.query("songs").where("album", equals: .int(album)).order(by: "track").records(TypedSong.self)
            }
        }

        let commits = context.quick ? 300 : 1_000
        var random = SplitMix64(seed: context.seed &+ 29)
        // The touched songs: observed ones, in an observed album.
        let touched = try observedSongs.filter { id in
            try observedAlbums.contains(store.current.record(TypedSong.self, id: id)!.album)
        }
        func commit(_ n: Int) async throws -> Double {
            let id = RecordID(touched[random.int(below: touched.count)])
            return try await Measure.nanoseconds {
                try await store.transact { try $0.update(id, in: "songs", [.set("plays", .int(Int64(n)))]) }
            }
        }
        var without: [Double] = []
        for n in 0..<commits { without.append(try await commit(n)) }

        // The observers, each drained by one task.
        let received = Deliveries()
        var consumers: [Task<Void, Never>] = []
        for body in bodies {
            let observation = await store.observe(body)
            consumers.append(
                Task {
                    do {
                        for try await _ in observation { received.count.withLock { $0 += 1 } }
                    } catch {}
                }
            )
        }
        let observers = await store.observerCount
        var with: [Double] = []
        for n in 0..<commits { with.append(try await commit(commits + n)) }

        // The naive alternative: every observer re-run on each new value.
        var rerun: [Double] = []
        for _ in 0..<(context.quick ? 20 : 50) {
            let value = store.current
            rerun.append(
                try Measure.nanoseconds {
                    var total = 0
                    for body in bodies { total += try body(value).count }
                    return total
                }
            )
        }
        try await store.close()
        for consumer in consumers { await consumer.value }
        let results = received.count.withLock { $0 }
        // Initial results, then two per commit (the song's and its album's).
        guard observers == bodies.count, results >= bodies.count + commits else {
            throw BenchError.verificationFailed("typed: \(observers) observers delivered \(results) results")
        }

        let extra = max(0, Statistics.median(with) - Statistics.median(without))
        report.add(
            Self.name,
            section: label,
            subject: "commit touching one observed song, 1,100 observers, p50",
            value: Statistics.median(with) / 1e3,
            unit: "µs",
            baseline: ("no observers", Statistics.median(without) / 1e3),
            note: "goal: ≤ 50 µs more than none"
        )
        report.add(
            Self.name,
            section: label,
            subject: "observer cost per commit (with − without)",
            value: extra / 1e3,
            unit: "µs",
            baseline: ("re-running all 1,100 observers", Statistics.median(rerun) / 1e3),
            note: "goal ≤ 0.02x re-running every observer"
        )
        if context.quick {
            report.gate(
                "observers' cost per commit / re-running all (\(MapScenario.sizeLabel(songs)))",
                measured: extra / max(Statistics.median(rerun), 1),
                .atMost,
                0.05
            )
        }
    }
}

/// Results delivered to the observers' consumers.
final class Deliveries: Sendable {
    let count = Mutex(0)
}
