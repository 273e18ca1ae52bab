import Foundation
import Strata
import StrataPostgres
import Testing

extension PostgresServerTests {
    /// The client under the storage, through its public session: every
    /// value type both ways, the server's refusals, requests given up.
    @Suite("Sessions", .serialized)
    struct PostgresSessionTests {
        @Test("every value type goes to the server and back unchanged, at the sizes records have")
        func valuesRoundTrip() async throws {
            let session = try await TestServer.session()
            defer { Task { await session.close() } }
            var large = [UInt8](repeating: 0, count: (5 << 20) + 3)
            for index in large.indices { large[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 7) }
            let values: [PostgresValue] = [
                .bool(true), .bool(false),
                .int32(.min), .int32(-1), .int32(.max),
                .int64(.min), .int64(0), .int64(.max),
                .text(""), .text("é☃𝄞 — \u{1F600}"), .text(String(repeating: "ß✓", count: 40_000)),
                .bytes([]), .bytes(Array(0...255)), .bytes(Array(large.prefix(4_097))), .bytes(large),
                .uuid(UUID()),
                .date(Date(timeIntervalSince1970: 1_765_000_000.123456)),
                .date(Date(timeIntervalSince1970: -1_000_000.5)),
            ]
            for value in values {
                let rows = try await session.execute("SELECT $1", value)
                #expect(rows.rows.count == 1 && rows.rows[0].count == 1)
                guard case .date(let sent) = value else {
                    #expect(rows.scalar == value, "\(String(describing: value).prefix(80))")
                    continue
                }
                // Microseconds on the server.
                guard case .date(let read)? = rows.scalar else {
                    Issue.record("a timestamptz read back as \(String(describing: rows.scalar))")
                    continue
                }
                #expect(abs(read.timeIntervalSince(sent)) < 1e-6)
            }
            let nulls = try await session.execute("SELECT NULL::integer AS n, 7::smallint AS s")
            #expect(nulls.columnNames == ["n", "s"])
            #expect(nulls.rows == [[nil, .int32(7)]])
            let many = try await session.execute("SELECT g, g::text FROM generate_series(1, 10000) AS g")
            #expect(many.rows.count == 10_000)
            #expect(many.rows.last == [.int32(10_000), .text("10000")])
        }

        @Test("a refused statement is typed with its SQLSTATE, and the session goes on")
        func refusals() async throws {
            let session = try await TestServer.session()
            defer { Task { await session.close() } }
            await #expect(
                throws: PostgresStorageError.server(sqlState: "42601", message: "syntax error at or near \"SELEC\"")
            ) {
                try await session.execute("SELEC 1")
            }
            await #expect(throws: PostgresStorageError.self) {
                try await session.execute("SELECT $1::integer", .text("x"))
            }
            #expect(try await session.execute("SELECT 1::bigint").scalar == .int64(1))
            // A text parameter with a NUL is refused by the server, not cut short.
            await #expect(throws: PostgresStorageError.self) {
                try await session.execute("SELECT $1", .text("a\u{0}b"))
            }
            #expect(!session.isClosed)
            await session.close()
            #expect(session.isClosed)
            await #expect(throws: PostgresStorageError.self) { try await session.execute("SELECT 1") }
        }

        @Test("a login the server refuses, and a statement without an answer in time")
        func loginAndTimeout() async throws {
            var settings = try TestServer.settings()
            settings.user = "no_such_role_\(UInt32.random(in: 0...UInt32.max))"
            let server = "\(settings.host):\(settings.port)"
            await #expect(throws: PostgresStorageError.authenticationFailed(server: server)) {
                try await PostgresSession.connect(settings)
            }
            settings = try TestServer.settings()
            settings.operationTimeout = .milliseconds(300)
            let session = try await PostgresSession.connect(settings)
            let clock = ContinuousClock()
            let start = clock.now
            do {
                try await session.execute("SELECT pg_sleep(30)")
                Issue.record("a 30-second statement returned within a 300 ms limit")
            } catch PostgresStorageError.unreachable(_, let reason) {
                #expect(reason.contains("no answer"), "\(reason)")
            }
            // Given up, not waited for (a hang guard, far above the limit).
            #expect(clock.now - start < .seconds(20))
            #expect(session.isClosed)
        }

        @Test(
            "message, metadata and changes of 0 B to 3 MB read back whole, across a reopen per commit and a snapshot"
        )
        func recordSizes() async throws {
            let made = try await TestServer.newStore("sizes")
            let sizes = [0, 1, 4_095, 4_096, 4_097, 65_536, 1 << 20, (3 << 20) + 1]
            func text(_ size: Int, _ mark: String) -> String {
                // Two-byte characters, and a one-byte mark for odd sizes.
                String(repeating: "é", count: size / 2) + (size % 2 == 1 ? mark : "")
            }
            var last: Database?
            for (index, size) in sizes.enumerated() {
                // Every commit on a storage and peer opened anew.
                let storage = try await TestServer.again(made)
                let peer = try await Peer.open(storage)
                try await peer.transact(message: text(size, "m"), metadata: ["note": .string(text(size, "n"))]) {
                    try $0.insert(["text": .string(text(size, "x"))], id: RecordID(index), into: "sizes")
                }
                if index == sizes.count / 2 { try await peer.snapshot() }
                last = peer.current
                await storage.close()
            }
            // The log, read by a storage of its own, holds each commit whole.
            let stored = try await TestServer.again(made).transactions(from: 1, limit: 100)
            #expect(stored.map(\.t) == Array(1...Int64(sizes.count)))
            for (transaction, size) in zip(stored, sizes) {
                #expect(transaction.message == text(size, "m"))
                #expect(transaction.metadata["note"] == .string(text(size, "n")))
            }
            // A peer opened now starts from the snapshot and reads the tail.
            let reader = try await Peer.open(try await TestServer.again(made))
            #expect(reader.current == last)
            for (index, size) in sizes.enumerated() {
                let record = try #require(reader.current.record(RecordID(index), in: "sizes"))
                #expect(record["text"]?.stringValue?.utf8.count == size)
            }
            #expect(try await made.snapshotBases() == [Int64(sizes.count / 2 + 1)])
            #expect(try await made.latestT() == Int64(sizes.count))
            await made.close()
        }

        @Test(
            "what the client does not speak or the protocol cannot carry is refused, without a hang",
            .timeLimit(.minutes(1))
        )
        func unsupported() async throws {
            let session = try await TestServer.session()
            defer { Task { await session.close() } }
            // PostgreSQL's infinities, both ways.
            let infinite = try await session.execute("SELECT 'infinity'::timestamptz, '-infinity'::timestamptz")
            #expect(infinite.rows == [[.date(.distantFuture), .date(.distantPast)]])
            let far = try await session.execute("SELECT $1", .date(Date(timeIntervalSince1970: .infinity)))
            #expect(far.scalar == .date(.distantFuture))
            // More parameters than the protocol numbers: refused before
            // sending, the session goes on.
            let many = (0..<70_000).map { PostgresValue.int64(Int64($0)) }
            let placeholders = (1...70_000).map { "$\($0)" }.joined(separator: ", ")
            await #expect(
                throws: PostgresStorageError.server(
                    sqlState: "54000",
                    message: "70000 parameters in one statement (at most 65,535)"
                )
            ) {
                try await session.execute("SELECT \(placeholders)", parameters: many)
            }
            #expect(try await session.execute("SELECT 2::bigint").scalar == .int64(2))
            // COPY is not spoken: refused, the session closed, no spin.
            await #expect(throws: PostgresStorageError.self) { try await session.execute("COPY (SELECT 1) TO STDOUT") }
            #expect(session.isClosed)
        }

        @Test(
            "close ends a running statement; a cancelled caller waiting its turn is answered at once",
            .timeLimit(.minutes(1))
        )
        func closeAndQueuedCancel() async throws {
            let clock = ContinuousClock()
            let session = try await TestServer.session()
            let running = Task { try await session.execute("SELECT pg_sleep(2)") }
            try await Task.sleep(for: .milliseconds(300))
            // Queued behind the sleep on the same session, then cancelled.
            let queued = Task { try await session.execute("SELECT 1") }
            try await Task.sleep(for: .milliseconds(100))
            let cancelled = clock.now
            queued.cancel()
            await #expect(throws: CancellationError.self) { try await queued.value }
            #expect(clock.now - cancelled < .seconds(1))
            // The running statement was not disturbed by that.
            _ = try await running.value

            let sleeping = Task { try await session.execute("SELECT pg_sleep(30)") }
            try await Task.sleep(for: .milliseconds(300))
            let closing = clock.now
            await session.close()
            #expect(clock.now - closing < .seconds(10))
            await #expect(throws: PostgresStorageError.self) { try await sleeping.value }
        }

        @Test("a connection the server closed while idle: the next write goes on a new one; nothing is left open")
        func serverClosedIdleConnection() async throws {
            let admin = try await TestServer.session()
            defer { Task { await admin.close() } }
            let others = "application_name = 'strata' AND pid <> pg_backend_pid()"
            let made = try await TestServer.newStore("idle")
            #expect(try await made.append(Transaction(t: 1, basis: 0)) == .appended)
            let listening = await made.newTransactions()
            var updates = listening.makeAsyncIterator()
            #expect(await updates.next() == 1)
            try await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE \(others)")
            try await Task.sleep(for: .milliseconds(300))
            // Nothing of the write was sent on the dead connection: it is
            // sent once, on a new one, and lands.
            #expect(try await made.append(Transaction(t: 2, basis: 1)) == .appended)
            #expect(try await made.latestT() == 2)
            // The listener's connection was closed too: its stream ended.
            #expect(await updates.next() == nil)
            await made.close()
            // Every connection of the storage is gone from the server.
            var left: Int64 = -1
            for _ in 0..<50 {
                left =
                    try await admin.execute("SELECT count(*) FROM pg_stat_activity WHERE \(others)").scalar?.int64 ?? -1
                if left == 0 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(left == 0)
        }

        @Test(
            "a host name is resolved under the time limit: localhost connects (each address tried), an unknown name is unreachable"
        )
        func hostNames() async throws {
            var settings = try TestServer.settings()
            settings.host = "localhost"
            let session = try await PostgresSession.connect(settings)
            #expect(try await session.execute("SELECT 1::bigint").scalar == .int64(1))
            await session.close()
            settings.host = "no-such-host.invalid"
            settings.operationTimeout = .seconds(10)
            do {
                _ = try await PostgresSession.connect(settings)
                Issue.record("connected to a host name that does not exist")
            } catch PostgresStorageError.unreachable(let server, let reason) {
                #expect(server == "no-such-host.invalid:\(settings.port)")
                #expect(reason.contains("no-such-host.invalid"), "\(reason)")
            }
        }

        @Test(
            "a storage call cancelled while another holds the connection is answered at once; a read out of time is not repeated",
            .timeLimit(.minutes(1))
        )
        func storageQueue() async throws {
            let clock = ContinuousClock()
            var settings = try TestServer.settings()
            settings.operationTimeout = .seconds(2)
            let made = try await TestServer.newStore("queue")
            let storage = try await PostgresHistoryStorage.open(store: made.store, settings: settings)
            #expect(try await storage.append(Transaction(t: 1, basis: 0)) == .appended)
            // An append held by a lock holds the storage's connection; a
            // read queued behind it and cancelled is answered at once.
            let blocker = try await TestServer.lockingStoreRow(of: made.store)
            let held = Task { try await storage.append(Transaction(t: 2, basis: 1)) }
            try await Task.sleep(for: .milliseconds(200))
            let queued = Task { try await storage.latestT() }
            try await Task.sleep(for: .milliseconds(100))
            let cancelled = clock.now
            queued.cancel()
            await #expect(throws: CancellationError.self) { try await queued.value }
            #expect(clock.now - cancelled < .seconds(1))
            try await blocker.execute("COMMIT")
            await blocker.close()
            _ = try? await held.value

            // A read that gets no answer in time fails after one limit,
            // not two (it is not sent again).
            let locker = try await TestServer.session()
            try await locker.execute("BEGIN")
            try await locker.execute("LOCK TABLE strata_log IN ACCESS EXCLUSIVE MODE")
            let start = clock.now
            do {
                _ = try await storage.latestT()
                Issue.record("a read went through an exclusive lock")
            } catch PostgresStorageError.unreachable(_, let reason) {
                #expect(reason.contains("no answer"), "\(reason)")
            }
            #expect(clock.now - start < .milliseconds(3_500))
            try await locker.execute("ROLLBACK")
            await locker.close()

            // close() cuts off a call that waits on the server: it says so.
            let again = try await TestServer.lockingStoreRow(of: made.store)
            let next = try await storage.latestT()
            let cutOff = Task { try await storage.append(Transaction(t: next + 1, basis: next)) }
            try await Task.sleep(for: .milliseconds(200))
            await storage.close()
            await #expect(throws: PostgresStorageError.cutOff(store: made.store)) { try await cutOff.value }
            try await again.execute("ROLLBACK")
            await again.close()
            await made.close()
        }

        @Test("settings and values at their edges: an IPv6 URL, char columns")
        func edges() async throws {
            #expect(try PostgresSettings(url: "postgres://app@[::1]:6543/music").host == "::1")
            #expect(try PostgresSettings(url: "postgres://app@[::1]:6543/music").port == 6543)
            let session = try await TestServer.session()
            #expect(try await session.execute("SELECT 'x'::char, 'ab'::char(3)").rows == [[.text("x"), .text("ab ")]])
            await session.close()
            let server = "\(session.settings.host):\(session.settings.port)"
            await #expect(throws: PostgresStorageError.sessionClosed(server: server)) {
                try await session.execute("SELECT 1")
            }
        }

        @Test("a snapshot read while another peer replaces it is one version or the other, never a mix")
        func snapshotReplacedWhileRead() async throws {
            var random = SystemRandomNumberGenerator()
            func value(_ label: String) throws -> Database {
                var builder = TransactionBuilder(on: Database())
                for n in 0..<36 {
                    let blob = (0..<80_000).map { _ in UInt8.random(in: 0...255, using: &random) }
                    try builder.insert(["blob": .bytes(blob), "label": .string(label)], id: RecordID(n), into: "big")
                }
                return try apply(Database(), builder.transaction())
            }
            let versions = [try value("one"), try value("two")]
            let writer = try await TestServer.newStore("replaced")
            let reader = try await TestServer.again(writer)
            try await writer.putSnapshot(versions[0])
            let replacing = Task {
                for n in 1...16 { try await writer.putSnapshot(versions[n % 2]) }
            }
            var reads = 0
            while !replacing.isCancelled, reads < 40 {
                let read = try #require(try await reader.snapshot(at: versions[0].basis))
                #expect(read == versions[0] || read == versions[1])
                reads += 1
            }
            try await replacing.value
            await writer.close()
            await reader.close()
        }
    }
}
