import ArgumentParser
import Foundation
import StrataPostgres

/// The `cluster` scenario's measurements on a PostgreSQL server, run by the
/// bench runner (`bench --scenario cluster`), which prints and gates them:
///
///     strata-cluster-bench measure --url postgres://… [--quick] [--songs 100k,1M]
///
/// prints one JSON figure a line on standard output, progress on standard
/// error. `writer` is one of the writer processes `measure` starts.
@main
struct ClusterBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-cluster-bench",
        abstract: "Strata's cluster measurements on PostgreSQL (run by `bench --scenario cluster`).",
        subcommands: [Measure.self, Writer.self]
    )
}

/// One measured figure, in the shape of the runner's `Figure` (which
/// decodes it): the runner is another program, so the type is not shared.
struct Figure: Codable {
    var scenario = "cluster"
    var section: String
    var subject: String
    var value: Double
    var unit: String
    var baselineName: String?
    var baselineValue: Double?
    var note: String?

    /// Writes the figure as one JSON line on standard output.
    func emit() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var line = try encoder.encode(self)
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardOutput.write(line)
    }
}

/// Progress for people, on standard error.
func progress(_ message: String) {
    FileHandle.standardError.write(Data("cluster: \(message)\n".utf8))
}

/// The median of `values` (0 when empty).
func median(_ values: [Double]) -> Double {
    percentile(values, 0.5)
}

/// The `p` quantile of `values`, nearest rank (0 when empty).
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

extension ClusterBench {
    struct Measure: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run every measurement; JSON figures on stdout.")

        @Option(help: "The server (postgres:// URL).") var url: String
        @Option(help: "Song counts for the cold start (default 100k,1M; quick: 100k).") var songs: String?
        @Option(help: "Transactions a late peer catches up (default 100k).") var transactions: Int = 100_000
        @Flag(help: "Shorter runs, for CI and quick checks.") var quick = false
        @Option(help: "Seed of the generated library.") var seed: UInt64 = 42
        @Option(help: "Only these parts (commits, visibility, catch-up, cold-start; default all).")
        var only: String?

        func run() async throws {
            let settings = try PostgresSettings(url: url)
            let parts = Set((only ?? "commits,visibility,catch-up,cold-start").split(separator: ",").map(String.init))
            if parts.contains("commits") {
                try await CommitRates(
                    settings: settings,
                    url: url,
                    window: quick ? .seconds(1) : .seconds(3),
                    rounds: quick ? 2 : 3
                ).measure()
            }
            if parts.contains("visibility") {
                try await Visibility(settings: settings, rounds: quick ? 100 : 400).measure()
            }
            if parts.contains("catch-up") { try await CatchUp(settings: settings, count: transactions).measure() }
            let sizes = try songs.map(Self.counts) ?? (quick ? [100_000] : [100_000, 1_000_000])
            for size in sizes where parts.contains("cold-start") {
                try await ColdStart(settings: settings, songs: size, seed: seed, rounds: quick ? 3 : 5).measure()
            }
        }

        static func counts(_ text: String) throws -> [Int] {
            try text.split(separator: ",").map { part in
                let lower = part.lowercased()
                let (digits, scale) =
                    lower.hasSuffix("m")
                    ? (lower.dropLast(), 1_000_000) : lower.hasSuffix("k") ? (lower.dropLast(), 1_000) : (lower[...], 1)
                guard let n = Int(digits), n > 0 else { throw ValidationError("--songs: \(part) is not a count") }
                return n * scale
            }
        }
    }
}
