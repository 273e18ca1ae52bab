import Foundation
import Strata
import Testing

/// Observers checked against the simplest model: run the closure on every
/// published value and drop repeats. Whatever the store skips by selecting
/// observers from a commit's changes must not show in what they receive.
@Suite("Observation against re-running every observer")
struct ObservationModelTests {
    typealias Body = @Sendable (Database) throws -> ObservedResult

    /// Results of different shapes behind one Equatable type.
    enum ObservedResult: Equatable, Sendable {
        case record(Record?)
        case ids([RecordID])
        case count(Int)
        case records([Record])
        case failure(String)
    }

    static let albums: [Value] = ["Blue", "Red", "Green", "Gold", .null]

    /// The observers: every read path (records, index ranges with and
    /// without records, limits, filters, scans, whole tables, the whole
    /// value), each with the parameters a seed draws.
    static func observer(_ kind: Int, _ random: inout SeededRandom) -> Body {
        let id = RecordID(Int64(random.int(below: 40)))
        let album = albums[random.int(below: albums.count)]
        let low = Int64(random.int(below: 8))
        switch kind % 10 {
        case 0: return { .record($0.record(id, in: "songs")) }
        case 1: return { try .ids($0.query("songs").where("album", equals: album).order(by: "track").ids()) }
        case 2:
            return {
                try .count(
                    $0.query("songs").where("album", equals: album).where("track", in: .int(low)...(.int(low + 3)))
                        .count()
                )
            }
        case 3:
            return {
                try .records(
                    $0.query("songs").where("album", equals: album).order(by: "track", descending: true)
                        .limit(2, offset: 1).records().map(\.record)
                )
            }
        case 4:
            return {
                try .ids(
                    $0.query("songs").where("album", equals: album).filter { ($0["plays"]?.intValue ?? 0) > 2 }.ids()
                )
            }
        case 5: return { .count($0[table: "albums"].count) }
        case 6: return { .count($0.recordCount) }
        case 7:
            // A query on an index that does not exist before the commit that declares it.
            return {
                do {
                    return try .ids($0.query("songs").where("plays", equals: .int(low)).ids())
                } catch {
                    return .failure("\(error)")
                }
            }
        case 8:
            return { try .records($0.query("songs").where("track", in: .int(low)...).limit(3).records().map(\.record)) }
        default:
            // Reads depend on what was read: the record named by another.
            return {
                guard case .int(let target)? = $0.record(id, in: "albums")?["song"] else { return .record(nil) }
                return .record($0.record(RecordID(target), in: "songs"))
            }
        }
    }

    static func randomCommit(_ builder: inout TransactionBuilder, _ random: inout SeededRandom, step: Int) throws {
        if step == 3_000 { try builder.createIndex("byPlays", on: "songs", fields: ["plays"]) }
        if step == 6_000 { try builder.dropIndex("byPlays", on: "songs") }
        for _ in 0..<(1 + random.int(below: 3)) {
            let id = RecordID(Int64(random.int(below: 40)))
            let exists = builder.database.record(id, in: "songs") != nil
            switch random.int(below: 10) {
            case 0..<3 where exists: try builder.delete(id, from: "songs")
            case 0..<6 where exists:
                switch random.int(below: 3) {
                case 0: try builder.update(id, in: "songs", [.set("plays", .int(Int64(random.int(below: 6))))])
                case 1: try builder.update(id, in: "songs", [.set("track", .int(Int64(random.int(below: 12))))])
                default: try builder.update(id, in: "songs", [.set("album", albums[random.int(below: albums.count)])])
                }
            case 0..<8:
                let record: Record = [
                    "album": albums[random.int(below: albums.count)],
                    "track": .int(Int64(random.int(below: 12))),
                    "plays": .int(Int64(random.int(below: 6))),
                ]
                try builder.upsert(record, id: id, into: "songs")
            default:
                let album = RecordID(Int64(random.int(below: 6)))
                if random.chance(30), builder.database.record(album, in: "albums") != nil {
                    try builder.delete(album, from: "albums")
                } else {
                    try builder.upsert(["song": .int(Int64(random.int(below: 40)))], id: album, into: "albums")
                }
            }
        }
    }

    @Test(
        "10,000 random commits, random observers joining and leaving: each sees exactly the deduplicated re-runs",
        arguments: [UInt64(11), 12]
    )
    func model(seed: UInt64) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var random = SeededRandom(seed: seed)
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { builder in
            try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
            try builder.createIndex("byTrack", on: "songs", fields: ["track"])
        }
        struct Watch {
            var body: Body
            var observation: Observation<ObservedResult>
            var start: Int
            var kind: Int
        }
        var values = [store.current]
        var watches: [Watch] = []
        for kind in 0..<20 {
            let body = Self.observer(kind, &random)
            watches.append(Watch(body: body, observation: await store.observe(body), start: 0, kind: kind))
        }
        let commits = 10_000
        for step in 1...commits {
            let report = try await store.transact { builder in try Self.randomCommit(&builder, &random, step: step) }
            values.append(report.after)
            if step % 500 == 0 {
                let body = Self.observer(random.int(below: 10), &random)
                watches.append(
                    Watch(body: body, observation: await store.observe(body), start: values.count - 1, kind: -1)
                )
            }
        }
        try await store.close()
        for watch in watches {
            var expected: [ObservedResult] = []
            for value in values[watch.start...] {
                let result: ObservedResult
                do { result = try watch.body(value) } catch { result = .failure("\(error)") }
                if expected.last != result { expected.append(result) }
            }
            var received: [ObservedResult] = []
            for try await result in watch.observation { received.append(result) }
            let common = min(received.count, expected.count)
            let diverges =
                (0..<common).first { received[$0] != expected[$0] } ?? (received.count == expected.count ? nil : common)
            #expect(
                diverges == nil,
                "seed \(seed), observer kind \(watch.kind) from value \(watch.start): result \(diverges ?? 0) of \(received.count) received, \(expected.count) expected: \(received.dropFirst(diverges ?? 0).first.map { "\($0)" } ?? "none") instead of \(expected.dropFirst(diverges ?? 0).first.map { "\($0)" } ?? "none")"
            )
        }
    }

    @Test("concurrent writers: observers see the results of the published values in commit order")
    func concurrentWriters() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions(.grouped))
        try await store.transact { try $0.createIndex("byAlbum", on: "songs", fields: ["album", "track"]) }
        let body: Body = { try .ids($0.query("songs").where("album", equals: "Blue").order(by: "track").ids()) }
        let observation = await store.observe(body)
        let reports = try await withThrowingTaskGroup(of: CommitReport.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    var reports: [CommitReport] = []
                    for i in 0..<50 {
                        let id = RecordID(Int64(writer * 100 + i % 10))
                        reports.append(
                            try await store.transact { builder in
                                let album: Value = i % 3 == 0 ? "Red" : "Blue"
                                try builder.upsert(["album": album, "track": .int(Int64(i))], id: id, into: "songs")
                            }
                        )
                    }
                    return reports.last!
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reports.count == 8)
        let published = store.current.basis
        var expected: [ObservedResult] = []
        for t in 1...published {
            let result = try body(try await store.database(asOf: t))
            if expected.last != result { expected.append(result) }
        }
        try await store.close()
        var received: [ObservedResult] = []
        for try await result in observation { received.append(result) }
        #expect(received == expected)
    }
}
