import Foundation
import Strata
import StrataPostgres

/// Commits per second with 1, 2 and 4 writer processes on one store, beside
/// a raw single-row INSERT + COMMIT loop on the same server (one
/// connection, synchronous commit, a payload of the size of the writers'
/// transactions); medians over rounds that alternate the two.
struct CommitRates {
    let settings: PostgresSettings
    let url: String
    let window: Duration

    static let section = "cluster: commits on PostgreSQL (loopback)"

    /// Rounds of windows; in each, every writer count runs right after a
    /// raw window, so that drift on a shared machine moves both alike.
    let rounds: Int

    func measure() async throws {
        let counts = [1, 2, 4]
        var raw: [Double] = []
        var rates: [[Double]] = Array(repeating: [], count: counts.count)
        for round in 0..<rounds {
            for (position, writers) in counts.enumerated() {
                progress("round \(round + 1) of \(rounds): raw loop, then \(writers) writer process(es)")
                raw.append(try await rawRate())
                rates[position].append(try await writerRate(processes: writers))
            }
        }
        try Figure(
            section: Self.section,
            subject: "raw INSERT + COMMIT, one connection",
            value: median(raw),
            unit: "commits/s"
        ).emit()
        for (position, writers) in counts.enumerated() {
            try Figure(
                section: Self.section,
                subject: "\(writers) writer process\(writers == 1 ? "" : "es"), one store",
                value: median(rates[position]),
                unit: "commits/s",
                baselineName: "raw INSERT + COMMIT",
                baselineValue: median(raw)
            ).emit()
        }
    }

    /// Single-row autocommitted inserts in a loop for `window`.
    func rawRate() async throws -> Double {
        let storage = try await PostgresHistoryStorage.open(
            store: "bench-raw-\(UUID())",
            settings: settings,
            create: true
        )
        await storage.close()
        let session = try await PostgresSession.connect(settings)
        defer { Task { await session.close() } }
        try await session.execute("DROP TABLE IF EXISTS strata_bench_raw")
        try await session.execute("CREATE TABLE strata_bench_raw (id bigint PRIMARY KEY, payload bytea NOT NULL)")
        let payload = PostgresValue.bytes(ClusterBench.Writer.typicalPayload())
        let clock = ContinuousClock()
        let start = clock.now
        var n: Int64 = 0
        while clock.now - start < window {
            try await session.execute("INSERT INTO strata_bench_raw VALUES ($1, $2)", .int64(n), payload)
            n += 1
        }
        let elapsed = clock.now - start
        try await session.execute("DROP TABLE strata_bench_raw")
        return Double(n) / elapsed.seconds
    }

    /// `processes` writer processes committing to one new store for
    /// `window`, started together; their commits per second summed.
    func writerRate(processes: Int) async throws -> Double {
        let store = "bench-writers-\(UUID())"
        let created = try await PostgresHistoryStorage.open(store: store, settings: settings, create: true)
        await created.close()
        let directory = FileManager.default.temporaryDirectory.path + "/strata-cluster-\(UUID())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var running: [(Process, Pipe)] = []
        defer { for (process, _) in running where process.isRunning { process.terminate() } }
        for index in 0..<processes {
            let process = Process()
            let output = Pipe()
            process.executableURL = executable
            process.arguments = [
                "writer", "--url", url, "--store", store, "--index", String(index), "--directory", directory,
                "--milliseconds", String(window.milliseconds),
            ]
            process.standardOutput = output
            try process.run()
            running.append((process, output))
        }
        // All connected and caught up, then started together.
        while (0..<processes).contains(where: { !FileManager.default.fileExists(atPath: "\(directory)/ready-\($0)") }) {
            guard running.allSatisfy({ $0.0.isRunning }) else { throw ClusterBenchError.writerFailed }
            try await Task.sleep(for: .milliseconds(5))
        }
        guard FileManager.default.createFile(atPath: directory + "/go", contents: nil) else {
            throw ClusterBenchError.writerFailed
        }
        var total = 0.0
        var commits: Int64 = 0
        for (process, output) in running {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let fields = text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            guard process.terminationStatus == 0, fields.count == 2, let count = Int64(fields[0]),
                let rate = Double(fields[1])
            else { throw ClusterBenchError.writerFailed }
            total += rate
            commits += count
        }
        // Every commit the writers counted is stored, and nothing else.
        let check = try await PostgresHistoryStorage.open(store: store, settings: settings)
        let stored = try await check.latestT()
        await check.close()
        guard stored == commits, commits > 0 else {
            throw ClusterBenchError.verificationFailed(
                "the writers acknowledged \(commits) commits; \(stored) are stored"
            )
        }
        return total
    }
}

enum ClusterBenchError: Error, CustomStringConvertible {
    case writerFailed
    case verificationFailed(String)

    var description: String {
        switch self {
        case .writerFailed: return "a writer process failed"
        case .verificationFailed(let what): return "verification failed: \(what)"
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var milliseconds: Int { Int(seconds * 1_000) }
}
