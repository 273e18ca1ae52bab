import Foundation
import Strata
import Testing

/// Crashes for real: a child process commits in a loop and reports each
/// returned commit on a pipe; the test kills it with SIGKILL at random
/// moments and reopens the store after each kill.
@Suite("Store crashes", .serialized)
struct StoreCrashTests {
    /// The child executable, built beside the test bundle.
    static var writerPath: String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return directory.appendingPathComponent("StrataCrashWriter").path
    }

    /// Kills (`STRATA_CRASH_KILLS`, default 50) per durability policy.
    static var kills: Int {
        ProcessInfo.processInfo.environment["STRATA_CRASH_KILLS"].flatMap(Int.init) ?? 50
    }

    @Test(
        "every reported commit survives SIGKILL; the value equals a replay of the log",
        arguments: [
            "everyCommit", "grouped",
        ]
    )
    func killAndReopen(policy: String) async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.writerPath), "missing \(Self.writerPath)")
        let path = temporaryStorePath("crash")
        defer { removeStore(path) }
        var random = SeededRandom(seed: 42)
        var reported: Int64 = 0
        // The log replayed so far: every tenth kill and the last replay it
        // from empty; the others apply only what came after it (a replay
        // of the whole log after every kill made the test quadratic), and
        // check that every earlier transaction kept its ID and number.
        var replayed = Database()
        var ids: [UUID] = []
        for kill in 0..<Self.kills {
            let child = try ChildProcess(path: Self.writerPath, arguments: [path, policy])
            // Let it commit for 5–60 ms, then kill it mid-whatever.
            try await Task.sleep(for: .milliseconds(5 + random.int(below: 55)))
            child.kill()
            let text = try await child.finish().output
            // Only whole lines count: a line cut by the kill was not reported.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if let last = lines.last.flatMap({ Int64($0) }) { reported = max(reported, last) }

            let store = try await Store.open(at: path, options: testOptions())
            let value = store.current
            #expect(value.basis >= reported, "kill \(kill): reported t \(reported) but reopened at \(value.basis)")
            for t in stride(from: max(1, reported - 5), through: reported, by: 1) {
                #expect(value.record(RecordID(Int(t)), in: "items")?["n"] == .int(t), "kill \(kill): t \(t) lost")
            }
            // No partial transaction: every transaction is whole, the value is the log replayed.
            #expect(value[table: "items"].count == Int(value.basis), "kill \(kill)")
            if kill % 10 == 9 || kill == Self.kills - 1 || replayed.basis > value.basis {
                replayed = try await replayHistory(store)
                // From memory: the replay has just read the log back.
                ids = []
                for t in stride(from: Int64(1), through: replayed.basis, by: 1) {
                    ids.append(try #require(try await store.transactionID(at: t), "kill \(kill): t \(t)"))
                }
            } else {
                for (offset, id) in ids.enumerated() {
                    let t = Int64(offset + 1)
                    #expect(try await store.transactionID(at: t) == id, "kill \(kill): t \(t) changed")
                }
                let tail = try await store.transactions(from: replayed.basis + 1, limit: .max)
                #expect(tail.map(\.t) == Array((replayed.basis + 1)..<(value.basis + 1)), "kill \(kill): log tail")
                for transaction in tail { replayed = try apply(replayed, transaction) }
                ids += tail.map(\.id)
            }
            #expect(replayed == value, "kill \(kill)")
            for warning in store.warnings {
                guard case .tornTail = warning else {
                    Issue.record("kill \(kill): unexpected warning \(warning)")
                    continue
                }
            }
            try await store.close()
        }
        #expect(reported > 0, "the writer never reported a commit")
    }
}
