import ArgumentParser
import Foundation
import Strata

/// Why a bench run stopped.
enum BenchError: Error, CustomStringConvertible {
    case unknownScenario(String, known: [String])
    case verificationFailed(String)
    case gatesFailed([String])

    var description: String {
        switch self {
        case .unknownScenario(let name, let known):
            return "unknown scenario '\(name)'; known: \(known.joined(separator: ", "))"
        case .verificationFailed(let message):
            return "verification failed: \(message)"
        case .gatesFailed(let names):
            return "perf gates failed: \(names.joined(separator: "; "))"
        }
    }
}

/// What every scenario gets: options, the seed, the report and progress.
struct BenchContext {
    var quick: Bool
    /// `--transactions`: the history length of the rebuild scenario.
    var transactions: Int?
    /// `--memory-budget`: the rebuild scenario's store budget (default: the store's).
    var memoryBudget: MemoryBudget?
    var seed: UInt64
    var report: Report
    var progress: Progress
}

@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Strata's benchmark runner: every figure beside a baseline measured in the same run."
    )

    static let scenarios: [String] = [
        CodecScenario.name, MapScenario.name, VectorScenario.name, CoreScenario.name, StoreScenario.name,
        RebuildScenario.name, QueryScenario.name, TypedScenario.name, CLIScenario.name, ClusterScenario.name,
    ]

    @Option(help: "Comma-separated scenarios to run (\(BenchCommand.scenarios.joined(separator: ", "))).")
    var scenario: String = BenchCommand.scenarios.joined(separator: ",")

    @Option(help: "Comma-separated record counts for the collection scenarios (10k, 100k, 1M).")
    var records: String?

    @Option(help: "Transactions in the rebuild scenario's history (default 100k; quick: 20k).")
    var transactions: String?

    @Option(
        help:
            "The rebuild scenario's memory budget: a fraction of the current value (0.5), bytes (64MB) or 'unlimited' (default: the store's default)."
    )
    var memoryBudget: String?

    @Flag(help: "Smaller inputs and fewer samples, for CI and quick checks.")
    var quick = false

    @Option(help: "Seed for every generated workload.")
    var seed: UInt64 = 42

    @Flag(help: "Check the same-run ratio floors after the run and exit non-zero when one fails.")
    var gate = false

    @Option(help: "Where to write the figures as JSON (default perf/results/latest.json; 'none' to skip).")
    var json: String = "perf/results/latest.json"

    /// The record counts to run: `--records`, else 10k/100k/1M (quick: 100k).
    func sizes() throws -> [Int] {
        guard let records else { return quick ? [100_000] : [10_000, 100_000, 1_000_000] }
        return try records.split(separator: ",").map { try Self.count(String($0), option: "--records") }
    }

    /// Reads a count written as 10k, 1M or a plain number.
    static func count(_ text: String, option: String) throws -> Int {
        let lower = text.trimmingCharacters(in: .whitespaces).lowercased()
        let scale = lower.hasSuffix("m") ? 1_000_000 : (lower.hasSuffix("k") ? 1_000 : 1)
        guard let number = Int(lower.trimmingCharacters(in: CharacterSet(charactersIn: "km"))), number > 0 else {
            throw ValidationError("\(option): cannot read '\(text)' (use 10k, 100k, 1M or a number)")
        }
        return number * scale
    }

    /// Reads a memory budget: "unlimited", a fraction ("0.5") or bytes ("64MB").
    static func budget(_ text: String) throws -> MemoryBudget {
        let lower = text.trimmingCharacters(in: .whitespaces).lowercased()
        if lower == "unlimited" { return .unlimited }
        if lower.hasSuffix("mb"), let megabytes = Double(lower.dropLast(2)), megabytes >= 0 {
            return .bytes(Int(megabytes * 1e6))
        }
        guard let fraction = Double(lower), fraction >= 0 else {
            throw ValidationError("--memory-budget: cannot read '\(text)' (use 0.5, 64MB or unlimited)")
        }
        return .fraction(fraction)
    }

    func run() async throws {
        let selected = scenario.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for name in selected where !Self.scenarios.contains(name) {
            throw BenchError.unknownScenario(name, known: Self.scenarios)
        }
        let report = Report()
        let context = BenchContext(
            quick: quick,
            transactions: try transactions.map { try Self.count($0, option: "--transactions") },
            memoryBudget: try memoryBudget.map(Self.budget),
            seed: seed,
            report: report,
            progress: Progress(enabled: isatty(STDERR_FILENO) != 0)
        )
        print("# Strata bench — seed \(seed)\(quick ? ", quick" : "")")
        if !MemoryProbe.hasAllocatorStatistics {
            print("  (jemalloc statistics unavailable: memory figures will read -1)")
        }
        // Which scenario recorded each gate, for a second measurement.
        var gateScenarios: [String] = []
        for name in selected {
            try await runScenario(name, context)
            gateScenarios += Array(repeating: name, count: report.gates.count - gateScenarios.count)
        }
        if json != "none" {
            let url = URL(fileURLWithPath: json)
            try report.writeJSON(
                to: url,
                metadata: ["seed": String(seed), "quick": String(quick), "scenarios": selected.joined(separator: ",")]
            )
            print("\nfigures written to \(url.path)")
        }
        if gate && !report.printGates() {
            let failed = try await measureFailedGatesAgain(report, scenarios: gateScenarios, context: context)
            if !failed.isEmpty {
                print("\nperf gates failed in both measurements: \(failed.joined(separator: "; "))")
                // Before the error on stderr: CI shows the tail of a log
                // holding both, where block-buffered tables would land last.
                fflush(nil)
                throw BenchError.gatesFailed(failed)
            }
        }
    }

    func runScenario(_ name: String, _ context: BenchContext) async throws {
        switch name {
        case CodecScenario.name: try CodecScenario().run(context)
        case MapScenario.name: try MapScenario().run(context, sizes: try sizes())
        case VectorScenario.name: try VectorScenario().run(context, sizes: try sizes())
        case CoreScenario.name: try CoreScenario().run(context, sizes: try sizes())
        case StoreScenario.name: try await StoreScenario().run(context, sizes: try sizes())
        case RebuildScenario.name: try await RebuildScenario().run(context, sizes: try sizes())
        case QueryScenario.name: try await QueryScenario().run(context, sizes: try sizes())
        case TypedScenario.name: try await TypedScenario().run(context, sizes: try sizes())
        case CLIScenario.name: try await CLIScenario().run(context, sizes: try sizes())
        case ClusterScenario.name: try ClusterScenario().run(context, sizes: try sizes())
        default: throw BenchError.unknownScenario(name, known: Self.scenarios)
        }
    }

    /// Runs each scenario with a failed gate once more and returns the
    /// gates that fail again. The machines are shared: one slow window
    /// can push a timing ratio past its limit, while a regression fails
    /// both measurements. Both tables are printed.
    func measureFailedGatesAgain(
        _ report: Report,
        scenarios: [String],
        context: BenchContext
    ) async throws -> [String] {
        let failedFirst = report.gates.indices.filter { !report.gates[$0].passed }
        let names = Set(failedFirst.map { report.gates[$0].name })
        var again = context
        again.report = Report()
        var rerun: [String] = []
        for index in failedFirst where !rerun.contains(scenarios[index]) { rerun.append(scenarios[index]) }
        print(
            "\n## second measurement of \(rerun.joined(separator: ", ")) (gates failed: \(names.sorted().joined(separator: "; ")))"
        )
        for name in rerun { try await runScenario(name, again) }
        let retried = again.report.gates.filter { names.contains($0.name) }
        _ = again.report.printGates(only: names)
        // A gate the second run did not record (a scenario that measures
        // it only sometimes) keeps its first result.
        return names.sorted().filter { name in
            guard let second = retried.first(where: { $0.name == name }) else { return true }
            return !second.passed
        }
    }
}
