import Foundation
import PersistentCollections
import Strata
import Testing

/// The laws everything else trusts, over seeded random runs:
///
///     apply(P, flatten(run)) == run.reduce(P, apply)
///     flatten is associative
///     apply(apply(P, T), inverse(T)) == P
///
/// Runs create and drop indexes too (unique ones among them), and every
/// value's indexes are checked against indexes built from scratch.
@Suite("Transaction algebra")
struct TransactionAlgebraTests {
    /// 10,000 runs as the code ships (`make test`'s optimized pass), 2,000
    /// in a debug build, where they were a fifth of the whole suite's CPU;
    /// `STRATA_LAW_RUNS` sets another number (a deeper search).
    static let runs: Int = {
        if let text = ProcessInfo.processInfo.environment["STRATA_LAW_RUNS"], let runs = Int(text), runs > 0 {
            return runs
        }
        #if DEBUG
        return 2_000
        #else
        return 10_000
        #endif
    }()
    static let chunks = 4

    /// The seeds in four chunks, so the chunks run in parallel.
    @Test("flatten law, associativity and inverse law over random runs (10,000 optimized)", arguments: 0..<chunks)
    func laws(chunk: Int) throws {
        var failures = 0
        let size = UInt64((Self.runs + Self.chunks - 1) / Self.chunks)
        for seed in (UInt64(chunk) * size)..<(UInt64(chunk + 1) * size) {
            if let problem = try Self.check(seed: seed) {
                failures += 1
                Issue.record("seed \(seed): \(problem)")
                if failures >= 3 { return }
            }
        }
    }

    /// Checks one seed; returns a description of the first broken law with
    /// the shortest failing prefix of the run, or nil.
    static func check(seed: UInt64) throws -> String? {
        var generator = RunGenerator(seed: seed)
        let base = generator.base()
        let (run, values) = generator.run(from: base, maxLength: 50)
        // Every transaction applies to the value before it and gives the next.
        for (index, transaction) in run.enumerated() {
            guard let after = try? apply(values[index], transaction), after == values[index + 1] else {
                return "transaction \(index) does not reproduce its own value: \(transaction.changes)"
            }
        }
        // The law on the whole run; on failure, the shortest failing prefix
        // is the reproduction.
        func lawHolds(_ length: Int) -> Bool {
            guard let combined = try? flatten(run[..<length]), let applied = try? apply(base, combined) else {
                return false
            }
            return applied == values[length]
        }
        if !lawHolds(run.count) {
            let length = (1...run.count).first { !lawHolds($0) } ?? run.count
            let prefix = Array(run[..<length])
            return "flatten law broken; shortest failing run has \(length) transactions:\n"
                + prefix.map { "  t\($0.t): \($0.changes)" }.joined(separator: "\n")
                + "\n  combined: \((try? flatten(prefix))?.changes.description ?? "does not combine")"
        }
        let combined = try flatten(run)
        guard let restored = try? apply(values[run.count], inverse(combined)), restored == base else {
            return "inverse law broken for the combined run of \(run.count)"
        }
        // Indexes kept in step by apply equal indexes built from scratch.
        try apply(base, combined)._invariantCheck()
        restored._invariantCheck()
        for value in values { value._invariantCheck() }
        // Associativity at a random split point, and on three pieces.
        if run.count >= 2 {
            let cut = 1 + generator.random.int(below: run.count - 1)
            let whole = try flatten(run)
            let pieces = try flatten([try flatten(run[..<cut]), try flatten(run[cut...])])
            guard pieces.changes == whole.changes, pieces.indexChanges == whole.indexChanges,
                pieces.covers == whole.covers, pieces.t == whole.t, pieces.basis == whole.basis
            else {
                return "flatten is not associative at cut \(cut) of \(run.count)"
            }
        }
        if run.count >= 3 {
            let a = run[..<1]
            let b = run[1..<2]
            let c = run[2...]
            let left = try flatten([try flatten([try flatten(a), try flatten(b)]), try flatten(c)])
            let right = try flatten([try flatten(a), try flatten([try flatten(b), try flatten(c)])])
            guard left.changes == right.changes, left.indexChanges == right.indexChanges, left.covers == right.covers
            else {
                return "flatten is not associative over three pieces"
            }
        }
        for (index, transaction) in run.enumerated() {
            guard let undone = try? apply(values[index + 1], inverse(transaction)), undone == values[index] else {
                return "inverse law broken for transaction \(index)"
            }
        }
        return nil
    }

    @Test("the combined transaction keeps the covered transactions' IDs and messages")
    func provenance() throws {
        var generator = RunGenerator(seed: 7)
        let (run, _) = generator.run(from: generator.base(), maxLength: 6)
        let combined = try flatten(run)
        #expect(combined.coveredSummaries.map(\.id) == run.map(\.id))
        #expect(combined.coveredSummaries.map(\.message) == run.map(\.message))
        #expect(combined.basis == run.first!.basis && combined.t == run.last!.t)
        #expect(throws: FlattenError.emptyRun) { try flatten([Transaction]()) }
    }
}
