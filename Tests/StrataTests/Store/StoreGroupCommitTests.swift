import Foundation
import Strata
import Synchronization
import Testing

/// Concurrent writers across many log rollovers, with `close()`,
/// `truncate(after:)` and failing syncs arriving while commits are in
/// flight. Every commit must end with one truth: it returned, and it is in
/// the store (also after reopening); or it threw, and it is not.
@Suite("Store group commit")
struct StoreGroupCommitTests {
    /// What happened to one commit.
    struct Outcome: Sendable {
        var writer: Int
        var id: UUID
        var record: RecordID
        /// The report's t when the commit returned; nil when it threw.
        var t: Int64?
        /// What it threw.
        var error: (any Error)?
        /// Whether it returned or threw after the disruption began.
        var afterDisruption: Bool
        /// Whether it was begun after the disruption ended.
        var startedAfterDisruption = false

        var label: String { "writer \(writer) record \(record) \(t.map { "t \($0)" } ?? "threw \(error!)")" }
    }

    /// Set once by the task that disrupts the writers (closes, truncates,
    /// makes syncs fail), read by the writers.
    final class Disruption: Sendable {
        private let begun = Mutex(false)
        private let ended = Mutex(false)
        private let failures = Mutex(0)
        func begin() { begun.withLock { $0 = true } }
        var hasBegun: Bool { begun.withLock { $0 } }
        func end() { ended.withLock { $0 = true } }
        var hasEnded: Bool { ended.withLock { $0 } }
        func failed() { failures.withLock { $0 += 1 } }
        var failureCount: Int { failures.withLock { $0 } }
    }

    /// Options with 2.5 KB log segments: a rollover every ~20 commits.
    static func tinySegments(_ durability: Durability) -> StoreOptions {
        var options = testOptions(durability)
        options.segmentSize = 2_500
        return options
    }

    /// `writers` tasks, each inserting `count` records one commit at a
    /// time, each commit with its own ID drawn from `seed`; a writer stops
    /// at `.closed`.
    static func write(
        _ store: Store,
        writers: Int,
        count: Int,
        seed: UInt64,
        disruption: Disruption,
        waitAtHalfForDisruption: Bool = false
    ) async -> [Outcome] {
        await withTaskGroup(of: [Outcome].self) { group in
            for writer in 0..<writers {
                var random = SeededRandom(seed: seed &+ UInt64(writer) &* 7_919)
                let ids = (0..<count).map { _ in
                    UUID(uuid: unsafeBitCast((random.next(), random.next()), to: uuid_t.self))
                }
                group.addTask {
                    var outcomes: [Outcome] = []
                    for (n, id) in ids.enumerated() {
                        // Half the commits come after the disruption began,
                        // however the scheduler ordered the tasks.
                        if waitAtHalfForDisruption && n == count / 2 {
                            while !disruption.hasBegun { await Task.yield() }
                        }
                        let record = RecordID("\(writer)-\(n)")
                        var outcome = Outcome(writer: writer, id: id, record: record, afterDisruption: false)
                        outcome.startedAfterDisruption = disruption.hasEnded
                        do {
                            let report = try await store.transact(id: id, message: "writer \(writer) #\(n)") {
                                try $0.insert(["w": .int(Int64(writer)), "n": .int(Int64(n))], id: record, into: "t")
                            }
                            outcome.t = report.transaction.t
                        } catch {
                            outcome.error = error
                            disruption.failed()
                        }
                        outcome.afterDisruption = disruption.hasBegun
                        outcomes.append(outcome)
                        if case .closed? = outcome.error as? StoreError { break }
                    }
                    return outcomes
                }
            }
            var all: [Outcome] = []
            for await outcomes in group { all += outcomes }
            return all
        }
    }

    /// Waits (yielding, no clock) until `store` has published `basis` or
    /// the writers have all stopped.
    static func waitFor(basis: Int64, in store: Store, writersDone: Disruption) async {
        while store.current.basis < basis, !writersDone.hasBegun { await Task.yield() }
    }

    /// Every returned commit is in `store` under its ID and t, with its
    /// record; every thrown one is absent (unless `removed` says a later
    /// truncate took it); nothing else is in the history; the value is a
    /// replay of the history.
    static func check(
        _ outcomes: [Outcome],
        in store: Store,
        removedByTruncate removed: (Outcome) -> Bool = { _ in false },
        _ label: String
    ) async throws {
        let value = store.current
        var present = 0
        for outcome in outcomes {
            let transaction = try await store.transaction(id: outcome.id)
            let record = value.record(outcome.record, in: "t")
            if let t = outcome.t, !removed(outcome) {
                #expect(transaction?.t == t, "\(label): returned commit missing: \(outcome.label)")
                #expect(record?["w"] == .int(Int64(outcome.writer)), "\(label): record missing: \(outcome.label)")
                present += 1
            } else {
                #expect(transaction == nil, "\(label): commit present: \(outcome.label)")
                #expect(record == nil, "\(label): record present: \(outcome.label)")
            }
        }
        let history = try await store.history(limit: .max)
        #expect(history.count == present, "\(label): \(history.count) transactions, \(present) expected")
        #expect(value[table: "t"].count == present, "\(label)")
        #expect(try await replayHistory(store) == value, "\(label): value differs from a replay")
    }

    @Test(
        "4–8 concurrent writers across hundreds of rollovers: no error, every commit present after reopen",
        arguments: [(Durability.grouped, 24), (.everyCommit, 4), (.none, 6)]
    )
    func concurrentWriters(durability: Durability, rounds: Int) async throws {
        var random = SeededRandom(seed: 1_300)
        for round in 0..<rounds {
            let seed = random.next()
            var roundRandom = SeededRandom(seed: seed)
            let label = "\(durability) round \(round) seed \(seed)"
            let path = temporaryStorePath("group")
            defer { removeStore(path) }
            let options = Self.tinySegments(durability)
            let store = try await Store.open(at: path, options: options)
            let writers = 4 + roundRandom.int(below: 5)
            let outcomes = await Self.write(
                store,
                writers: writers,
                count: 300 / writers + 10,
                seed: seed,
                disruption: Disruption()
            )
            let errors = outcomes.filter { $0.t == nil }
            #expect(errors.isEmpty, "\(label): \(errors.prefix(3).map(\.label))")
            #expect(store.current.basis == Int64(outcomes.count), "\(label)")
            try await Self.check(outcomes, in: store, label)
            let closedValue = store.current
            try await store.close()
            #expect(logSegments(path).count > 10, "\(label): only \(logSegments(path).count) segments")
            let reopened = try await Store.open(at: path, options: options)
            #expect(reopened.current == closedValue, "\(label)")
            #expect(reopened.warnings.isEmpty, "\(label): \(reopened.warnings)")
            try await Self.check(outcomes, in: reopened, "\(label), reopened")
            try await reopened.close()
        }
    }

    @Test(
        "close() mid-flight: every commit returned and is present after reopen, or threw .closed and is absent",
        arguments: [(Durability.grouped, 30), (.everyCommit, 6), (.none, 6)]
    )
    func closeMidFlight(durability: Durability, rounds: Int) async throws {
        var random = SeededRandom(seed: 1_301)
        var returnedAfterClose = 0
        var refused = 0
        // Timing decides whether a round meets the race (a loaded machine may
        // finish every commit first): rounds continue, up to 8x, until it has.
        var round = 0
        while round < rounds
            || (round < 8 * rounds && (refused == 0 || (durability == .grouped && returnedAfterClose == 0)))
        {
            defer { round += 1 }
            let seed = random.next()
            var roundRandom = SeededRandom(seed: seed)
            let label = "\(durability) round \(round) seed \(seed)"
            let path = temporaryStorePath("group-close")
            defer { removeStore(path) }
            let options = Self.tinySegments(durability)
            let store = try await Store.open(at: path, options: options)
            let writers = 4 + roundRandom.int(below: 5)
            let threshold = Int64(5 + roundRandom.int(below: 150))
            let disruption = Disruption()
            let writersDone = Disruption()
            // The writers pause halfway until close begins, so that every
            // round closes under writers however the tasks were scheduled.
            let reachable = min(threshold, Int64(writers * 20))
            async let closing: Void = {
                await Self.waitFor(basis: reachable, in: store, writersDone: writersDone)
                disruption.begin()
                try await store.close()
            }()
            let outcomes = await Self.write(
                store,
                writers: writers,
                count: 40,
                seed: seed,
                disruption: disruption,
                waitAtHalfForDisruption: true
            )
            writersDone.begin()
            try await closing
            let unexpected = outcomes.filter { outcome in
                guard let error = outcome.error else { return false }
                if case .closed? = error as? StoreError { return false }
                return true
            }
            #expect(unexpected.isEmpty, "\(label): \(unexpected.prefix(3).map(\.label))")
            returnedAfterClose += outcomes.filter { $0.t != nil && $0.afterDisruption }.count
            refused += outcomes.filter { $0.t == nil }.count
            // Both directions, in the closed store's value and after reopening.
            for outcome in outcomes {
                let record = store.current.record(outcome.record, in: "t")
                #expect((record != nil) == (outcome.t != nil), "\(label): \(outcome.label)")
            }
            let reopened = try await Store.open(at: path, options: options)
            #expect(reopened.current == store.current, "\(label)")
            try await Self.check(outcomes, in: reopened, "\(label), reopened")
            try await reopened.close()
        }
        // The rounds did close under writers: commits were refused, and under
        // group commit some waiting ones returned after close had begun (a
        // commit of the other policies completes on the actor before close
        // enters or is refused after: there is nothing to wait for).
        #expect(refused > 0)
        if durability == .grouped { #expect(returnedAfterClose > 0) }
    }

    @Test(
        "truncate(after:) mid-flight: no hang, every commit answered, the log holds what returned and was not cut",
        arguments: [(Durability.grouped, 30), (.everyCommit, 6), (.none, 6)]
    )
    func truncateMidFlight(durability: Durability, rounds: Int) async throws {
        var random = SeededRandom(seed: 1_302)
        var cutInFlight = 0
        var round = 0
        // As in closeMidFlight: more rounds until one met commits in flight.
        while round < rounds || (round < 8 * rounds && durability == .grouped && cutInFlight == 0) {
            defer { round += 1 }
            let seed = random.next()
            var roundRandom = SeededRandom(seed: seed)
            // Half the rounds cut at the current basis, as an app undoing
            // "everything after now" does, the rest further back.
            let atCurrent = round % 2 == 0
            let label = "\(durability) round \(round) seed \(seed)\(atCurrent ? " at current" : "")"
            let path = temporaryStorePath("group-truncate")
            defer { removeStore(path) }
            let options = Self.tinySegments(durability)
            let store = try await Store.open(at: path, options: options)
            let writers = 4 + roundRandom.int(below: 5)
            let threshold = Int64(5 + roundRandom.int(below: 150))
            let back = Int64(roundRandom.int(below: 60))
            let disruption = Disruption()
            let writersDone = Disruption()
            // As in closeMidFlight, the writers pause halfway until the cut begins.
            let reachable = min(threshold, Int64(writers * 20))
            async let cutting: Int64 = {
                await Self.waitFor(basis: reachable, in: store, writersDone: writersDone)
                let now = store.current.basis
                let t = atCurrent ? now : max(0, now - back)
                disruption.begin()
                try await store.truncate(after: t)
                disruption.end()
                return t
            }()
            let outcomes = await Self.write(
                store,
                writers: writers,
                count: 40,
                seed: seed,
                disruption: disruption,
                waitAtHalfForDisruption: true
            )
            writersDone.begin()
            let cut = try await cutting
            let errors = outcomes.filter { $0.t == nil }
            #expect(errors.isEmpty, "\(label): \(errors.prefix(3).map(\.label))")
            // A returned commit missing from the store was cut: it came
            // after t, and was begun before the truncate returned.
            let final = store.current
            let removed = outcomes.filter { outcome in
                final.record(outcome.record, in: "t") == nil
            }
            for outcome in removed {
                #expect((outcome.t ?? 0) > cut, "\(label): commit at or before the cut is missing: \(outcome.label)")
                #expect(!outcome.startedAfterDisruption, "\(label): commit after the truncate lost: \(outcome.label)")
            }
            if atCurrent { cutInFlight += removed.count }
            let removedIDs = Set(removed.map(\.id))
            try await Self.check(outcomes, in: store, removedByTruncate: { removedIDs.contains($0.id) }, label)
            try await store.close()
            let reopened = try await Store.open(at: path, options: options)
            #expect(reopened.current == final, "\(label)")
            try await Self.check(
                outcomes,
                in: reopened,
                removedByTruncate: { removedIDs.contains($0.id) },
                "\(label), reopened"
            )
            try await reopened.close()
        }
        // Under group commit, truncating at the current basis met commits in
        // flight (appended, not yet returned), and cut them.
        if durability == .grouped { #expect(cutInFlight > 0) }
    }

    @Test(
        "syncs failing mid-flight, rollovers included: every commit returned and is present, or threw and is absent",
        arguments: [(Durability.grouped, 16), (.everyCommit, 4)]
    )
    func failingSyncsMidFlight(durability: Durability, rounds: Int) async throws {
        var random = SeededRandom(seed: 1_303)
        var failed = 0
        var round = 0
        // As in closeMidFlight: more rounds until a sync failed under writers.
        while round < rounds || (round < 8 * rounds && failed == 0) {
            defer { round += 1 }
            let seed = random.next()
            var roundRandom = SeededRandom(seed: seed)
            let label = "\(durability) round \(round) seed \(seed)"
            let path = temporaryStorePath("group-fault")
            defer { removeStore(path) }
            let fileSystem = FaultyFileSystem()
            var options = Self.tinySegments(durability)
            options.fileSystem = fileSystem
            let store = try await Store.open(at: path, options: options)
            let writers = 4 + roundRandom.int(below: 5)
            let threshold = Int64(5 + roundRandom.int(below: 150))
            let failures = 1 + roundRandom.int(below: 8)
            let disruption = Disruption()
            let writersDone = Disruption()
            // The writers pause halfway until the fault is armed: below
            // writers × 20 commits the threshold is always reached.
            let reachable = min(threshold, Int64(writers * 20))
            async let faulting: Void = {
                await Self.waitFor(basis: reachable, in: store, writersDone: writersDone)
                fileSystem.faults.withLock { $0.failSyncs = true }
                disruption.begin()
                while disruption.failureCount < failures, !writersDone.hasBegun { await Task.yield() }
                fileSystem.faults.withLock { $0 = .init() }
            }()
            let outcomes = await Self.write(
                store,
                writers: writers,
                count: 40,
                seed: seed,
                disruption: disruption,
                waitAtHalfForDisruption: true
            )
            writersDone.begin()
            await faulting
            let unexpected = outcomes.filter { outcome in
                guard let error = outcome.error else { return false }
                if case .writeFailed? = error as? StoreError { return false }
                return true
            }
            #expect(unexpected.isEmpty, "\(label): \(unexpected.prefix(3).map(\.label))")
            failed += outcomes.filter { $0.t == nil }.count
            try await Self.check(outcomes, in: store, label)
            try await store.close()
            let reopened = try await Store.open(at: path, options: testOptions())
            #expect(reopened.current == store.current, "\(label)")
            try await Self.check(outcomes, in: reopened, "\(label), reopened")
            try await reopened.close()
        }
        #expect(failed > 0)
    }

    @Test(
        "a rollover whose manifest write or new segment fails never fails the commits already durable",
        arguments: ["manifest.tmp", ".log"]
    )
    func rolloverFailures(failing suffix: String) async throws {
        let path = temporaryStorePath("group-rollover")
        defer { removeStore(path) }
        let fileSystem = FaultyFileSystem()
        var options = Self.tinySegments(.grouped)
        options.fileSystem = fileSystem
        let store = try await Store.open(at: path, options: options)
        // Segments fill after a few commits; every rollover from here meets the fault.
        fileSystem.faults.withLock { $0.failSyncsOfPathsEnding = suffix }
        let outcomes = await Self.write(store, writers: 4, count: 30, seed: 77, disruption: Disruption())
        let failed = outcomes.filter { $0.t == nil }
        for outcome in failed {
            // Failed writes only, each reported as such.
            switch outcome.error as? StoreError {
            case .writeFailed?, .needsReopen?: continue
            default: Issue.record("\(suffix): \(outcome.label): \(String(describing: outcome.error))")
            }
        }
        if suffix == "manifest.tmp" { #expect(failed.isEmpty, "\(failed.prefix(3).map(\.label))") }
        try await Self.check(outcomes, in: store, suffix)
        fileSystem.faults.withLock { $0 = .init() }
        try? await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current == store.current, "\(suffix)")
        try await Self.check(outcomes, in: reopened, "\(suffix), reopened")
        try await reopened.close()
    }

    @Test("a caller's transaction ID tells whether a failed commit landed; it is never committed twice")
    func callerSuppliedID() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let fileSystem = FaultyFileSystem()
        var options = testOptions(.grouped)
        options.fileSystem = fileSystem
        let store = try await Store.open(at: path, options: options)
        let id = UUID()
        fileSystem.faults.withLock { $0.failSyncs = true }
        await #expect(throws: StoreError.self) {
            try await store.transact(id: id) { try $0.insert(["a": 1], id: 1, into: "t") }
        }
        fileSystem.faults.withLock { $0 = .init() }
        // Appended, then rolled back when its sync failed: not reported.
        #expect(try await store.transaction(id: id) == nil)
        let report = try await store.transact(id: id) { try $0.insert(["a": 1], id: 1, into: "t") }
        #expect(report.transaction.id == id)
        #expect(try await store.transaction(id: id)?.t == 1)
        // A retry after it landed is refused, not written twice.
        await #expect {
            try await store.transact(id: id) { try $0.insert(["a": 2], id: 2, into: "t") }
        } throws: { error in
            guard case .duplicateTransaction(let duplicate) = error as? StoreError else { return false }
            return duplicate == id
        }
        // commit(_:) keeps a prepared transaction's ID.
        var builder = TransactionBuilder(on: store.current)
        try builder.insert(["a": 3], id: 3, into: "t")
        let prepared = builder.transaction(message: "prepared")
        let committed = try await store.commit(prepared)
        #expect(committed.transaction.id == prepared.id)
        await #expect(throws: StoreError.self) { try await store.commit(prepared) }
        #expect(store.current.basis == 2)
        try await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(try await reopened.transaction(id: id)?.t == 1)
        #expect(try await reopened.transaction(id: prepared.id)?.t == 2)
        #expect(reopened.current.basis == 2)
        try await reopened.close()
    }
}
