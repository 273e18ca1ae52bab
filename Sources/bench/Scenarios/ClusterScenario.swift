import Foundation

/// `cluster`: peers sharing one history on PostgreSQL. Commits per second
/// with 1, 2 and 4 writer processes beside a raw INSERT + COMMIT loop on the
/// same server; visibility latency from one peer's commit to another's
/// value; a late peer catching up 100k transactions beside applying them in
/// memory; cold start at 100k and 1M songs from the server beside a file
/// store's open.
///
/// The measurements run in `strata-cluster-bench` (built beside the runner;
/// it is also the writer processes), so that the runner builds without
/// StrataPostgres and libpq. They need a server: `make bench` starts a throwaway one
/// and passes its URL in `STRATA_TEST_POSTGRES_URL`; without it the
/// scenario says so and measures nothing.
struct ClusterScenario {
    static let name = "cluster"

    func run(_ context: BenchContext, sizes: [Int]) throws {
        let executable = Bundle.main.executableURL!.deletingLastPathComponent()
            .appendingPathComponent("strata-cluster-bench").path
        guard let url = ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_URL"],
            FileManager.default.isExecutableFile(atPath: executable)
        else {
            print(
                "\n## cluster: skipped: no PostgreSQL server or no \(executable) "
                    + "(`make bench` builds it and starts a server)"
            )
            return
        }
        context.progress.update("cluster: on PostgreSQL")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        let songs = sizes.map(String.init).joined(separator: ",")
        process.arguments =
            ["measure", "--url", url, "--songs", songs, "--seed", String(context.seed)]
            + (context.quick ? ["--quick", "--transactions", "20000"] : [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError.verificationFailed("cluster: strata-cluster-bench exited \(process.terminationStatus)")
        }
        var sections: [String] = []
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            // The same figure the runner's report keeps, written by the other program.
            let figure = try JSONDecoder().decode(Figure.self, from: Data(line))
            guard figure.scenario == Self.name else {
                throw BenchError.verificationFailed("cluster: a figure of scenario \(figure.scenario) came back")
            }
            context.report.add(figure)
            if !sections.contains(figure.section) { sections.append(figure.section) }
        }
        guard !sections.isEmpty else { throw BenchError.verificationFailed("cluster: no figures came back") }
        for section in sections { context.report.printSection(section) }
    }
}
