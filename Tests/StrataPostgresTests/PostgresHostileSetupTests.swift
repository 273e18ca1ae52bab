import Foundation
import Strata
import StrataPostgres
import Testing

@Suite("PostgreSQL settings out of range (no server)")
struct PostgresPortSettingsTests {
    @Test("a URL's port outside 1...65535 is refused as bad settings, as PGPORT's is")
    func urlPort() throws {
        #expect(throws: PostgresStorageError.self) { try PostgresSettings.fromEnvironment(["PGPORT": "99999"]) }
        for url in ["postgres://u@h:99999/db", "postgres://u@h:0/db"] {
            #expect(throws: PostgresStorageError.self, "\(url)") { try PostgresSettings(url: url) }
        }
        #expect(try PostgresSettings(url: "postgres://u@h:65535/db").port == 65_535)
    }

    @Test("a store name with a NUL is bad settings, before any connection")
    func nulInStoreName() async throws {
        // No server at this port: the name is refused before connecting.
        await #expect {
            _ = try await PostgresHistoryStorage.open(store: "lib\u{0}rary", settings: PostgresSettings(port: 1))
        } throws: { error in
            guard case .badSettings(let reason)? = error as? PostgresStorageError else { return false }
            return reason.contains("NUL")
        }
    }
}

extension PostgresServerTests {
    /// What a storage does with histories and databases no writer of its
    /// own leaves: a history emptied by hand, another application's
    /// tables, a row whose id column was changed (from a cold hunt).
    @Suite("PostgreSQL: histories and databases changed by hand", .serialized)
    struct HostileSetupTests {
        /// A database of its own on the test server.
        static func freshDatabase(_ label: String) async throws -> PostgresSettings {
            let name = "strata_\(label)_\(UInt32.random(in: 0...UInt32.max))"
            let admin = try await TestServer.session()
            try await admin.execute("CREATE DATABASE \(name)")
            await admin.close()
            var settings = try TestServer.settings()
            settings.database = name
            return settings
        }

        /// A new store with three commits through a peer, then `sql`
        /// (its first parameter the store's name) run on it by hand.
        static func threeCommits(
            _ label: String,
            then sql: String,
            _ parameters: PostgresValue...
        ) async throws -> (PostgresHistoryStorage, Peer) {
            let storage = try await TestServer.newStore(label)
            let peer = try await Peer.open(storage)
            for n in 1...3 {
                try await peer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
            }
            #expect(try await storage.transactions(from: 1, limit: 10).count == 3)
            let admin = try await TestServer.session()
            try await admin.execute(sql, parameters: [.text(storage.store)] + parameters)
            await admin.close()
            return (storage, peer)
        }

        @Test("an append that would leave a gap is refused, as by the memory storage, not answered `taken`")
        func gapAppend() async throws {
            let storage = try await TestServer.newStore("gap")
            var builder = TransactionBuilder(on: Database())
            try builder.insert(["n": 1], id: 1, into: "t")
            var transaction = builder.transaction(message: "n 1")
            transaction.t = 5
            transaction.basis = 4
            await #expect(throws: HistoryStorageError.self) { try await MemoryHistoryStorage().append(transaction) }
            await #expect(throws: HistoryStorageError.self) { try await storage.append(transaction) }
            #expect(try await storage.transactionID(at: 5) == nil)
            // Taken is still taken.
            transaction.t = 1
            transaction.basis = 0
            #expect(try await storage.append(transaction) == .appended)
            transaction.id = UUID()
            #expect(try await storage.append(transaction) == .taken)
            await storage.close()
        }

        @Test("a peer ahead of a history emptied by hand says so, not that other writers took every number")
        func peerAheadOfEmptiedHistory() async throws {
            let (storage, peer) = try await Self.threeCommits(
                "emptied",
                then: "DELETE FROM strata_log WHERE store = $1"
            )
            do {
                try await peer.transact { try $0.insert(["n": 4], id: 4, into: "t") }
                Issue.record("committed on a history that no longer holds its basis")
            } catch let error as HistoryStorageError {
                #expect("\(error)".contains("gap"), "\(error)")
            }
            await storage.close()
        }

        @Test("a database whose strata_log is another application's is refused, and nothing is made beside it")
        func foreignTable() async throws {
            let settings = try await Self.freshDatabase("foreign")
            let session = try await PostgresSession.connect(settings)
            try await session.execute("CREATE TABLE strata_log (id serial PRIMARY KEY, msg text)")
            try await session.execute("INSERT INTO strata_log (msg) VALUES ('keep me')")
            for create in [true, false] {
                await #expect {
                    _ = try await PostgresHistoryStorage.open(store: "library", settings: settings, create: create)
                } throws: { error in
                    guard case .badSettings(let reason)? = error as? PostgresStorageError else { return false }
                    return reason.contains("strata_log") && reason.contains("not Strata's")
                }
            }
            let made = try await session.execute(
                "SELECT to_regclass('strata_stores') IS NOT NULL, to_regclass('strata_snapshots') IS NOT NULL"
            )
            #expect(made.rows.first == [.bool(false), .bool(false)], "tables made beside a foreign one")
            let kept = try await session.execute("SELECT msg FROM strata_log")
            #expect(kept.rows == [[.text("keep me")]])
            await session.close()
        }

        @Test("a log row whose id column is not its transaction's ID is damage")
        func idColumnMismatch() async throws {
            let (storage, _) = try await Self.threeCommits(
                "id-column",
                then: "UPDATE strata_log SET id = $2 WHERE store = $1 AND t = 2",
                .uuid(UUID())
            )
            await #expect {
                _ = try await storage.transactions(from: 1, limit: 10)
            } throws: { error in
                guard case .damaged(_, let what)? = error as? PostgresStorageError else { return false }
                return what.contains("row 2")
            }
            await storage.close()
        }

        @Test("a port set out of range in code is bad settings at open, not an unreachable server")
        func portSetInCode() async throws {
            var settings = try TestServer.settings()
            settings.port = 99_999
            await #expect {
                _ = try await PostgresHistoryStorage.open(store: "x", settings: settings)
            } throws: { error in
                guard case .badSettings? = error as? PostgresStorageError else { return false }
                return true
            }
            await #expect {
                _ = try await PostgresSession.connect(settings)
            } throws: { error in
                guard case .badSettings? = error as? PostgresStorageError else { return false }
                return true
            }
        }
    }
}
