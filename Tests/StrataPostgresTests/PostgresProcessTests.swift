import Foundation
import Strata
import StrataPostgres
import Testing

/// Writer processes on one store, one killed with SIGKILL mid-commit: what
/// was acknowledged is stored once, the numbers run without a gap, every
/// peer ends at the same value.
@Suite("Writer processes on PostgreSQL", .serialized)
struct PostgresProcessTests {
    /// The writer executable, built beside the test bundle.
    static var writerPath: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("StrataPostgresWriter").path
    }

    struct Writer {
        let process: Process
        let acks: String

        /// The (transaction ID, t) pairs acknowledged so far: whole lines only.
        func acknowledged() -> [(UUID, Int64)] {
            guard let text = try? String(contentsOfFile: acks, encoding: .utf8) else { return [] }
            return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { line in
                let parts = line.split(separator: " ")
                guard parts.count == 2, let id = UUID(uuidString: String(parts[0])), let t = Int64(parts[1]) else {
                    return nil
                }
                return (id, t)
            }
        }
    }

    static func start(_ store: String, writer: Int, count: Int, directory: String) throws -> Writer {
        let url = try #require(ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_URL"], "run with make test")
        let acks = directory + "/writer-\(writer).acks"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: writerPath)
        process.arguments = [url, store, String(writer), String(count), acks]
        // Its messages go to a file: a pipe no one drains would stop it.
        let messages = directory + "/writer-\(writer).messages"
        FileManager.default.createFile(atPath: messages, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: messages)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return Writer(process: process, acks: acks)
    }

    /// Waits (polling) until `writer` has acknowledged `count` commits.
    static func waitFor(_ writer: Writer, acknowledging count: Int) async throws {
        while writer.acknowledged().count < count {
            guard writer.process.isRunning else { return }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Every acknowledged commit stored once at its t; t = 1…n; a fresh
    /// peer's value is the replay. Returns the stored transactions.
    static func checkHistory(_ storage: PostgresHistoryStorage, acknowledged: [(UUID, Int64)]) async throws
        -> [Transaction]
    {
        let stored = try await storage.transactions(from: 1, limit: .max)
        #expect(stored.map(\.t) == (0..<stored.count).map { Int64($0 + 1) }, "numbers with a gap")
        #expect(Set(stored.map(\.id)).count == stored.count, "a transaction stored twice")
        for (id, t) in acknowledged {
            #expect(
                t >= 1 && t <= Int64(stored.count) && stored[Int(t) - 1].id == id,
                "acknowledged \(id) at \(t) is not there"
            )
        }
        var value = Database()
        for transaction in stored { value = try apply(value, transaction) }
        let fresh = try await Peer.open(try await TestServer.again(storage))
        #expect(fresh.current == value)
        return stored
    }

    @Test("three writer processes, one SIGKILLed mid-commit: every acknowledged commit stored once, no gap")
    func killedWriter() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.writerPath), "missing \(Self.writerPath)")
        let storage = try await TestServer.newStore("processes")
        let directory = Self.temporaryDirectory("processes")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let steady = try (0..<2).map { try Self.start(storage.store, writer: $0, count: 60, directory: directory) }
        let doomed = try Self.start(storage.store, writer: 2, count: 1_000_000, directory: directory)
        try await Self.waitFor(doomed, acknowledging: 15 + Int.random(in: 0..<20))
        kill(doomed.process.processIdentifier, SIGKILL)
        doomed.process.waitUntilExit()
        for writer in steady {
            writer.process.waitUntilExit()
            #expect(writer.process.terminationStatus == 0)
        }
        let acknowledged = (steady + [doomed]).flatMap { $0.acknowledged() }
        let stored = try await Self.checkHistory(storage, acknowledged: acknowledged)
        let value = try await Peer.open(try await TestServer.again(storage)).current
        // The steady writers' records all; the killed one's acknowledged ones
        // at least (one more may have been stored unanswered).
        let rows = value[table: "rows"]
        #expect(rows.count == stored.count)
        for writer in 0..<2 {
            #expect((0..<60).allSatisfy { rows.records[RecordID(writer * 1_000_000 + $0)] != nil }, "writer \(writer)")
        }
        #expect(doomed.acknowledged().count <= rows.count - 120)
        await storage.close()
    }

    static func temporaryDirectory(_ label: String) -> String {
        let path = FileManager.default.temporaryDirectory.path + "/strata-pg-\(label)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
