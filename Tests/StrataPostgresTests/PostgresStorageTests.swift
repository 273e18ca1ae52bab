import Foundation
import Strata
import StrataPostgres
import Testing

/// The server `make test` starts (Tests/postgres/with-server.sh).
struct TestServer {
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "STRATA_TEST_POSTGRES_URL is not set: run the tests with `make test`, which starts a PostgreSQL server"
        }
    }

    static func settings() throws -> PostgresSettings {
        guard let url = ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_URL"] else { throw Missing() }
        var settings = try PostgresSettings(url: url)
        // A hang guard, not a speed limit: `make test` runs every suite at
        // once on two cores, where a request waited 47 s for a thread.
        settings.operationTimeout = .seconds(120)
        return settings
    }

    /// A new store of a unique name.
    static func newStore(_ label: String) async throws -> PostgresHistoryStorage {
        try await PostgresHistoryStorage.open(
            store: "\(label)-\(UUID().uuidString)",
            settings: settings(),
            create: true
        )
    }

    /// Another connection to the same store.
    static func again(_ storage: PostgresHistoryStorage) async throws -> PostgresHistoryStorage {
        try await PostgresHistoryStorage.open(store: storage.store, settings: settings())
    }
}

/// Every suite that uses the server, one test at a time: the restart test
/// stops the server under whatever else would be running.
@Suite("PostgreSQL", .serialized)
struct PostgresServerTests {}

extension PostgresServerTests {
    @Suite("Peers on PostgreSQL", .serialized)
    struct PostgresStorageTests {
        static func replay(_ storage: some HistoryStorage) async throws -> (Database, [Transaction]) {
            let all = try await storage.transactions(from: 1, limit: .max)
            var value = Database()
            for transaction in all { value = try apply(value, transaction) }
            return (value, all)
        }

        @Test("three writers, each on its own connection: every commit stored once, numbered 1…n, one value")
        func concurrentWriters() async throws {
            let first = try await TestServer.newStore("writers")
            let storages = [first, try await TestServer.again(first), try await TestServer.again(first)]
            var peers: [Peer] = []
            for storage in storages { peers.append(try await Peer.open(storage)) }
            let perPeer = 25
            let reports = try await withThrowingTaskGroup(of: [CommitReport].self) { group in
                for (p, peer) in peers.enumerated() {
                    group.addTask {
                        var reports: [CommitReport] = []
                        for n in 0..<perPeer {
                            reports.append(
                                try await peer.transact(message: "peer \(p) #\(n)") {
                                    try $0.insert(
                                        ["peer": .int(Int64(p)), "n": .int(Int64(n))],
                                        id: RecordID(p * 1_000 + n),
                                        into: "rows"
                                    )
                                }
                            )
                        }
                        return reports
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let (replayed, stored) = try await Self.replay(first)
            #expect(stored.map(\.t) == Array(1...Int64(3 * perPeer)))
            #expect(Set(stored.map(\.id)).count == stored.count)
            #expect(Set(reports.map(\.transaction.id)) == Set(stored.map(\.id)))
            #expect(replayed[table: "rows"].count == 3 * perPeer)
            for peer in peers {
                #expect(try await peer.catchUp() == replayed)
            }
            let fresh = try await Peer.open(try await TestServer.again(first))
            #expect(fresh.current == replayed)
            for storage in storages { await storage.close() }
        }

        @Test("a stale commit is rebased, a conflicting one refused, against the server's order")
        func rebaseAndConflict() async throws {
            let storage = try await TestServer.newStore("rebase")
            let a = try await Peer.open(storage)
            try await a.transact { try $0.insert(["x": 0, "y": 0], id: 1, into: "t") }
            let stale = try await Peer.open(try await TestServer.again(storage))
            let other = try await Peer.open(try await TestServer.again(storage))
            try await a.transact { try $0.update(1, in: "t", [.set("x", 1)]) }
            let rebased = try await stale.transact { try $0.update(1, in: "t", [.set("y", 2)]) }
            #expect(rebased.transaction.t == 3)
            await #expect(throws: ApplyError.self) {
                try await other.transact { try $0.update(1, in: "t", [.set("x", 5)]) }
            }
            #expect(try await storage.latestT() == 3)
            let (replayed, _) = try await Self.replay(storage)
            #expect(replayed.record(1, in: "t") == ["x": 1, "y": 2])
        }

        @Test("a follower learns of commits through LISTEN/NOTIFY", .timeLimit(.minutes(1)))
        func following() async throws {
            let storage = try await TestServer.newStore("follow")
            let writer = try await Peer.open(storage)
            let follower = try await Peer.open(try await TestServer.again(storage))
            let values = await follower.values()
            await follower.startFollowing()
            for n in 1...10 {
                try await writer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
            }
            for await value in values where value.basis == 10 { break }
            #expect(follower.current == writer.current)
            await follower.close()
        }

        @Test("a snapshot in chunks: a peer opened later reads it and the tail only")
        func snapshots() async throws {
            let storage = try await TestServer.newStore("snapshot")
            let writer = try await Peer.open(storage)
            // Records large enough to take several chunks of 1 MiB compressed.
            var random = SystemRandomNumberGenerator()
            try await writer.transact { builder in
                for n in 0..<40 {
                    let blob = (0..<80_000).map { _ in UInt8.random(in: 0...255, using: &random) }
                    try builder.insert(["blob": .bytes(blob)], id: RecordID(n), into: "big")
                }
            }
            for n in 1...5 {
                try await writer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
            }
            try await writer.snapshot()
            try await writer.transact { try $0.insert(["n": 6], id: 6, into: "t") }
            #expect(try await storage.snapshotBases() == [6])
            let late = try await Peer.open(try await TestServer.again(storage))
            #expect(late.current == writer.current)
            #expect(await late.summaries.map(\.t) == [7])
        }

        @Test("errors name what is wrong: no server, no database, no store, a bad URL")
        func errors() async throws {
            var settings = try TestServer.settings()
            // The tables exist (another store is made); this name does not.
            try await TestServer.newStore("errors").close()
            do {
                _ = try await PostgresHistoryStorage.open(store: "absent-\(UUID().uuidString)", settings: settings)
                Issue.record("opened a store that does not exist")
            } catch PostgresStorageError.noStore(let name, _) {
                #expect(name.hasPrefix("absent-"))
            }
            var noDatabase = settings
            noDatabase.database = "no_such_database"
            await #expect(throws: PostgresStorageError.noDatabase(server: "\(settings.host):\(settings.port)")) {
                try await PostgresHistoryStorage.open(store: "x", settings: noDatabase, create: true)
            }
            settings.port = 1
            do {
                _ = try await PostgresHistoryStorage.open(store: "x", settings: settings)
                Issue.record("reached a server on port 1")
            } catch let error as PostgresStorageError {
                guard case .unreachable = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(error.description.contains("is the server running"))
            }
            #expect(throws: PostgresStorageError.self) { try PostgresSettings(url: "http://example.com") }
            #expect(throws: PostgresStorageError.self) {
                try PostgresSettings(url: "postgres://h/db?sslmode=sometimes")
            }
            let parsed = try PostgresSettings(url: "postgresql://app:s%40cret@db.local:6543/music?sslmode=require")
            #expect(
                parsed
                    == PostgresSettings(
                        host: "db.local",
                        port: 6543,
                        user: "app",
                        password: "s@cret",
                        database: "music",
                        tls: .require
                    )
            )
            let environment = try PostgresSettings.fromEnvironment([
                "PGHOST": "/run/pg", "PGPORT": "5433", "PGUSER": "u",
            ])
            #expect(environment.host == "/run/pg" && environment.port == 5433 && environment.user == "u")
            #expect(throws: PostgresStorageError.self) { try PostgresSettings.fromEnvironment(["PGPORT": "many"]) }
            // Certificate checks are not offered: refused, never weakened.
            #expect(throws: PostgresStorageError.self) {
                try PostgresSettings(url: "postgres://h/db?sslmode=verify-full")
            }
            // A password's percent escapes are decoded once.
            #expect(try PostgresSettings(url: "postgres://u:a%2541@h/db").password == "a%41")
        }

        @Test("a history brought in at once: all of it or none; numbers must follow")
        func appendContentsOf() async throws {
            let storage = try await TestServer.newStore("bulk")
            var value = Database()
            var history: [Transaction] = []
            for n in 0..<10_000 {
                var builder = TransactionBuilder(on: value)
                // Records of 0 B to 20 KB, so some statements carry megabytes.
                let bytes = [UInt8](repeating: UInt8(n % 251), count: n % 7 == 0 ? 20_000 : n % 100)
                try builder.insert(["n": .int(Int64(n)), "b": .bytes(bytes)], id: RecordID(n), into: "t")
                let transaction = builder.transaction(message: "import \(n)")
                value = try apply(value, transaction)
                history.append(transaction)
            }
            let follower = try await Peer.open(try await TestServer.again(storage))
            let values = await follower.values()
            await follower.startFollowing()
            #expect(try await storage.append(contentsOf: Array(history[..<6_000])) == .appended)
            // A batch starting at a number already taken changes nothing.
            #expect(try await storage.append(contentsOf: Array(history[5_000...])) == .taken)
            #expect(try await storage.latestT() == 6_000)
            await #expect(throws: HistoryStorageError.self) {
                try await storage.append(contentsOf: [history[6_000], history[6_002]])
            }
            #expect(try await storage.append(contentsOf: Array(history[6_000...])) == .appended)
            #expect(try await storage.append(contentsOf: []) == .appended)
            let (replayed, stored) = try await Self.replay(storage)
            #expect(stored.map(\.id) == history.map(\.id))
            #expect(replayed == value)
            #expect(try await storage.transactionID(at: 6_000) == history[5_999].id)
            #expect(try await storage.transactionID(at: 0) == nil)
            #expect(try await storage.transactionID(at: 10_001) == nil)
            // Listeners hear of the last number.
            for await seen in values where seen.basis == 10_000 { break }
            #expect(follower.current == value)
            await follower.close()
        }

        @Test("a peer restarting with its local cache reads only what was stored after it")
        func localCache() async throws {
            let storage = try await TestServer.newStore("cache")
            let cache = FileManager.default.temporaryDirectory.path + "/strata-pg-cache-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: cache) }
            let first = try await Peer.open(storage, cache: cache)
            for n in 1...20 {
                try await first.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
            }
            try await first.saveCache()
            await first.close()
            let other = try await Peer.open(try await TestServer.again(storage))
            for n in 21...23 {
                try await other.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
            }
            let restarted = try await Peer.open(try await TestServer.again(storage), cache: cache)
            #expect(await restarted.summaries.map(\.t) == [21, 22, 23])
            #expect(restarted.current == other.current)
        }

        @Test("a transaction a newer build stored is refused as a newer format, not as damage")
        func newerTransaction() async throws {
            let storage = try await TestServer.newStore("newer")
            let writer = try await Peer.open(storage)
            try await writer.transact { try $0.insert(["n": 1], id: 1, into: "t") }
            // Its codec version raised, the checksum column made to match:
            // what a newer build would have stored.
            let session = try await PostgresSession.connect(try TestServer.settings())
            let stored = try await session.execute(
                "SELECT payload FROM strata_log WHERE store = $1 AND t = 1",
                .text(storage.store)
            )
            guard case .bytes(var payload)?? = stored.rows.first?.first else {
                Issue.record("no payload: \(stored)")
                return
            }
            #expect(Array(payload.prefix(4)) == Array("STRT".utf8))
            payload[4] = UInt8(BinaryCodec.formatVersion + 1)
            _ = try await session.execute(
                "UPDATE strata_log SET payload = $2, checksum = $3 WHERE store = $1 AND t = 1",
                .text(storage.store),
                .bytes(payload),
                .int64(Int64(CRC32C.checksum(payload)))
            )
            await session.close()
            await #expect {
                _ = try await storage.transactions(from: 1, limit: 10)
            } throws: { error in
                guard case .newerFormat(let store, let what)? = error as? PostgresStorageError else { return false }
                return store == storage.store && what.contains("transaction 1")
                    && what.contains("version \(BinaryCodec.formatVersion + 1)")
            }
            await storage.close()
        }

        @Test("a closed storage refuses every call; it does not reconnect")
        func closedStorage() async throws {
            let storage = try await TestServer.newStore("closed")
            #expect(try await storage.latestT() == 0)
            await storage.close()
            await #expect(throws: PostgresStorageError.closed(store: storage.store)) { try await storage.latestT() }
            for await _ in await storage.newTransactions() { Issue.record("a closed storage notifies") }
        }

        @Test("a commit through a closed storage is refused as closed, nothing stored, not an unknown outcome")
        func commitOnClosedStorage() async throws {
            let storage = try await TestServer.newStore("closed-commit")
            let peer = try await Peer.open(storage)
            try await peer.transact { try $0.insert(["a": 1], id: 1, into: "t") }
            await storage.close()
            await #expect(throws: PostgresStorageError.closed(store: storage.store)) {
                try await peer.transact { try $0.insert(["a": 2], id: 2, into: "t") }
            }
            #expect(peer.current.basis == 1)
            await peer.close()
        }
    }
}
