import BenchWorkloads
import DeterministicRandom
import Foundation
import PersistentCollections
import Strata

/// `store`: the durable store on the music library. Commit latency per
/// durability policy beside a bare append + `fdatasync` of the same size
/// (interleaved, so both see the same disk); group-commit throughput of 8
/// writers beside SQLite (GRDB) doing the same durable single-row
/// transactions; snapshot time and size beside a JSON export; open time
/// cold (page cache evicted) and warm; log bytes per transaction beside
/// SQLite's WAL bytes.
struct StoreScenario {
    static let name = "store"

    func run(_ context: BenchContext, sizes: [Int]) async throws {
        for size in sizes { try await measure(context, songs: size) }
    }

    func measure(_ context: BenchContext, songs: Int) async throws {
        let label = "store: music library, \(MapScenario.sizeLabel(songs)) songs"
        let report = context.report
        let commits = context.quick ? 100 : 300
        let writers = 8
        let commitsPerWriter = context.quick ? 25 : 60
        let directory = FileManager.default.temporaryDirectory.path + "/strata-bench-\(getpid())-\(songs)"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storePath = directory + "/library.strata"

        var library = MusicLibrary(seed: context.seed)
        context.progress.update("\(label): building")
        let database = library.database(songs: songs)

        // Load in transactions of 10k records, then snapshot on demand.
        context.progress.update("\(label): loading the store")
        var bulk = StoreOptions()
        bulk.durability = .none
        bulk.createIfMissing = true
        bulk.snapshotEveryTransactions = nil
        bulk.rebuildBudget = nil
        bulk.snapshotEveryLogBytes = nil
        let loader = try await Store.open(at: storePath, options: bulk)
        try await Self.load(database, into: loader)
        var snapshotSize = 0
        let snapshotNs = try await Measure.nanoseconds { snapshotSize = try await loader.snapshot().size }
        try await loader.close()

        context.progress.update("\(label): JSON export")
        var jsonSize = 0
        let jsonNs = try Measure.nanoseconds {
            let json = JSONExport.export(database)
            jsonSize = json.count
            let appender = try DiskProbe.SyncedAppender(path: directory + "/export.json")
            try appender.appendAndSync(json)
        }

        // Commit latency per policy, each commit beside a bare synced append
        // of the bytes it added to the log.
        var latencies: [(policy: String, commits: [Double], bare: [Double])] = []
        var logBytesPerCommit = 0.0
        let bare = try DiskProbe.SyncedAppender(path: directory + "/bare.log")
        for (name, policy) in [("everyCommit", Durability.everyCommit), ("grouped", .grouped), ("none", .none)] {
            context.progress.update("\(label): commit latency, \(name)")
            let store = try await Store.open(at: storePath, options: Self.options(policy))
            var commitTimes: [Double] = []
            var bareTimes: [Double] = []
            let logBefore = await store.statistics.logBytes
            var lastLogBytes = logBefore
            for n in 0..<commits {
                let id = RecordID(library.random.int(below: songs))
                let plays = Int64(n)
                commitTimes.append(
                    try await Measure.nanoseconds {
                        try await store.transact(message: "play") { builder in
                            try builder.update(id, in: "songs", [.set("plays", .int(plays))])
                        }
                    }
                )
                let logBytes = await store.statistics.logBytes
                if policy != .none {
                    let frame = [UInt8](repeating: 0x5A, count: logBytes - lastLogBytes)
                    bareTimes.append(try Measure.nanoseconds { try bare.appendAndSync(frame) })
                }
                lastLogBytes = logBytes
            }
            if policy == .everyCommit { logBytesPerCommit = Double(lastLogBytes - logBefore) / Double(commits) }
            try await store.close()
            latencies.append((name, commitTimes, bareTimes))
        }

        // Group commit: 8 concurrent writers.
        context.progress.update("\(label): group commit, \(writers) writers")
        let grouped = try await Store.open(at: storePath, options: Self.options(.grouped))
        let groupNs = try await Self.concurrentWriters(writers, commitsPerWriter, songs: songs) { id, n in
            try await grouped.transact(message: "play") { builder in
                try builder.update(RecordID(id), in: "songs", [.set("rating", .int(Int64(n % 6)))])
            }
        }
        let groupSyncs = await grouped.statistics.syncCount
        try await grouped.close()
        let groupRate = Double(writers * commitsPerWriter) / (groupNs / 1e9)

        // SQLite through GRDB: same rows, same single-row durable transactions.
        context.progress.update("\(label): SQLite baseline")
        let sqlite = try SQLiteBaseline(path: directory + "/library.sqlite")
        try sqlite.load(Self.rows(database))
        try sqlite.setAutomaticCheckpoint(false)
        let walBefore = sqlite.walBytes
        var sqliteTimes: [Double] = []
        for n in 0..<commits {
            let id = Int64(library.random.int(below: songs))
            sqliteTimes.append(try Measure.nanoseconds { try sqlite.setPlays(Int64(n), of: id) })
        }
        let walBytesPerCommit = Double(sqlite.walBytes - walBefore) / Double(commits)
        try sqlite.setAutomaticCheckpoint(true)
        let sqliteGroupNs = try await Self.concurrentWriters(writers, commitsPerWriter, songs: songs) { id, n in
            try await sqlite.setPlaysAsync(Int64(n % 6), of: Int64(id))
        }
        let sqliteGroupRate = Double(writers * commitsPerWriter) / (sqliteGroupNs / 1e9)

        // Open: snapshot + log tail, cold (evicted from the page cache) and warm.
        context.progress.update("\(label): open")
        var coldOpens: [Double] = []
        var warmOpens: [Double] = []
        var coldReads: [Double] = []
        var opened = Database()
        // The value an open built is freed after the clock stops: freeing a
        // million records is not part of opening them.
        var kept: Store?
        let evicts = DiskProbe.evictFromPageCache(storePath)
        for _ in 0..<(context.quick ? 2 : 3) {
            DiskProbe.evictFromPageCache(storePath)
            coldReads.append(Measure.nanoseconds { DiskProbe.readAll(storePath) })
            DiskProbe.evictFromPageCache(storePath)
            opened = Database()
            coldOpens.append(
                try await Measure.nanoseconds {
                    let store = try await Store.open(at: storePath)
                    kept = store
                    try await store.close()
                }
            )
            opened = kept!.current
            kept = nil
            warmOpens.append(
                try await Measure.nanoseconds {
                    let store = try await Store.open(at: storePath)
                    kept = store
                    try await store.close()
                }
            )
            kept = nil
        }
        guard opened.recordCount == database.recordCount else {
            throw BenchError.verificationFailed("reopened store has \(opened.recordCount) records")
        }
        guard try sqlite.rowCount() == songs else { throw BenchError.verificationFailed("SQLite row count") }
        context.progress.done()

        // The report.
        for (policy, commitTimes, bareTimes) in latencies {
            for p in [50.0, 99.0] {
                report.add(
                    Self.name,
                    section: label,
                    subject: "commit p\(Int(p)), \(policy)",
                    value: Statistics.percentile(commitTimes, p) / 1e3,
                    unit: "µs",
                    baseline: bareTimes.isEmpty
                        ? ("SQLite durable", Statistics.percentile(sqliteTimes, p) / 1e3)
                        : ("bare fdatasync", Statistics.percentile(bareTimes, p) / 1e3),
                    note: "goal: durable commit p50 ≤ 1.2x a bare fdatasync of the same bytes"
                )
            }
        }
        let everyCommit = latencies[0]
        report.add(
            Self.name,
            section: label,
            subject: "SQLite durable commit p50",
            value: Statistics.median(sqliteTimes) / 1e3,
            unit: "µs",
            baseline: ("bare fdatasync", Statistics.median(everyCommit.bare) / 1e3)
        )
        report.add(
            Self.name,
            section: label,
            subject: "group commit, \(writers) writers",
            value: groupRate,
            unit: "commits/s",
            baseline: ("SQLite, \(writers) writers", sqliteGroupRate),
            note: "goal: group commit ≥ 5x SQLite's durable transactions/s"
        )
        report.add(
            Self.name,
            section: label,
            subject: "group commit, commits per sync",
            value: Double(writers * commitsPerWriter) / Double(max(groupSyncs, 1)),
            unit: "commits"
        )
        report.add(
            Self.name,
            section: label,
            subject: "snapshot size",
            value: Double(snapshotSize) / 1e6,
            unit: "MB",
            baseline: ("JSON export", Double(jsonSize) / 1e6),
            note: "goal: snapshot ≤ 0.25x the JSON size"
        )
        report.add(
            Self.name,
            section: label,
            subject: "snapshot write",
            value: snapshotNs / 1e6,
            unit: "ms",
            baseline: ("JSON export + sync", jsonNs / 1e6)
        )
        report.add(
            Self.name,
            section: label,
            subject: evicts ? "open, cold (page cache evicted)" : "open (page cache warm)",
            value: Statistics.median(coldOpens) / 1e6,
            unit: "ms",
            baseline: ("read the files", Statistics.median(coldReads) / 1e6),
            note: songs >= 1_000_000 ? "goal at 1M: cold open ≤ 250 ms and ≤ 1.5x reading the files" : nil
        )
        report.add(
            Self.name,
            section: label,
            subject: "open, warm",
            value: Statistics.median(warmOpens) / 1e6,
            unit: "ms"
        )
        report.add(
            Self.name,
            section: label,
            subject: "log bytes per single-record transaction",
            value: logBytesPerCommit,
            unit: "B",
            baseline: ("SQLite WAL bytes", walBytesPerCommit)
        )
        if context.quick {
            // Commits per sync is counted, not timed: the steadier guard of group commit.
            let size = MapScenario.sizeLabel(songs)
            report.gate(
                "store group commit, commits per sync (\(size))",
                measured: Double(writers * commitsPerWriter) / Double(max(groupSyncs, 1)),
                .atLeast,
                5
            )
            report.gate(
                "store group commit vs SQLite, 8 writers (\(size))",
                measured: groupRate / sqliteGroupRate,
                .atLeast,
                1.5
            )
        }
        report.printSection(label)
    }

    /// Nanoseconds for `writers` concurrent tasks each calling `commit`
    /// `count` times with a song number (spread by two primes, the same
    /// sequence for every subject) and the call's index.
    static func concurrentWriters(
        _ writers: Int,
        _ count: Int,
        songs: Int,
        _ commit: @escaping @Sendable (_ id: Int, _ n: Int) async throws -> Void
    ) async throws -> Double {
        try await Measure.nanoseconds {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for n in 0..<count { try await commit((writer * 7_919 + n * 104_729) % songs, n) }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    static func options(_ durability: Durability) -> StoreOptions {
        var options = StoreOptions()
        options.durability = durability
        options.createIfMissing = true
        options.snapshotEveryTransactions = nil
        options.snapshotEveryLogBytes = nil
        options.rebuildBudget = nil
        return options
    }

    /// Commits every record of `database` in transactions of 10k inserts.
    static func load(_ database: Database, into store: Store) async throws {
        for name in database.tableNames {
            var changes = PersistentMap<RecordID, Change>.Builder()
            var pending = 0
            for (id, record) in database[table: name] {
                changes[id] = .insert(record)
                pending += 1
                if pending == 10_000 {
                    try await store.commit(
                        Transaction(t: 1, basis: 0, message: "import", changes: [name: changes.build()])
                    )
                    changes = PersistentMap<RecordID, Change>.Builder()
                    pending = 0
                }
            }
            if pending > 0 {
                try await store.commit(Transaction(t: 1, basis: 0, message: "import", changes: [name: changes.build()]))
            }
        }
    }

    /// The songs table as SQLite rows.
    static func rows(_ database: Database) -> [SQLiteBaseline.Song] {
        database[table: "songs"].map { id, record in
            func int(_ name: Key) -> Int64 {
                if case .int(let value)? = record[name] { return value }
                return 0
            }
            func text(_ name: Key) -> String {
                if case .string(let value)? = record[name] { return value }
                return ""
            }
            func reference(_ name: Key) -> Int64 {
                if case .reference(let target)? = record[name], case .integer(let value) = target.id.kind {
                    return value
                }
                return 0
            }
            var duration = 0.0
            if case .double(let value)? = record["duration"] { duration = value }
            var added = 0.0
            if case .date(let value)? = record["added"] { added = value.timeIntervalSince1970 }
            var tags = ""
            if case .list(let list)? = record["tags"] {
                tags = list.compactMap { if case .string(let tag) = $0 { return tag } else { return nil } }
                    .joined(separator: ",")
            }
            guard case .integer(let key) = id.kind else { preconditionFailure("songs have integer ids") }
            return SQLiteBaseline.Song(
                id: key,
                title: text("title"),
                artist: reference("artist"),
                album: reference("album"),
                track: int("track"),
                path: text("path"),
                duration: duration,
                plays: int("plays"),
                added: added,
                rating: int("rating"),
                tags: tags
            )
        }
    }
}
