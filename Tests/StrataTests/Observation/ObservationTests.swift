import Foundation
import Strata
import Synchronization
import Testing

@Suite("Observation")
struct ObservationTests {
    struct Song: StoredRecord, Equatable {
        static let table: Key = "songs"
        var id: Int
        var title: String
        var album: String
        var track: Int
    }

    /// Counts the runs of a closure.
    final class Runs: Sendable {
        let count = Mutex(0)
        func tick() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    @Test("an observer runs only for commits that touch what it read")
    func selective() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { builder in
            try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
            for id in 0..<100 {
                try builder.save(Song(id: id, title: "Song \(id)", album: "Album \(id % 10)", track: id / 10))
            }
        }
        let songRuns = Runs()
        let albumRuns = Runs()
        let song = await store.observe { db in
            songRuns.tick()
            return try db.record(Song.self, id: 7)
        }
        let album = await store.observe { db in
            albumRuns.tick()
            return try db.query("songs").where("album", equals: "Album 3").order(by: "track").records(Song.self)
        }
        #expect(songRuns.value == 1 && albumRuns.value == 1)
        // Another song of another album: neither runs.
        try await store.transact { try $0.save(Song(id: 8, title: "Eight", album: "Album 8", track: 0)) }
        #expect(songRuns.value == 1 && albumRuns.value == 1)
        // A song moves into the album: only the album observer runs.
        try await store.transact { try $0.save(Song(id: 9, title: "Song 9", album: "Album 3", track: 20)) }
        #expect(songRuns.value == 1 && albumRuns.value == 2)
        // The observed song: only its observer.
        try await store.transact { try $0.save(Song(id: 7, title: "Seven", album: "Album 7", track: 0)) }
        #expect(songRuns.value == 2 && albumRuns.value == 2)
        // A song of the album changes a field the index does not hold.
        try await store.transact { try $0.save(Song(id: 13, title: "Thirteen", album: "Album 3", track: 1)) }
        #expect(songRuns.value == 2 && albumRuns.value == 3)
        try await store.close()
        var songs: [Song?] = []
        for try await value in song { songs.append(value) }
        #expect(songs.map { $0?.title } == ["Song 7", "Seven"])
        var albums: [[Int]] = []
        for try await value in album { albums.append(value.map(\.id)) }
        let before = [3, 13, 23, 33, 43, 53, 63, 73, 83, 93]
        // The last result differs from the one before it by song 13's title.
        #expect(albums == [before, before + [9], before + [9]])
    }

    @Test("cancelling the task that iterates an observation frees its observer")
    func cancellation() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        let observation = await store.observe { $0.record(1, in: "songs") }
        #expect(await store.observerCount == 1)
        let started = AsyncStream<Void>.makeStream()
        let consumer = Task {
            var seen = 0
            for try await _ in observation {
                seen += 1
                started.continuation.yield()
            }
            return seen
        }
        for await _ in started.stream { break }
        consumer.cancel()
        _ = try? await consumer.value
        var waited = 0
        while await store.observerCount > 0, waited < 500 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(await store.observerCount == 0)
        // Commits after the cancellation run nothing.
        try await store.transact { try $0.insert(["title": "One"], id: 1, into: "songs") }
        try await store.close()
    }

    @Test("an observation dropped without being iterated frees its observer")
    func dropped() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        do {
            _ = await store.observe { $0.record(1, in: "songs") }
        }
        var waited = 0
        while await store.observerCount > 0, waited < 500 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(await store.observerCount == 0)
        try await store.close()
    }

    struct Refused: Error, Equatable {}

    @Test("a closure that throws ends its observation with the error; closing ends the others")
    func endings() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        let failing = await store.observe { db -> Int in
            if db.record(1, in: "songs") != nil { throw Refused() }
            return 0
        }
        let counting = await store.observe { $0[table: "songs"].count }
        try await store.transact { try $0.insert(["title": "One"], id: 1, into: "songs") }
        #expect(await store.observerCount == 1)
        var results: [Int] = []
        await #expect(throws: Refused.self) {
            for try await value in failing { results.append(value) }
        }
        #expect(results == [0])
        try await store.close()
        var counts: [Int] = []
        for try await count in counting { counts.append(count) }
        #expect(counts == [0, 1])
        // Observing a closed store yields the current result and ends.
        var late: [Int] = []
        for try await count in await store.observe({ $0[table: "songs"].count }) { late.append(count) }
        #expect(late == [1])
    }

    @Test("truncating to an older value yields its result; repeats never come")
    func truncate() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        let observation = await store.observe { $0.record(1, in: "songs")?["title"] }
        try await store.transact { try $0.insert(["title": "One"], id: 1, into: "songs") }
        try await store.transact { try $0.update(1, in: "songs", [.set("title", "Uno")]) }
        try await store.transact { try $0.update(1, in: "songs", [.set("title", "Uno")]) }
        try await store.transact { try $0.insert(["title": "Two"], id: 2, into: "songs") }
        try await store.truncate(after: 1)
        try await store.close()
        var titles: [Value?] = []
        for try await title in observation { titles.append(title) }
        #expect(titles == [nil, "One", "Uno", "One"])
    }

    @Test("buffering .newest: a consumer that falls behind gets the newest result, no repeat")
    func newest() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        let observation = await store.observe(buffering: .newest) { $0.record(1, in: "songs")?["n"] }
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == .some(nil))
        for n in 0..<100 {
            try await store.transact { try $0.upsert(["n": .int(Int64(n))], id: 1, into: "songs") }
        }
        #expect(try await iterator.next() == .some(.int(99)))
        // A change and its revert while the consumer is away: nothing new.
        try await store.transact { try $0.upsert(["n": 5], id: 1, into: "songs") }
        try await store.transact { try $0.upsert(["n": 99], id: 1, into: "songs") }
        try await store.close()
        #expect(try await iterator.next() == nil)
    }

    @Test("typed observation of one record and of a query")
    func typed() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.createIndex("byAlbum", on: "songs", fields: ["album", "track"]) }
        let one = await store.observe(Song.self, id: 2)
        let blue = await store.observe(Song.self) {
            $0.query("songs").where("album", equals: "Blue").order(by: "track")
        }
        try await store.transact { builder in
            try builder.save(Song(id: 1, title: "A", album: "Blue", track: 2))
            try builder.save(Song(id: 2, title: "B", album: "Blue", track: 1))
        }
        try await store.transact { try $0.delete(Song.self, id: 2) }
        try await store.close()
        var ones: [Song?] = []
        for try await song in one { ones.append(song) }
        #expect(ones == [nil, Song(id: 2, title: "B", album: "Blue", track: 1), nil])
        var albums: [[Int]] = []
        for try await songs in blue { albums.append(songs.map(\.id)) }
        #expect(albums == [[], [2, 1], [1]])
    }
}

@Suite("Observation of every read path")
struct ObservationReadPathTests {
    static func collect<T>(_ observation: Observation<T>) async throws -> [T] {
        var results: [T] = []
        for try await result in observation { results.append(result) }
        return results
    }

    @Test("the basis, equality with a value, and a query with contradictory equalities are observed")
    func wholeValueReads() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.createIndex("byAlbum", on: "songs", fields: ["album"]) }
        let baseline = store.current
        let basis = await store.observe { $0.basis }
        let unchanged = await store.observe { $0 == baseline }
        let contradictory = await store.observe { db -> String in
            do {
                return "\(try db.query("songs").where("album", equals: "A").where("album", equals: "B").ids())"
            } catch {
                return "error"
            }
        }
        try await store.transact { try $0.insert(["album": "A"], id: 1, into: "songs") }
        try await store.transact { try $0.dropIndex("byAlbum", on: "songs") }
        try await store.close()
        #expect(try await Self.collect(basis) == [1, 2, 3])
        #expect(try await Self.collect(unchanged) == [true, false])
        #expect(try await Self.collect(contradictory) == ["[]", "error"])
    }

    @Test("range observers across an index dropped, declared again on other fields, and a better one declared")
    func indexChanges() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { builder in
            try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
            for id in 0..<6 {
                try builder.insert(
                    ["album": id < 3 ? "A" : "B", "track": .int(Int64(id))],
                    id: RecordID(Int64(id)),
                    into: "songs"
                )
            }
        }
        let body: @Sendable (Database) -> String = { db in
            do {
                let query = db.query("songs").where("album", equals: "A").order(by: "track")
                return "\(try query.explain()) \(try query.ids())"
            } catch {
                return "error"
            }
        }
        let observation = await store.observe(body)
        var values = [store.current]
        values.append(try await store.transact { try $0.dropIndex("byAlbum", on: "songs") }.after)
        values.append(try await store.transact { try $0.update(1, in: "songs", [.set("album", "B")]) }.after)
        values.append(try await store.transact { try $0.createIndex("byAlbum", on: "songs", fields: ["album"]) }.after)
        values.append(
            try await store.transact { try $0.createIndex("aByAlbumTrack", on: "songs", fields: ["album", "track"]) }
                .after
        )
        values.append(try await store.transact { try $0.update(4, in: "songs", [.set("album", "A")]) }.after)
        values.append(try await store.transact { try $0.update(4, in: "songs", [.set("track", -1)]) }.after)
        try await store.close()
        var expected: [String] = []
        for value in values where expected.last != body(value) { expected.append(body(value)) }
        #expect(try await Self.collect(observation) == expected)
        #expect(expected.count >= 4)
    }
}
