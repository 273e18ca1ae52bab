import Foundation
import Strata
import Synchronization
import Testing

/// Life-cycle defects found by reading the store cold, each as the smallest
/// scenario a user could meet: snapshots across truncate and close, stray
/// files in the log directory, a missing segment, descriptors held by reads.
@Suite("Store life cycle", .serialized)
struct StoreLifecycleTests {
    /// No background snapshot: only the snapshots a test takes exist.
    static var options: StoreOptions {
        var options = testOptions()
        options.rebuildBudget = nil
        options.snapshotEveryLogBytes = nil
        return options
    }

    static func upsert(_ store: Store, _ i: Int, _ text: String) async throws {
        try await store.transact(message: text) { try $0.upsert(["text": .string(text)], id: RecordID(i), into: "r") }
    }

    /// Waits until a snapshot write is held by `gate`.
    static func waitUntilHeld(_ gate: SnapshotGateFileSystem) async throws {
        var polls = 0
        while !gate.held {
            polls += 1
            // A snapshot that never reaches its file is a failure of the
            // test's setup, not a reason to hang.
            guard polls < 30_000 else {
                Issue.record("the snapshot never began writing")
                return
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Lets the held snapshot write go once `done` is set: at once in a
    /// store that does not wait for the snapshot; in one that does (the
    /// fix), after a while, so that the test then passes instead of hanging.
    static func release(_ gate: SnapshotGateFileSystem, when done: ReviewFlag) -> Task<Void, Never> {
        Task.detached {
            var polls = 0
            while !done.isSet, polls < 500 {
                polls += 1
                try? await Task.sleep(for: .milliseconds(10))
            }
            gate.release()
        }
    }

    // MARK: A manual snapshot is not tied to the store's lifetime or history

    @Test("a manual snapshot finishing after a truncate and regrowth is never taken for the new history")
    func manualSnapshotAcrossTruncate() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let gate = SnapshotGateFileSystem()
        var options = Self.options
        options.fileSystem = gate
        let store = try await Store.open(at: path, options: options)
        for i in 1...30 { try await Self.upsert(store, i, "old \(i)") }

        let snapshotting = Task { try await store.snapshot() }
        try await Self.waitUntilHeld(gate)
        let regrown = ReviewFlag()
        let releasing = Self.release(gate, when: regrown)
        try await store.truncate(after: 8)
        var expected: [Int64: Database] = [:]
        for i in 9...40 {
            try await Self.upsert(store, i, "new \(i)")
            expected[Int64(i)] = store.current
        }
        regrown.set()
        await releasing.value
        _ = try? await snapshotting.value

        // The snapshot holds the value after the old t 30 ("old 20"): the
        // store must not offer it as the value after the new t 30.
        let inSnapshot = try? await store.database(inSnapshot: 30)
        #expect(
            inSnapshot == nil || inSnapshot == expected[30],
            "snapshot 30 offers record 20 = \(String(describing: inSnapshot?.record(20, in: "r")?["text"]))"
        )
        #expect(try await store.database(asOf: 30) == expected[30])
        #expect(try await store.database(asOf: 25) == expected[25])
        try await store.close()
    }

    @Test("close waits for a manual snapshot: no snapshot lands after it returns")
    func manualSnapshotAcrossClose() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let gate = SnapshotGateFileSystem()
        var options = Self.options
        options.fileSystem = gate
        let store = try await Store.open(at: path, options: options)
        for i in 1...30 { try await Self.upsert(store, i, "old \(i)") }

        let snapshotting = Task { try await store.snapshot() }
        try await Self.waitUntilHeld(gate)
        let cutElsewhere = ReviewFlag()
        let releasing = Self.release(gate, when: cutElsewhere)
        try await store.close()
        // The lock is free: the app (or another process) opens the store
        // and cuts its history.
        let second = try await Store.open(at: path, options: Self.options)
        try await second.truncate(after: 5)
        try await second.close()
        cutElsewhere.set()
        await releasing.value
        _ = try? await snapshotting.value

        // The first store's snapshot (basis 30) must not have landed in the
        // directory it no longer holds: a strict open would refuse it.
        #expect(!FileManager.default.fileExists(atPath: path + "/snapshots/snapshot-00000000000000000030.strata"))
        let third = try await Store.open(at: path, options: Self.options)
        #expect(third.current.basis == 5)
        #expect(third.warnings.isEmpty, "\(third.warnings)")
        try await third.close()
    }

    @Test("a store closed right after opening a large value, again and again, opens whole every time")
    func closeRightAfterOpen() async throws {
        // Each open starts measuring the value off the actor; a close
        // stops that walk midway, and the next open must not notice.
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: Self.options)
        try await store.transact(message: "import") { builder in
            for i in 0..<40_000 { try builder.insert(["n": .int(Int64(i))], id: RecordID(i), into: "r") }
        }
        try await store.snapshot()
        try await store.close()
        for round in 0..<25 {
            let reopened = try await Store.open(at: path, options: Self.options)
            #expect(reopened.current.recordCount == 40_000 + round, "round \(round)")
            // Every other round commits first, so that a measurement may be
            // running on a changed value when the close comes.
            if round % 2 == 0 {
                try await Self.upsert(reopened, 100_000 + round, "round \(round)")
            } else {
                try await reopened.transact(message: "round \(round)") {
                    try $0.insert(["n": .int(-1)], id: RecordID(100_000 + round), into: "r")
                }
            }
            try await reopened.close()
            await #expect(throws: StoreError.self) { try await Self.upsert(reopened, 1, "after close") }
        }
        let last = try await Store.open(at: path, options: Self.options)
        #expect(last.current.recordCount == 40_025)
        try await last.close()
    }

    // MARK: Writes that block do not hold the tasks' threads

    @Test("snapshot writes held on the disk, more than the pool has threads: other stores still commit and close")
    func heldSnapshotWritesLeaveThePool() async throws {
        // Each store's snapshot write blocks in the file system until
        // released. Run on the cooperative pool (as many jobs at a time as
        // processors), they stopped every task of the process; on the
        // stores' own queues, they stop nothing else.
        let held = max(8, ProcessInfo.processInfo.processorCount + 2)
        var stores: [(store: Store, gate: SnapshotGateFileSystem, path: String)] = []
        for _ in 0..<held {
            let gate = SnapshotGateFileSystem()
            var options = Self.options
            options.fileSystem = gate
            let path = temporaryStorePath()
            let store = try await Store.open(at: path, options: options)
            try await Self.upsert(store, 1, "held")
            stores.append((store, gate, path))
        }
        defer { for (_, _, path) in stores { removeStore(path) } }
        let gates = stores.map(\.gate)
        // A hang guard, not a speed limit: a pool the writes hold would
        // otherwise never run the rest of this test.
        let finished = ReviewFlag()
        let guardThread = Thread {
            let deadline = Date().addingTimeInterval(300)
            while !finished.isSet, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            for gate in gates { gate.release() }
        }
        guardThread.start()
        let snapshots = stores.map { entry in Task { try await entry.store.snapshot() } }
        for gate in gates { try await Self.waitUntilHeld(gate) }

        let path = temporaryStorePath()
        defer { removeStore(path) }
        let other = try await Store.open(at: path, options: testOptions(.grouped))
        for i in 1...20 { try await Self.upsert(other, i, "while held") }
        try await other.close()
        let stillHeld = gates.allSatisfy { !$0.isReleased }
        finished.set()
        for gate in gates { gate.release() }
        #expect(stillHeld, "the other store finished only after the held writes were let go")
        for (index, task) in snapshots.enumerated() {
            _ = try await task.value
            try await stores[index].store.close()
        }
    }

    // MARK: Files in log/ that are not segments

    @Test("after close every past value and snapshot read throws closed, the current t and a snapshot's t too")
    func readsAfterClose() async throws {
        let path = temporaryStorePath("lifecycle")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.insert(["x": 1], id: 1, into: "t") }
        try await store.snapshot()
        try await store.transact { try $0.upsert(["x": 2], id: 1, into: "t") }
        #expect(try await store.database(asOf: 1)[table: "t"][1]?["x"] == 1)
        try await store.close()
        func isClosed(_ error: any Error) -> Bool {
            if case .closed? = error as? StoreError { return true }
            return false
        }
        for t in [Int64(0), 1, 2, 7, -1] {
            await #expect { try await store.database(asOf: t) } throws: { isClosed($0) }
            await #expect { try await store.rebuildPlan(for: t) } throws: { isClosed($0) }
        }
        await #expect { try await store.database(at: Date()) } throws: { isClosed($0) }
        await #expect { try await store.database(inSnapshot: 1) } throws: { isClosed($0) }
        await #expect { try await store.snapshot(at: 1) } throws: { isClosed($0) }
        await #expect { try await store.snapshot(at: 5) } throws: { isClosed($0) }
        // The value in memory stays readable.
        #expect(store.current[table: "t"][1]?["x"] == 2)
    }

    @Test("a file in log/ that is not a numbered segment is never read, cut or removed")
    func strayLogFiles() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: Self.options)
        for i in 1...6 { try await Self.upsert(store, i, "text \(i)") }
        let value = store.current
        try await store.close()

        // Shorter than a segment header: read as a crash while creating a
        // segment, warned about and deleted.
        let short = path + "/log/old.log"
        try Data("a note".utf8).write(to: URL(fileURLWithPath: short))
        let first = try await Store.open(at: path, options: Self.options)
        #expect(first.current == value)
        #expect(first.warnings.isEmpty, "\(first.warnings)")
        try await first.close()
        #expect(FileManager.default.fileExists(atPath: short), "a file the store does not own was deleted")

        // Longer: read as a damaged segment, so the store refuses to open.
        let long = path + "/log/notes.log"
        try Data("notes kept beside the segments; not a Strata file".utf8).write(to: URL(fileURLWithPath: long))
        let second = try await Store.open(at: path, options: Self.options)
        #expect(second.current == value)
        #expect(second.warnings.isEmpty, "\(second.warnings)")
        try await second.close()
        #expect(FileManager.default.fileExists(atPath: long))
    }

    // MARK: A missing segment is missing history

    @Test("a missing middle segment is refused as missing history, as documented, not as damage")
    func missingMiddleSegmentIsMissingHistory() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = Self.options
        options.segmentSize = 1_024
        let store = try await Store.open(at: path, options: options)
        for i in 1...60 { try await Self.upsert(store, i, String(repeating: "w", count: 40 + i)) }
        try await store.close()
        let segments = logSegments(path)
        #expect(segments.count >= 3)
        try FileManager.default.removeItem(atPath: segments[1])
        do {
            let opened = try await Store.open(at: path, options: options)
            Issue.record("opened at t \(opened.current.basis) with a middle segment missing")
        } catch StoreError.missingHistory(let reached, let expected, _) {
            #expect(reached < expected)
        } catch {
            Issue.record("refused as \(error), not as missingHistory")
        }
    }

    // MARK: Reads do not hold a descriptor per segment

    @Test("reading a history of 100 segments keeps at most a few descriptors open")
    func readersAreBounded() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = Self.options
        options.segmentSize = 600
        options.cachedTransactionChanges = 0
        let writer = try await Store.open(at: path, options: options)
        for i in 1...300 { try await Self.upsert(writer, i % 7, String(repeating: "d", count: 200)) }
        try await writer.close()
        #expect(logSegments(path).count >= 100)
        // Reopened: every transaction is read from its segment.
        let store = try await Store.open(at: path, options: options)
        // Only descriptors on this store's files count (tests running beside this one open their own);
        // the log keeps at most 16 segments open for reading (`TransactionLog.maximumReaders`).
        let before = Self.openDescriptors(under: path)
        for t in Int64(1)...300 {
            let transaction = try #require(try await store.transaction(at: t))
            #expect(transaction.t == t)
        }
        let after = Self.openDescriptors(under: path)
        #expect(after <= before + 16, "descriptors on the store's files before \(before), after \(after)")
        try await store.close()
    }

    /// The process's open descriptors whose file lies under `directory`.
    static func openDescriptors(under directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        let prefix = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path + "/"
        return names.count { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)
            else { return false }
            return target.hasPrefix(prefix)
        }
    }
}

/// A flag set once by one task and read by others.
final class ReviewFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// The POSIX file system, where the first snapshot temporary file to be
/// created (or the first file `holds` picks) waits until ``release()``: a
/// snapshot write held in flight.
final class SnapshotGateFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let base = PosixFileSystem()
    private let state = Mutex((armed: true, held: false, released: false))
    private let gate = DispatchSemaphore(value: 0)
    private let holds: @Sendable (String) -> Bool
    private let reportsIdentities: Bool

    /// `reportsIdentities`: false for a file system that cannot tell
    /// files apart (``FileSystem/identity(of:)`` nil).
    init(
        holding holds: @escaping @Sendable (String) -> Bool = { $0.contains("/snapshots/") && $0.hasSuffix(".tmp") },
        reportsIdentities: Bool = true
    ) {
        self.holds = holds
        self.reportsIdentities = reportsIdentities
    }

    /// Whether a snapshot write is (or was) held.
    var held: Bool { state.withLock { $0.held } }
    /// Whether ``release()`` was called.
    var isReleased: Bool { state.withLock { $0.released } }

    func release() {
        let first = state.withLock { state in
            defer { state.released = true }
            return !state.released
        }
        if first { gate.signal() }
    }

    func open(_ path: String, create: Bool) throws -> any StorageFile {
        if holds(path) {
            let holds = state.withLock { state in
                guard state.armed else { return false }
                state.armed = false
                state.held = true
                return true
            }
            if holds { gate.wait() }
        }
        return try base.open(path, create: create)
    }
    func identity(of path: String) -> FileIdentity? { reportsIdentities ? base.identity(of: path) : nil }
}
