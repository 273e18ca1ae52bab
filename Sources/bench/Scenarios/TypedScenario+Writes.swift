import Foundation
import Strata

extension TypedScenario {
    /// 10k songs inserted as typed records in one durable transaction, into
    /// a Strata store (`.everyCommit`) and through GRDB (`synchronous = FULL`).
    func measureInsert(_ context: BenchContext, label: String, rows: [SQLiteBaseline.Song], directory: String)
        async throws
    {
        context.progress.update("\(label): typed insert")
        let batch = 10_000
        let rounds = context.quick ? 3 : 5
        var options = StoreOptions()
        options.createIfMissing = true
        let store = try await Store.open(at: directory + "/insert.strata", options: options)
        let sqlite = try SQLiteBaseline(path: directory + "/insert.sqlite")
        var strata: [Double] = []
        var grdb: [Double] = []
        for round in 0..<rounds {
            // Fresh IDs each round; the rows' other fields repeat.
            let songs = (0..<batch).map { n -> TypedSong in
                var song = TypedSong(rows[n % rows.count])
                song.id = Int64(round * batch + n)
                return song
            }
            strata.append(
                try await Measure.nanoseconds {
                    try await store.transact(message: "Import") { builder in
                        for song in songs { try builder.insert(song) }
                    }
                }
            )
            grdb.append(
                try Measure.nanoseconds {
                    try sqlite.pool.write { db in
                        for song in songs { try song.insert(db) }
                    }
                }
            )
        }
        let stored = try store.current.records(TypedSong.self).count
        try await store.close()
        guard stored == rounds * batch else {
            throw BenchError.verificationFailed("typed: \(stored) songs stored, \(rounds * batch) inserted")
        }
        context.report.add(
            Self.name,
            section: label,
            subject: "typed insert of 10k songs in one durable transaction",
            value: Statistics.median(strata) / 1e6,
            unit: "ms",
            baseline: ("GRDB insert", Statistics.median(grdb) / 1e6)
        )
    }
}
