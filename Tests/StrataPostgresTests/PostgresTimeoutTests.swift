import Foundation
import Strata
import StrataPostgres
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PostgresServerTests {
    /// A request the server never answers is given up after
    /// ``PostgresSettings/operationTimeout``, and the storage carries on.
    @Suite("Requests without an answer")
    struct PostgresTimeoutTests {
        @Test("a server that accepts the connection and never answers: unreachable, no hang")
        func silentServer() async throws {
            let listener = try SilentListener()
            defer { listener.close() }
            var settings = try TestServer.settings()
            settings.port = listener.port
            settings.operationTimeout = .milliseconds(500)
            do {
                _ = try await PostgresHistoryStorage.open(store: "silent", settings: settings)
                Issue.record("opened a store on a server that never answered")
            } catch PostgresStorageError.unreachable(let server, let reason) {
                #expect(server == "127.0.0.1:\(listener.port)")
                #expect(reason.contains("no answer"), "\(reason)")
            }
        }

        @Test("an append held by another session's lock is given up, its outcome unknown; reads go on; the next lands")
        func blockedAppend() async throws {
            var settings = try TestServer.settings()
            settings.operationTimeout = .seconds(1)
            let made = try await TestServer.newStore("blocked")
            try await Peer.open(made).transact { try $0.insert(["n": 1], id: 1, into: "t") }
            // The peer under test gives up after a second. On a machine
            // loaded enough that opening it takes longer, it is tried again.
            var opened: (PostgresHistoryStorage, Peer)?
            for _ in 0..<20 where opened == nil {
                if let storage = try? await PostgresHistoryStorage.open(store: made.store, settings: settings),
                    let peer = try? await Peer.open(storage)
                {
                    opened = (storage, peer)
                }
            }
            let (storage, peer) = try #require(opened)

            // The store's row locked FOR UPDATE: an insert into the log
            // (its foreign key) waits for it; a read does not.
            let blocker = try await TestServer.lockingStoreRow(of: made.store)
            // Both attempts wait on the lock and are given up; the number is
            // still free, so either might yet land: said so, with the ID.
            var pending: UUID?
            do {
                try await peer.transact(maximumAttempts: 2) { try $0.insert(["n": 2], id: 2, into: "t") }
                Issue.record("an append went through another session's lock")
            } catch PeerError.outcomeUnknown(let id, let t, let reason) {
                #expect(t == 2 && reason.contains("no answer"), "\(reason)")
                pending = id
            }
            // Reads are not held by the lock.
            #expect(try await made.latestT() == 1)
            try await blocker.execute("COMMIT")
            await blocker.close()

            // The server may finish a given-up request: whatever is at t 2
            // is that transaction, once. The next commit lands.
            try await Task.sleep(for: .milliseconds(200))
            let report = try await Peer.open(made).transact { try $0.update(1, in: "t", [.set("n", 10)]) }
            let stored = try await made.transactions(from: 1, limit: 10)
            #expect(stored.last?.id == report.transaction.id)
            #expect(stored.count == 2 || (stored.count == 3 && stored[1].id == pending))
            #expect(Set(stored.map(\.id)).count == stored.count)
            await storage.close()
            await made.close()
        }

        @Test("an append the server refuses comes out typed, and the storage goes on (a store removed under it)")
        func refusedAppendIsTyped() async throws {
            let made = try await TestServer.newStore("refused-é☃")
            let storage = try await TestServer.again(made)
            #expect(try await storage.latestT() == 0)
            let remover = try await TestServer.session()
            try await remover.execute("DELETE FROM strata_stores WHERE store = $1", .text(made.store))
            do {
                _ = try await storage.append(Transaction(t: 1, basis: 0))
                Issue.record("an append went in for a store that is gone")
            } catch PostgresStorageError.server(let state, _) {
                #expect(state == "23503", "a foreign key violation, not \(state)")
            }
            // Reads go on, on the same storage.
            #expect(try await storage.latestT() == 0)
            try await remover.execute(
                "INSERT INTO strata_stores (store, created) VALUES ($1, now())",
                .text(made.store)
            )
            await remover.close()
            #expect(try await storage.append(Transaction(t: 1, basis: 0)) == .appended)
            await storage.close()
            await made.close()
        }

        @Test(
            "a cancelled append returns at once and drops its connection; one cancelled before it starts sends nothing",
            .timeLimit(.minutes(1))
        )
        func cancelledAppend() async throws {
            let made = try await TestServer.newStore("cancelled")
            let storage = try await TestServer.again(made)
            #expect(try await storage.append(Transaction(t: 1, basis: 0)) == .appended)

            // Cancelled before it starts: nothing is sent.
            let early = Transaction(t: 2, basis: 1)
            let unsent = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await storage.append(early)
            }
            await #expect(throws: CancellationError.self) { try await unsent.value }

            // Cancelled while the server holds it (a lock): the caller
            // resumes without the answer, whatever the server does with it.
            let blocker = try await TestServer.lockingStoreRow(of: made.store)
            let held = Transaction(t: 2, basis: 1)
            let waiting = Task { try await storage.append(held) }
            try await Task.sleep(for: .milliseconds(300))
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            try await blocker.execute("COMMIT")
            await blocker.close()

            // The server may have stored the held one after all; never the
            // unsent one. The storage carries on, on a new connection.
            try await Task.sleep(for: .milliseconds(200))
            let latest = try await made.latestT()
            let second = try await made.transactionID(at: 2)
            #expect(latest == 1 || (latest == 2 && second == held.id))
            #expect(try await made.transactionID(at: 2) != early.id)
            #expect(try await storage.append(Transaction(t: latest + 1, basis: latest)) == .appended)
            #expect(try await made.latestT() == latest + 1)
            await storage.close()
            await made.close()
        }
    }
}

extension TestServer {
    /// A session of its own on the test server, beside the storages' (to
    /// hold a lock, to change a row under them).
    static func session() async throws -> PostgresSession {
        try await PostgresSession.connect(try settings())
    }

    /// A session holding the row of `store` in strata_stores FOR UPDATE in
    /// an open transaction: an append (the log's foreign key) waits for it,
    /// a read does not. Its COMMIT lets go.
    static func lockingStoreRow(of store: String) async throws -> PostgresSession {
        let session = try await session()
        try await session.execute("BEGIN")
        try await session.execute("SELECT store FROM strata_stores WHERE store = $1 FOR UPDATE", .text(store))
        return session
    }
}

/// A TCP socket on the loopback that listens and never reads: the kernel
/// completes connections into its backlog, and no byte ever comes back.
struct SilentListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        try #require(descriptor >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        try #require(bound == 0 && listen(descriptor, 16) == 0)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        try #require(named == 0)
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
