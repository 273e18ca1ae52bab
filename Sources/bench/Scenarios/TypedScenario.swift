import BenchWorkloads
import Foundation
import Strata

/// `typed`: the Swift front end beside GRDB on the same rows. Typed fetch
/// of every song (records/s) beside GRDB's `fetchAll` of the same Codable
/// struct and beside Strata's untyped read of every field; a typed insert
/// of 10k songs in one durable transaction beside GRDB's; and observation:
/// 1,000 observers of single songs plus 100 of album queries, one commit
/// touching one observed song (durability `.none`), beside the same commit
/// with no observers and beside re-running every observer.
struct TypedScenario {
    static let name = "typed"

    func run(_ context: BenchContext, sizes: [Int]) async throws {
        for size in sizes {
            let label = "typed: music library, \(MapScenario.sizeLabel(size)) songs"
            var library = MusicLibrary(seed: context.seed)
            context.progress.update("\(label): building")
            let rows = StoreScenario.rows(library.database(songs: size))
            let directory = FileManager.default.temporaryDirectory.path + "/strata-bench-typed-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let database = try measureFetch(context, label: label, rows: rows, directory: directory)
            try await measureInsert(context, label: label, rows: rows, directory: directory)
            try await measureObservation(context, label: label, database: database, directory: directory)
            context.report.printSection(label)
        }
    }

    /// Typed fetch of every song, GRDB's Codable fetch, and the untyped read.
    /// Returns the value holding the songs.
    func measureFetch(_ context: BenchContext, label: String, rows: [SQLiteBaseline.Song], directory: String) throws
        -> Database
    {
        let report = context.report
        var builder = TransactionBuilder(on: Database())
        for row in rows { try builder.insert(TypedSong(row)) }
        let database = builder.database
        let sqlite = try SQLiteBaseline(path: directory + "/fetch.sqlite")
        try sqlite.load(rows)

        // Per core: 10k songs, a table small enough to decode on one thread.
        var small = TransactionBuilder(on: Database())
        for row in rows.prefix(10_000) { try small.insert(TypedSong(row)) }
        let oneCore = small.database

        context.progress.update("\(label): fetch")
        let rounds = context.quick ? 3 : 5
        var typed: [Double] = []
        var grdb: [Double] = []
        var untyped: [Double] = []
        var typedOneCore: [Double] = []
        for _ in 0..<rounds {
            var songs: [TypedSong] = []
            typed.append(try Measure.nanoseconds { songs = try database.records(TypedSong.self) })
            var fetched: [TypedSong] = []
            try sqlite.reading { db in grdb.append(try Measure.nanoseconds { fetched = try TypedSong.fetchAll(db) }) }
            guard songs.count == rows.count, fetched.count == rows.count,
                Set(songs.map(\.id)) == Set(fetched.map(\.id)),
                songs.first.map({ song in fetched.first { $0.id == song.id } == song }) ?? true
            else {
                throw BenchError.verificationFailed("typed: Strata and GRDB fetch different songs")
            }
            for _ in 0..<5 {
                untyped.append(Measure.nanoseconds { Self.readEveryField(oneCore) })
                typedOneCore.append(try Measure.nanoseconds { try oneCore.records(TypedSong.self) })
            }
        }
        let count = Double(rows.count)
        let typedRate = count / (Statistics.median(typed) / 1e9)
        let grdbRate = count / (Statistics.median(grdb) / 1e9)
        let oneCoreCount = Double(oneCore[table: "songs"].count)
        let untypedRate = oneCoreCount / (Statistics.median(untyped) / 1e9)
        let typedOneCoreRate = oneCoreCount / (Statistics.median(typedOneCore) / 1e9)
        report.add(
            Self.name,
            section: label,
            subject: "typed fetch of every song (on every core), records/s",
            value: typedRate,
            unit: "rec/s",
            baseline: ("GRDB fetchAll (Codable)", grdbRate),
            note: "goal ≥ 3x GRDB at 100k and 1M"
        )
        report.add(
            Self.name,
            section: label,
            subject: "typed decode vs untyped read of every field, one core (10k songs), records/s",
            value: typedOneCoreRate,
            unit: "rec/s",
            baseline: ("untyped read", untypedRate),
            note: "goal ≥ 0.5x the untyped read"
        )
        if context.quick {
            // The goal is 3x at 100k and 1M (2.95-3.17x in full runs on
            // 2026-11-24; --quick measures 3 rounds); the gate holds what
            // is reached against regressions, with room for noise.
            report.gate(
                "typed fetch vs GRDB (\(MapScenario.sizeLabel(rows.count)))",
                measured: typedRate / grdbRate,
                .atLeast,
                1.6
            )
            report.gate(
                "typed decode vs untyped read (\(MapScenario.sizeLabel(rows.count)))",
                measured: typedOneCoreRate / untypedRate,
                .atLeast,
                0.5
            )
        }
        return database
    }

    /// Every field of every song read as a `Value`, as an untyped front end
    /// would: the baseline typed decoding is held to.
    static func readEveryField(_ database: Database) -> Int {
        let names: [Key] = [
            "title", "artist", "album", "track", "path", "duration", "plays", "added", "rating", "tags",
        ]
        var sum = 0
        for (_, record) in database[table: "songs"] {
            for name in names {
                switch record[name] {
                case .int(let value)?: sum &+= Int(truncatingIfNeeded: value)
                case .string(let text)?: sum &+= text.utf8.count
                case .double(let value)?: sum &+= Int(value)
                default: break
                }
            }
        }
        return sum
    }
}
