import Foundation
import Strata
import Testing

@Suite("The file store as a peers' history")
struct StoreHistoryStorageTests {
    @Test("the store's own commits and its peers' interleave in one order; reopened, the store holds them all")
    func interleavedWithTheStore() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions(.grouped))
        let peer = try await Peer.open(store)
        let follower = try await Peer.open(store)
        await follower.startFollowing()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for n in 0..<50 {
                    try await store.transact {
                        try $0.insert(["by": "store", "n": .int(Int64(n))], id: RecordID(n), into: "rows")
                    }
                }
            }
            group.addTask {
                for n in 0..<50 {
                    try await peer.transact {
                        try $0.insert(["by": "peer", "n": .int(Int64(n))], id: RecordID(1_000 + n), into: "rows")
                    }
                }
            }
            try await group.waitForAll()
        }
        // A stale peer edit to a field the store changed since is refused.
        let stale = try await Peer.open(store)
        try await store.transact { try $0.update(1, in: "rows", [.set("n", 100)]) }
        await #expect(throws: ApplyError.self) {
            try await stale.transact(maximumAttempts: 4) { try $0.update(1, in: "rows", [.set("n", 7)]) }
        }
        #expect(try await peer.catchUp() == store.current)
        let clock = ContinuousClock()
        let patience = clock.now + .seconds(30)
        while follower.current.basis < store.current.basis, clock.now < patience {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(follower.current == store.current)
        #expect(try await store.latestT() == 101)
        let ids = try await store.transactions(from: 1, limit: .max).map(\.id)
        #expect(await peer.summaries.map(\.id) == ids)
        await follower.close()
        try await store.close()

        let reopened = try await Store.open(at: path, options: testOptions(.grouped))
        #expect(reopened.current[table: "rows"].count == 100)
        #expect(try await reopened.transactions(from: 1, limit: .max).map(\.id) == ids)
        #expect(try await replayHistory(reopened) == reopened.current)
        try await reopened.close()
    }

    @Test("appends are checked: a gap, a basis off, a taken number, a known ID, a change that does not fit")
    func appendChecks() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.insert(["x": 1], id: 1, into: "t") }
        let first = try #require(try await store.transaction(at: 1))

        await #expect(throws: HistoryStorageError.self) { try await store.append(Transaction(t: 3, basis: 2)) }
        await #expect(throws: HistoryStorageError.self) { try await store.append(Transaction(t: 2, basis: 0)) }
        #expect(try await store.append(Transaction(t: 1, basis: 0)) == .taken)
        var again = first
        again.t = 2
        again.basis = 1
        let duplicate = await #expect(throws: StoreError.self) { try await store.append(again) }
        #expect(duplicate?.description == StoreError.duplicateTransaction(id: first.id).description)
        again.id = UUID()
        await #expect(throws: ApplyError.self) { try await store.append(again) }
        #expect(store.current.basis == 1)

        var builder = TransactionBuilder(on: store.current)
        try builder.update(1, in: "t", [.set("x", 2)])
        let built = builder.transaction(message: "from outside")
        #expect(built.t == 2)
        #expect(try await store.append(built) == .appended)
        #expect(store.current.record(1, in: "t") == ["x": 2])
        #expect(try await store.transactionID(at: 2) == built.id)
        #expect(try await store.transactionID(at: 3) == nil)
        #expect(try await store.transactions(from: 2, limit: 5).map(\.id) == [built.id])
        #expect(try await store.transactions(from: 0, limit: 1).map(\.t) == [1])
        #expect(try await store.transactions(from: 3, limit: 5).isEmpty)
        #expect(try await store.transactions(from: 1, limit: 0).isEmpty)
        try await store.close()
        let closed = await #expect(throws: StoreError.self) { try await store.latestT() }
        #expect(closed?.description == StoreError.closed.description)
        await #expect(throws: StoreError.self) { try await store.transactions(from: 1, limit: 1) }
        await #expect(throws: StoreError.self) { try await store.transactionID(at: 1) }
    }

    @Test("a read-only store serves peers that read; their commits are refused")
    func readOnly() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        for n in 1...5 { try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") } }
        try await store.close()
        var options = StoreOptions()
        options.readOnly = true
        let reader = try await Store.open(at: path, options: options)
        let peer = try await Peer.open(reader)
        #expect(peer.current == reader.current)
        // Refused at once, not retried as an outcome unknown.
        let commit = await #expect(throws: StoreError.self) {
            try await peer.transact { try $0.insert(["n": 6], id: 6, into: "t") }
        }
        #expect(commit?.description == StoreError.readOnly(path: path).description)
        let refused = await #expect(throws: StoreError.self) { try await reader.putSnapshot(reader.current) }
        #expect(refused?.description == StoreError.readOnly(path: path).description)
        try await reader.close()
    }

    @Test(
        "snapshots put by peers are the store's own values; a peer opened later starts from one; past the end is refused"
    )
    func snapshots() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions(.grouped))
        let peer = try await Peer.open(store)
        for n in 1...20 { try await peer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") } }
        let atTen = try await store.database(asOf: 10)
        try await store.putSnapshot(atTen)
        try await peer.snapshot()
        #expect(try await store.snapshotBases() == [10, 20])
        #expect(try await store.snapshot(at: 10) == atTen)
        #expect(try await store.snapshot(at: 11) == nil)
        let ahead = try apply(store.current, Transaction(t: 21, basis: 20))
        #expect(ahead.basis == 21)
        await #expect(throws: HistoryStorageError.self) { try await store.putSnapshot(ahead) }
        for n in 21...25 {
            try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        let late = try await Peer.open(store)
        #expect(late.current == store.current)
        #expect(await late.summaries.map(\.t) == Array(21...25))
        try await store.close()
        // The store's own open uses the snapshot a peer put.
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current == late.current)
        try await reopened.close()
    }

    @Test(
        "peers and two busy store tasks under grouped durability: every commit lands once, no peer starves",
        .timeLimit(.minutes(40))
    )
    func peersBesideBusyStoreWriters() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        // A slow disk: a commit is in flight (appended, not yet published)
        // for 2 ms, nearly always while the store's tasks commit.
        let slowDisk = FaultyFileSystem()
        slowDisk.faults.withLock { $0.syncDelay = .milliseconds(2) }
        var options = testOptions(.grouped)
        options.fileSystem = slowDisk
        let store = try await Store.open(at: path, options: options)
        let peers = [try await Peer.open(store), try await Peer.open(store)]
        // Few commits: under `make test` every hop here waits for a thread
        // that hundreds of other tests keep busy.
        let perWriter = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<2 {
                group.addTask {
                    for n in 0..<perWriter {
                        try await store.transact {
                            try $0.insert(
                                ["by": "store", "n": .int(Int64(n))],
                                id: RecordID(task * 1_000 + n),
                                into: "rows"
                            )
                        }
                    }
                }
            }
            for (p, peer) in peers.enumerated() {
                group.addTask {
                    for n in 0..<perWriter {
                        try await peer.transact {
                            try $0.insert(
                                ["by": "peer", "n": .int(Int64(n))],
                                id: RecordID(10_000 + p * 1_000 + n),
                                into: "rows"
                            )
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let stored = try await store.transactions(from: 1, limit: .max)
        #expect(stored.map(\.t) == Array(1...Int64(4 * perWriter)))
        #expect(Set(stored.map(\.id)).count == stored.count)
        #expect(store.current[table: "rows"].count == 4 * perWriter)
        for peer in peers { #expect(try await peer.catchUp() == store.current) }
        try await store.close()
    }

    @Test(
        "a store closed under a following peer closes it; a cut under it stops it with divergentHistory",
        .timeLimit(.minutes(5))
    )
    func closedAndCutUnderFollowers() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        for n in 1...5 { try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") } }
        let cutFollower = try await Peer.open(store)
        let cutValues = await cutFollower.values()
        await cutFollower.startFollowing()
        try await store.truncate(after: 3)
        for n in 6...9 { try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") } }
        // Its feed ends when it stops.
        for await _ in cutValues {}
        let refused = await #expect(throws: PeerError.self) { try await cutFollower.transact { _ in } }
        guard case .divergentHistory(let t, _) = refused else {
            Issue.record("not divergentHistory: \(String(describing: refused))")
            return
        }
        #expect(t == 5)
        #expect(cutFollower.current.basis == 5, "nothing of the rewritten history was applied")

        // A peer opened from a snapshot (no transaction of its own read),
        // then the history cut below it and grown past it: it notices at
        // its first catch-up after the cut ended its notifications.
        try await store.snapshot()
        let fromSnapshot = try await Peer.open(store)
        #expect(await fromSnapshot.summaries.isEmpty)
        let snapshotValues = await fromSnapshot.values()
        await fromSnapshot.startFollowing()
        try await store.truncate(after: 4)
        for n in 10...15 {
            try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        for await _ in snapshotValues {}
        let snapshotRefused = await #expect(throws: PeerError.self) { try await fromSnapshot.catchUp() }
        guard case .divergentHistory = snapshotRefused else {
            Issue.record("not divergentHistory: \(String(describing: snapshotRefused))")
            return
        }

        let follower = try await Peer.open(store)
        let values = await follower.values()
        await follower.startFollowing()
        try await store.close()
        // The feed ends: the peer closed itself.
        for await _ in values {}
        await #expect(throws: PeerError.self) { try await follower.transact { _ in } }
    }

    @Test("a peer that is not following finds a cut at its next catch-up or commit, and takes none of the new history")
    func cutUnderPeerNotFollowing() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        #expect(store.canCutHistory)
        for n in 1...4 { try await store.transact { try $0.insert(["a": 1], id: RecordID(n), into: "t") } }
        let reader = try await Peer.open(store)
        let writer = try await Peer.open(store)
        let steady = try await Peer.open(store)
        // Not cut under `steady`: it catches up without complaint.
        try await store.transact { try $0.insert(["a": 1], id: 5, into: "t") }
        #expect(try await steady.catchUp() == store.current)
        try await store.truncate(after: 2)
        // Two new transactions: `reader` and `writer` (at t 4) would take t 5 and 6 as following theirs.
        for n in 10...11 { try await store.transact { try $0.insert(["b": 1], id: RecordID(n), into: "t") } }
        let cutForReader = await #expect(throws: PeerError.self) { try await reader.catchUp() }
        guard case .divergentHistory(let t, _) = cutForReader else {
            Issue.record("not divergentHistory: \(String(describing: cutForReader))")
            return
        }
        #expect(t == 4)
        #expect(reader.current.basis == 4, "nothing of the new history applied")
        // A commit would have been stored at t 5 on another history's t 4.
        let cutForWriter = await #expect(throws: PeerError.self) {
            try await writer.transact { try $0.insert(["c": 1], id: 20, into: "t") }
        }
        guard case .divergentHistory = cutForWriter else {
            Issue.record("not divergentHistory: \(String(describing: cutForWriter))")
            return
        }
        #expect(store.current[table: "t"][20] == nil)
        #expect(store.current.basis == 4)
        // A peer opened now reads the new history.
        let fresh = try await Peer.open(store)
        #expect(fresh.current == store.current)
        try await fresh.transact { try $0.insert(["d": 1], id: 30, into: "t") }
        #expect(try await fresh.catchUp() == store.current)
        try await store.close()
    }

    @Test("peers read transactions over 4 KB back from the log across segments and reopen cycles, with a cache")
    func largeTransactionsAndReopens() async throws {
        let path = temporaryStorePath("peer-store")
        let cache = temporaryStorePath("peer-cache")
        defer {
            removeStore(path)
            removeStore(cache)
        }
        var options = testOptions(.grouped)
        options.cachedTransactionChanges = 1
        options.segmentSize = 64 << 10
        var expected = Database()
        for cycle in 0..<6 {
            let store = try await Store.open(at: path, options: options)
            #expect(store.current == expected, "cycle \(cycle)")
            let peer = try await Peer.open(store, cache: cache)
            #expect(peer.current == store.current)
            for n in 0..<8 {
                let id = RecordID(cycle * 100 + n)
                // 5–20 KB of text with characters of every width.
                let text = String(repeating: "añ€😀 ", count: 400 * (1 + (n % 4)))
                try await peer.transact {
                    try $0.insert(["text": .string(text), "n": .int(Int64(n))], id: id, into: "docs")
                }
            }
            let late = try await Peer.open(store)
            #expect(late.current == store.current)
            #expect(try await replayHistory(store) == store.current)
            try await peer.saveCache()
            expected = store.current
            try await store.close()
        }
    }

    @Test("a snapshot put at or before the newest one writes nothing; the first at basis 0 is written")
    func oldSnapshotBases() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.putSnapshot(Database())
        #expect(try await store.snapshotBases() == [0])
        for n in 1...6 { try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") } }
        try await store.putSnapshot(try await store.database(asOf: 5))
        try await store.putSnapshot(try await store.database(asOf: 3))
        try await store.putSnapshot(try await store.database(asOf: 5))
        #expect(try await store.snapshotBases() == [0, 5])
        #expect(snapshotFiles(path).count == 2)
        try await store.close()
    }

    @Test(
        "peers' transactions from empty to 3 MB (message, metadata, changes) read back whole after reopens, a snapshot and a cut"
    )
    func sizesReadBack() async throws {
        let path = temporaryStorePath("peer-store")
        defer { removeStore(path) }
        var options = testOptions(.grouped)
        options.cachedTransactionChanges = 1
        options.segmentSize = 1 << 20
        let sizes = [0, 1, 4_095, 4_096, 4_097, 70_000, 3_000_000]
        var store = try await Store.open(at: path, options: options)
        let peer = try await Peer.open(store)
        try await peer.transact { _ in }
        for (n, size) in sizes.enumerated() {
            let text = String(repeating: "é", count: size / 2) + String(repeating: "x", count: size % 2)
            try await peer.transact(message: text, metadata: ["note": .string(text)]) {
                try $0.insert(["text": .string(text)], id: RecordID(n), into: "docs")
            }
            if n == 3 { try await store.snapshot() }
        }
        let written = try await store.transactions(from: 1, limit: .max)
        #expect(written.count == sizes.count + 1)
        try await store.close()
        for cycle in 0..<3 {
            store = try await Store.open(at: path, options: options)
            #expect(try await store.transactions(from: 1, limit: .max) == written, "cycle \(cycle)")
            #expect(try await Peer.open(store).current == store.current)
            try await store.close()
        }
        store = try await Store.open(at: path, options: options)
        try await store.truncate(after: 5)
        try await store.close()
        store = try await Store.open(at: path, options: options)
        #expect(try await store.transactions(from: 1, limit: .max) == Array(written.prefix(5)))
        #expect(try await replayHistory(store) == store.current)
        try await store.close()
    }

    @Test("peers' transactions of every size read back through compaction blocks, as-of values and reopen cycles")
    func sizesThroughCompactionBlocks() async throws {
        let path = temporaryStorePath("peer-blocks")
        defer { removeStore(path) }
        var options = testOptions(.grouped)
        options.cachedTransactionChanges = 1
        let sizes = [0, 1, 4_095, 4_096, 4_097, 30, 70_000, 900]
        var store = try await Store.open(at: path, options: options)
        let peer = try await Peer.open(store)
        var values: [Int64: Database] = [:]
        // Blocks are kept on disk from 256 transactions on.
        for n in 0..<262 {
            let size = n == 200 ? 3_000_000 : sizes[n % sizes.count]
            let text = String(repeating: "é", count: size / 2) + String(repeating: "x", count: size % 2)
            let report = try await peer.transact(message: text, metadata: ["n": .int(Int64(n))]) {
                try $0.upsert(["text": .string(text)], id: RecordID(n % 37), into: "docs")
            }
            values[report.transaction.t] = report.after
        }
        try await store.compact()
        let blocks = (try? FileManager.default.contentsOfDirectory(atPath: path + "/blocks")) ?? []
        #expect(blocks.contains { $0.hasPrefix("block-") }, "compaction wrote no block")
        let written = try await store.transactions(from: 1, limit: .max)
        #expect(written.count == 262)
        try await store.close()
        for cycle in 0..<3 {
            store = try await Store.open(at: path, options: options)
            #expect(try await store.transactions(from: 1, limit: .max) == written, "cycle \(cycle)")
            for t in [Int64(1), 7, 64, 128, 200, 201, 255, 256, 257, 262] {
                #expect(try await store.database(asOf: t) == values[t], "cycle \(cycle), as of \(t)")
            }
            #expect(try await Peer.open(store).current == values[262])
            try await store.close()
        }
    }

    @Test(
        "called on a Store from async code, isClosed() and transactionID(at:) are the store's own, not the protocol's defaults"
    )
    func ownMethodsOverDefaults() async throws {
        let path = temporaryStorePath("own-methods")
        defer { removeStore(path) }
        var options = testOptions()
        options.segmentSize = 1_024
        var store = try await Store.open(at: path, options: options)
        #expect(await store.isClosed() == false)
        var ids: [UUID] = []
        for n in 1...40 {
            let report = try await store.transact {
                try $0.insert(
                    ["n": .int(Int64(n)), "pad": .string(String(repeating: "x", count: 100))],
                    id: RecordID(n),
                    into: "t"
                )
            }
            ids.append(report.transaction.id)
        }
        try await store.snapshot()
        try await store.close()
        // The protocol's default said "never closed".
        #expect(await store.isClosed())
        // A record damaged in a sealed segment before the snapshot: open
        // reads its summary, not the record, and the store knows every ID.
        let segment = logSegments(path)[0]
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment)))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        store = try await Store.open(at: path, options: testOptions())
        // The default read each transaction from the log: slower, and a damaged one threw.
        for (n, id) in ids.enumerated() { #expect(try await store.transactionID(at: Int64(n + 1)) == id) }
        #expect(try await store.transactionID(at: 41) == nil)
        #expect(try await store.transactionID(at: 0) == nil)
        try await store.close()
        await #expect(throws: StoreError.self) { try await store.transactionID(at: 1) }
    }

    /// Whether `body` threw the peer's divergence (anything else is recorded).
    static func diverges(_ round: Int, _ body: () async throws -> Void) async -> Bool {
        do {
            try await body()
            return false
        } catch PeerError.divergentHistory {
            return true
        } catch {
            Issue.record("round \(round): \(error)")
            return false
        }
    }

    /// A store at `path` holding transactions 1–5, each inserting a record,
    /// with no other process.
    static func storeOfFive(at path: String) async throws -> Store {
        let store = try await Store.open(at: path, options: testOptions())
        for n in 1...5 {
            try await store.transact { try $0.insert(["old": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        return store
    }

    /// ``storeOfFive(at:)`` with a peer following it at 5, then cut after 4.
    static func followerOfCutStore(at path: String) async throws -> (Store, Peer) {
        let store = try await storeOfFive(at: path)
        let follower = try await Peer.open(store)
        await follower.startFollowing()
        // Listening by now, most rounds: it hears of the cut only when its
        // stream ends, after what follows has run.
        try await Task.sleep(for: .milliseconds(5))
        try await store.truncate(after: 4)
        return (store, follower)
    }

    @Test(
        "a following peer's commit on a history cut under it is refused, however soon after the cut: the store checks the commit's basis"
    )
    func commitAfterCut() async throws {
        for round in 0..<30 {
            let path = temporaryStorePath("cut-commit")
            defer { removeStore(path) }
            let (store, follower) = try await Self.followerOfCutStore(at: path)
            // Grown back past the follower's newest number, or not.
            if round % 2 == 0 { try await store.transact { try $0.insert(["new": 5], id: 100, into: "t") } }
            let refused = await Self.diverges(round) {
                try await follower.transact { try $0.insert(["peer": 1], id: 200, into: "t") }
            }
            #expect(refused, "round \(round): stored on the cut history")
            #expect(store.current[table: "t"].records[RecordID(200)] == nil, "round \(round)")
            #expect(await Self.diverges(round) { _ = try await follower.catchUp() }, "round \(round)")
            await follower.close()
            try await store.close()
        }
    }

    @Test("a peer catching up on a history cut under it and grown again refuses it, however soon after the cut")
    func catchUpAfterCut() async throws {
        for round in 0..<30 {
            let path = temporaryStorePath("cut-catch-up")
            defer { removeStore(path) }
            let (store, follower) = try await Self.followerOfCutStore(at: path)
            for n in 5...6 {
                try await store.transact { try $0.insert(["new": .int(Int64(n))], id: RecordID(100 + n), into: "t") }
            }
            // Before: it read transaction 6 of the new history and applied
            // it on its 5 of the old one, when its follow task had not yet
            // heard of the cut.
            #expect(await Self.diverges(round) { _ = try await follower.catchUp() }, "round \(round)")
            #expect(follower.current.basis <= 5, "round \(round)")
            await follower.close()
            try await store.close()
        }
    }

    @Test(
        "through a storage that leaves the basis check to the protocol's default, a cut between the check and the append is still reported"
    )
    func defaultBasisCheck() async throws {
        let path = temporaryStorePath("cut-default")
        defer { removeStore(path) }
        let store = try await Self.storeOfFive(at: path)
        let storage = CuttingStorage(store)
        let peer = try await Peer.open(storage)
        // A commit with no cut: stored, no divergence.
        try await peer.transact { try $0.insert(["peer": 1], id: 100, into: "t") }
        #expect(store.current[table: "t"].records[RecordID(100)] != nil)
        // The store cut and grown again while the peer's append is on its way.
        await storage.cutBeforeNextAppend()
        await #expect(throws: PeerError.self) {
            try await peer.transact { try $0.insert(["peer": 2], id: 200, into: "t") }
        }
        await #expect(throws: PeerError.self) {
            try await peer.transact { try $0.insert(["peer": 3], id: 300, into: "t") }
        }
        #expect(store.current[table: "t"].records[RecordID(300)] == nil)
        try await store.close()
    }
}

/// A storage around a store that passes on every call but
/// `append(_:basisID:)`, so that the protocol's default checks the basis,
/// and can cut the store (truncate, then a commit) just before passing on
/// an append.
actor CuttingStorage: HistoryStorage {
    let store: Store
    private var cutsBeforeAppend = false

    init(_ store: Store) { self.store = store }

    func cutBeforeNextAppend() { cutsBeforeAppend = true }

    func latestT() async throws -> Int64 { try await store.latestT() }
    func append(_ transaction: Transaction) async throws -> HistoryAppend {
        if cutsBeforeAppend {
            cutsBeforeAppend = false
            try await store.truncate(after: transaction.basis - 1)
            try await store.transact { try $0.insert(["new": 1], id: 999, into: "t") }
        }
        return try await store.append(transaction)
    }
    func transactions(from t: Int64, limit: Int) async throws -> [Transaction] {
        try await store.transactions(from: t, limit: limit)
    }
    func transactionID(at t: Int64) async throws -> UUID? { try await store.transactionID(at: t) }
    func newTransactions() async -> AsyncStream<Int64> { await store.newTransactions() }
    func putSnapshot(_ value: Database) async throws { try await store.putSnapshot(value) }
    func snapshotBases() async throws -> [Int64] { try await store.snapshotBases() }
    func snapshot(at basis: Int64) async throws -> Database? { try await store.snapshot(at: basis) }
    func isClosed() async -> Bool { await store.isClosed() }
    nonisolated var canCutHistory: Bool { true }
}
