import Foundation
import Strata
import Synchronization
import Testing

/// A store an app lets go of without `close()` (found by a cold review):
/// its feeds held it alive (and its lock: every reopen failed as locked),
/// and an observation's consumer waited forever. Cancelled tasks.
@Suite("A store let go of without close", .serialized)
struct StoreDroppedTests {
    final class WeakStore: @unchecked Sendable {
        weak var store: Store?
    }

    /// How many consumers' loops ended.
    final class Ends: Sendable {
        let count = Mutex(0)
        func note() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    static func options() -> StoreOptions {
        var options = StoreOptions()
        options.createIfMissing = true
        options.snapshotEveryLogBytes = nil
        return options
    }

    /// Waits until `condition` holds, up to 20 s (the store's release runs
    /// on other tasks); returns whether it held.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<2_000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test("a store whose values() and reports() are being iterated is freed, and reopens")
    func feedsDoNotHoldTheStore() async throws {
        let path = temporaryStorePath("dropped-feeds")
        defer { removeStore(path) }
        let weak = WeakStore()
        let ended = Ends()
        var consumers: [Task<Void, Never>] = []
        do {
            let store = try await Store.open(at: path, options: Self.options())
            weak.store = store
            try await store.transact { try $0.insert(["v": 1], id: 1, into: "r") }
            let values = await store.values()
            let reports = await store.reports()
            consumers.append(
                Task {
                    for await _ in values {}
                    ended.note()
                }
            )
            consumers.append(
                Task {
                    for await _ in reports {}
                    ended.note()
                }
            )
        }
        #expect(await Self.eventually { weak.store == nil }, "the store let go of is still alive")
        // Its feeds ended with it.
        #expect(await Self.eventually { ended.value == 2 })
        let reopened = try await Store.open(at: path, options: Self.options())
        #expect(reopened.current.record(1, in: "r")?["v"] == 1)
        try await reopened.close()
        for consumer in consumers { consumer.cancel() }
    }

    @Test("an observation of a store let go of ends, and so does its consumer's loop")
    func observationEnds() async throws {
        let path = temporaryStorePath("dropped-observation")
        defer { removeStore(path) }
        let ended = Ends()
        let consumer: Task<Void, Never>
        do {
            let store = try await Store.open(at: path, options: Self.options())
            let observation = await store.observe { $0.record(1, in: "r") }
            consumer = Task {
                do {
                    for try await _ in observation {}
                } catch {}
                ended.note()
            }
        }
        #expect(await Self.eventually { ended.value == 1 }, "the consumer still waits")
        consumer.cancel()
    }

    @Test("an open in a cancelled task waits out a lock held for a moment, as in any task")
    func cancelledOpen() async throws {
        let path = temporaryStorePath("cancelled-open")
        defer { removeStore(path) }
        try await Store.open(at: path, options: Self.options()).close()
        // A copy of the lock held a moment longer (a child process's, between its fork and exec).
        // (Patiently: a child another test spawns holds a copy of the lock
        // until its exec, as here.)
        let descriptor = open(path + "/lock", O_RDWR | O_CLOEXEC)
        #expect(try await StoreTests.lockPatiently(descriptor))
        let releaser = Task.detached {
            try? await Task.sleep(for: .milliseconds(50))
            close(descriptor)
        }
        let opened = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await Store.open(at: path, options: Self.options())
        }
        let result = await opened.result
        await releaser.value
        switch result {
        case .success(let store): try await store.close()
        case .failure(let error): Issue.record("open in a cancelled task: \(error)")
        }
    }

    @Test("a store let go of while its snapshot is written is freed, and an open of it waits for the snapshot")
    func droppedDuringSnapshot() async throws {
        let path = temporaryStorePath("dropped-snapshot")
        defer { removeStore(path) }
        let gate = SnapshotGateFileSystem()
        defer { gate.release() }
        var options = Self.options()
        options.fileSystem = gate
        options.snapshotEveryTransactions = 1
        let weak = WeakStore()
        do {
            let store = try await Store.open(at: path, options: options)
            weak.store = store
            try await store.transact { try $0.insert(["title": "Blue River"], id: 1, into: "songs") }
        }
        #expect(await Self.eventually { gate.held }, "no background snapshot started")
        // The snapshot's task holds the lock, not the store.
        #expect(await Self.eventually { weak.store == nil }, "the store let go of is still alive")
        let opened = ReviewFlag()
        let reopen = Task {
            defer { opened.set() }
            return try await Store.open(at: path, options: Self.options())
        }
        // Well past the ~0.2 s an open retries a lock held by someone else.
        try await Task.sleep(for: .milliseconds(600))
        #expect(!opened.isSet, "the open did not wait for the snapshot being written")
        gate.release()
        let store = try await reopen.value
        #expect(store.current.record(1, in: "songs")?["title"] == "Blue River")
        #expect(await store.statistics.lastSnapshotBasis == 1, "the snapshot the dropped store began was not written")
        try await store.close()
    }

    @Test("an open of a store another instance in this process holds is refused as locked")
    func liveStoreStaysLocked() async throws {
        let path = temporaryStorePath("live-locked")
        defer { removeStore(path) }
        let gate = SnapshotGateFileSystem()
        defer { gate.release() }
        var options = Self.options()
        options.fileSystem = gate
        options.snapshotEveryTransactions = 1
        let store = try await Store.open(at: path, options: options)
        try await store.transact { try $0.insert(["v": 1], id: 1, into: "r") }
        #expect(await Self.eventually { gate.held })
        await #expect {
            try await Store.open(at: path, options: Self.options())
        } throws: { error in
            if case .locked(let reported)? = error as? StoreError { return reported == path }
            return false
        }
        gate.release()
        try await store.close()
    }

    @Test(
        "a store let go of while a compaction round is written is freed, and an open waits for its round",
        arguments: [true, false]
    )
    func droppedDuringCompaction(identities: Bool) async throws {
        let path = temporaryStorePath("dropped-compaction")
        defer { removeStore(path) }
        let gate = SnapshotGateFileSystem(holding: { $0.hasSuffix(".compaction.tmp") }, reportsIdentities: identities)
        defer { gate.release() }
        var options = Self.options()
        options.fileSystem = gate
        options.durability = .none
        let weak = WeakStore()
        do {
            let store = try await Store.open(at: path, options: options)
            weak.store = store
            // 256 transactions complete a block of the first level written to disk.
            for n in 1...300 {
                try await store.transact { try $0.upsert(["n": .int(Int64(n))], id: RecordID(n % 40), into: "r") }
            }
            #expect(await Self.eventually { gate.held }, "no compaction round started")
        }
        #expect(await Self.eventually { weak.store == nil }, "the store let go of is still alive")
        let opened = ReviewFlag()
        // Spelled otherwise: a file system without identities is keyed by the path, `.` and `//` resolved.
        let spelled = path.replacingOccurrences(of: "/strata-tests/", with: "/./strata-tests//") + "/"
        var reopenOptions = Self.options()
        reopenOptions.fileSystem = SnapshotGateFileSystem(holding: { _ in false }, reportsIdentities: identities)
        let reopen = Task {
            defer { opened.set() }
            return try await Store.open(at: spelled, options: reopenOptions)
        }
        try await Task.sleep(for: .milliseconds(600))
        #expect(!opened.isSet, "the open did not wait for the compaction round")
        gate.release()
        let store = try await reopen.value
        #expect(store.current.basis == 300)
        #expect(store.current.record(20, in: "r")?["n"] == .int(300))
        // The history reads whole from where the round left it.
        #expect(try await store.database(asOf: 150).record(30, in: "r")?["n"] == .int(150))
        try await store.close()
    }

    /// Found by a cold hunt: a snapshot a dropped store finished after it
    /// was freed was never pruned, so an app that drops its store piled
    /// snapshots up past `snapshotsKept`.
    @Test("snapshots finished by stores let go of are pruned to snapshotsKept at the next open")
    func droppedStoresSnapshotsArePruned() async throws {
        let path = temporaryStorePath("dropped-pruned")
        defer { removeStore(path) }
        var options = Self.options()
        options.snapshotEveryTransactions = 1
        options.snapshotsKept = 2
        for cycle in 0..<20 {
            let weak = WeakStore()
            do {
                let store = try await Store.open(at: path, options: options)
                weak.store = store
                // Starts a background snapshot, left running as the store goes.
                try await store.transact { try $0.upsert(["cycle": .int(Int64(cycle))], id: 1, into: "r") }
            }
            #expect(await Self.eventually { weak.store == nil }, "cycle \(cycle): the store is still alive")
            // Each open prunes what the store before it left.
            #expect(snapshotFiles(path).count <= 3, "cycle \(cycle): \(snapshotFiles(path).count) snapshots")
        }
        let store = try await Store.open(at: path, options: options)
        #expect(snapshotFiles(path).count <= 2, "\(snapshotFiles(path))")
        #expect(await store.statistics.snapshotBases.count <= 2)
        #expect(store.current.record(1, in: "r")?["cycle"] == .int(19))
        try await store.close()
    }
}
