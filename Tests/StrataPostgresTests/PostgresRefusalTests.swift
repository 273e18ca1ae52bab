import Foundation
import Strata
import StrataPostgres
import Testing

extension PostgresServerTests {
    /// What a peer is told when the server refuses, when a request is given
    /// up on, and what the storage asks of the server's limits and rights.
    @Suite("PostgreSQL refusals and limits", .serialized)
    struct PostgresRefusalTests {
        static func insert(_ peer: Peer, _ n: Int, _ fields: Record? = nil) async throws {
            try await peer.transact(message: "n \(n)") {
                try $0.insert(fields ?? ["n": .int(Int64(n))], id: RecordID(n), into: "t")
            }
        }

        @Test("a statement the server refuses is the server's error at once, not an outcome to settle")
        func refusedAppend() async throws {
            let made = try await TestServer.newStore("refusal")
            let peer = try await Peer.open(made)
            // The store's row gone: the log's foreign key refuses every append
            // (SQLSTATE 23503). A refused statement stored nothing; before,
            // the peer retried it 32 times, then said the outcome was unknown.
            let admin = try await TestServer.session()
            try await admin.execute("DELETE FROM strata_stores WHERE store = $1", .text(made.store))
            await admin.close()
            do {
                try await Self.insert(peer, 1)
                Issue.record("stored without its store")
            } catch let error as PostgresStorageError {
                guard case .server(let state, _) = error else {
                    Issue.record("refused as \(error)")
                    return
                }
                #expect(state == "23503")
            }
            await made.close()
        }

        @Test("conditions that pass are settled and sent again; the others refuse at once")
        func refusalClasses() {
            for state in ["40001", "40P01", "53100", "53200", "55P03", "57014", "57P01", "58030", "08006", "25006"] {
                #expect(!PostgresStorageError.server(sqlState: state, message: "").refusesAppend, "\(state)")
            }
            for state in ["23503", "23505", "42501", "42703", "22008", "25P02", "XX000"] {
                #expect(PostgresStorageError.server(sqlState: state, message: "").refusesAppend, "\(state)")
            }
            #expect(!PostgresStorageError.unreachable(server: "db", reason: "lost").refusesAppend)
        }

        @Test("a given-up append that lands, then `taken` and a failed read: outcome unknown, never a plain error")
        func givenUpThenTaken() async throws {
            let made = try await TestServer.newStore("given-up")
            let link = GivingUpStorage(made)
            let peer = try await Peer.open(link)
            do {
                try await peer.transact { try $0.insert(["n": 1], id: 1, into: "t") }
                Issue.record("reported as committed")
            } catch let error as PeerError {
                guard case .outcomeUnknown(let id, let t, _) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(t == 1)
                // It is stored, as the error allows: its ID is there.
                #expect(try await made.transactionID(at: 1) == id)
            }
            await made.close()
        }

        @Test("a role that may use the tables but not create in the schema opens with create: true")
        func restrictedRole() async throws {
            let admin = try await TestServer.session()
            let name = "strata_role_\(UInt32.random(in: 0...UInt32.max))"
            let role = "app_\(UInt32.random(in: 0...UInt32.max))"
            try await admin.execute("CREATE DATABASE \(name)")
            var settings = try TestServer.settings()
            settings.database = name
            do {
                // The administrator makes the tables and the store once.
                let setup = try await PostgresHistoryStorage.open(store: "music", settings: settings, create: true)
                await setup.close()
                let there = try await PostgresSession.connect(settings)
                try await there.execute("CREATE ROLE \(role) LOGIN")
                try await there.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
                try await there.execute(
                    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(role)"
                )
                await there.close()
                var app = settings
                app.user = role
                // As the README shows every host opening: create: true.
                let storage = try await PostgresHistoryStorage.open(store: "music", settings: app, create: true)
                let peer = try await Peer.open(storage)
                try await Self.insert(peer, 1)
                #expect(try await storage.latestT() == 1)
                await storage.close()
                // A new store in the tables is one row: no CREATE either.
                let second = try await PostgresHistoryStorage.open(store: "podcasts", settings: app, create: true)
                #expect(try await second.latestT() == 0)
                await second.close()
            } catch {
                Issue.record("\(error)")
            }
            _ = try? await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
            _ = try? await admin.execute("DROP ROLE \(role)")
            await admin.close()
        }

        /// Requests of about 1 MiB of payload, each under the operation
        /// timeout, so that a batch of large transactions on a slow link
        /// still arrives. (Measured once, not tested for its timing: a peer
        /// with a one-second timeout could not open a log of 150
        /// transactions of 4 MB, and now opens in about one second.)
        @Test("the log is read in requests of bounded size: every start and limit reads what it should")
        func boundedReads() async throws {
            let made = try await TestServer.newStore("bounded-reads")
            let writer = try await Peer.open(made)
            // Sizes around the 1 MiB a request reads: small, just under and
            // over, and one transaction alone over it.
            let sizes = [10, 600_000, 500_000, 1 << 20, (1 << 20) + 1, 3 << 20, 20, 700_000, 400_000, 5]
            for (n, size) in sizes.enumerated() {
                try await Self.insert(writer, n + 1, ["b": .bytes([UInt8](repeating: UInt8(n), count: size))])
            }
            for (from, limit) in [(1, Int.max), (1, 3), (2, 4), (4, 1), (5, 6), (9, 5), (11, 2), (0, 100)] {
                let read = try await made.transactions(from: Int64(from), limit: limit)
                let expected = (Int64(max(from, 1))...Int64(sizes.count + 1)).dropLast().prefix(limit)
                #expect(read.map(\.t) == Array(expected), "from \(from), limit \(limit)")
            }
            // More rows than one request considers (4,096), in any window.
            let many = try await TestServer.newStore("bounded-rows")
            let history = (1...5_000).map { Transaction(t: Int64($0), basis: Int64($0 - 1), message: "\($0)") }
            #expect(try await many.append(contentsOf: history) == .appended)
            for (from, limit) in [(1, Int.max), (1, 4_096), (1, 4_097), (904, 4_096), (4_000, 2_000), (5_000, 9)] {
                let read = try await many.transactions(from: Int64(from), limit: limit)
                #expect(read.map(\.t) == Array((Int64(from)...5_000).prefix(limit)), "from \(from), limit \(limit)")
            }
            await many.close()
            // A peer reading it all agrees with the writer.
            let again = try await TestServer.again(made)
            let reader = try await Peer.open(again)
            #expect(reader.current == writer.current)
            await again.close()
            await made.close()
        }

        @Test("a transaction's time outside PostgreSQL's range is stored; the time column says infinity")
        func timesOutOfRange() async throws {
            let made = try await TestServer.newStore("times")
            let ancient = Date(timeIntervalSince1970: -250_000_000_000)  // about 5950 BC
            let far = Date(timeIntervalSince1970: 10_000_000_000_000)  // about 318,857 AD
            #expect(try await made.append(Transaction(t: 1, basis: 0, timestamp: ancient, message: "old")) == .appended)
            #expect(try await made.append(contentsOf: [Transaction(t: 2, basis: 1, timestamp: far)]) == .appended)
            let read = try await made.transactions(from: 1, limit: 10)
            #expect(read.map(\.timestamp) == [ancient, far])
            let admin = try await TestServer.session()
            let times = try await admin.execute(
                "SELECT time::text FROM strata_log WHERE store = $1 ORDER BY t",
                .text(made.store)
            )
            #expect(times.rows.map { $0[0]?.text } == ["-infinity", "infinity"])
            await admin.close()
            await made.close()
        }
    }
}

/// PostgreSQL through a link that gives up on requests: the first append
/// is given up on, and the server stores it later, just before the peer's
/// retry (as after `operationTimeout`); the read that follows the retry's
/// `taken` is lost.
actor GivingUpStorage: HistoryStorage {
    let base: PostgresHistoryStorage
    private var givenUp: Transaction?
    private var appends = 0
    private var failNextRead = false

    init(_ base: PostgresHistoryStorage) { self.base = base }

    func latestT() async throws -> Int64 { try await base.latestT() }

    func append(_ transaction: Transaction) async throws -> HistoryAppend {
        appends += 1
        if appends == 1 {
            givenUp = transaction
            throw PostgresStorageError.unreachable(server: "db", reason: "no answer in 30 seconds")
        }
        if let landing = givenUp {
            givenUp = nil
            _ = try await base.append(landing)
        }
        let outcome = try await base.append(transaction)
        if outcome == .taken { failNextRead = true }
        return outcome
    }

    func transactions(from t: Int64, limit: Int) async throws -> [Transaction] {
        if failNextRead {
            failNextRead = false
            throw PostgresStorageError.unreachable(server: "db", reason: "server closed the connection unexpectedly")
        }
        return try await base.transactions(from: t, limit: limit)
    }

    func transactionID(at t: Int64) async throws -> UUID? { try await base.transactionID(at: t) }
    func newTransactions() async -> AsyncStream<Int64> { await base.newTransactions() }
    func putSnapshot(_ value: Database) async throws { try await base.putSnapshot(value) }
    func snapshotBases() async throws -> [Int64] { try await base.snapshotBases() }
    func snapshot(at basis: Int64) async throws -> Database? { try await base.snapshot(at: basis) }
}
