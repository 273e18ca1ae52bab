import Foundation
import Strata
import Testing

/// A storage that forwards to a memory history, with faults on demand.
actor FaultyStorage: HistoryStorage {
    enum Fault: Sendable {
        /// Stores the append, then throws (a lost acknowledgement).
        case storeThenThrow
        /// Throws without storing, once.
        case throwOnly
        /// Throws without storing, every time.
        case alwaysThrow
        /// Stores another (empty) transaction at the number, then throws, once.
        case otherThenThrow
        /// Answers every append `.taken`.
        case alwaysTaken
        /// Reads give transactions with their basis off by one.
        case wrongBasis
        /// Stores the append, then every call throws (the server went away).
        case storeThenDown
    }

    struct Unreachable: Error {}

    let inner = MemoryHistoryStorage()
    var fault: Fault?
    /// Set once `.storeThenDown` stored its append: every call throws.
    var down = false

    func setFault(_ fault: Fault?) {
        self.fault = fault
        down = false
    }

    func latestT() async throws -> Int64 { await inner.latestT() }

    func append(_ transaction: Transaction) async throws -> HistoryAppend {
        if down { throw Unreachable() }
        switch fault {
        case .storeThenThrow?:
            fault = nil
            _ = try await inner.append(transaction)
            throw Unreachable()
        case .throwOnly?:
            fault = nil
            throw Unreachable()
        case .alwaysThrow?: throw Unreachable()
        case .otherThenThrow?:
            fault = nil
            _ = try await inner.append(Transaction(t: transaction.t, basis: transaction.basis))
            throw Unreachable()
        case .alwaysTaken?: return .taken
        case .storeThenDown?:
            _ = try await inner.append(transaction)
            down = true
            throw Unreachable()
        default: return try await inner.append(transaction)
        }
    }

    /// Calls of `transactions(from:limit:)` so far.
    var reads = 0

    func transactions(from t: Int64, limit: Int) async throws -> [Transaction] {
        reads += 1
        if down { throw Unreachable() }
        let read = await inner.transactions(from: t, limit: limit)
        guard fault == .wrongBasis else { return read }
        return read.map {
            var changed = $0; changed.basis += 1; return changed
        }
    }

    /// Notification streams that never deliver and never end (a
    /// connection left half-open).
    var silentNotifications = false

    func setSilentNotifications(_ silent: Bool) { silentNotifications = silent }

    func newTransactions() async -> AsyncStream<Int64> {
        if silentNotifications { return AsyncStream { _ in } }
        return await inner.newTransactions()
    }
    func putSnapshot(_ value: Database) async throws { await inner.putSnapshot(value) }
    func snapshotBases() async throws -> [Int64] { await inner.snapshotBases() }
    func snapshot(at basis: Int64) async throws -> Database? { await inner.snapshot(at: basis) }
}

/// Where the peers of a test keep their shared history: the same cases run
/// on each.
enum SharedHistory: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case fileStore

    var testDescription: String { rawValue }

    /// A new, empty history; `close` ends it (the file store is closed,
    /// checked, and removed).
    func make() async throws -> (storage: any HistoryStorage, close: @Sendable () async -> Void) {
        switch self {
        case .memory:
            return (MemoryHistoryStorage(), {})
        case .fileStore:
            let path = temporaryStorePath("peers")
            // Without syncs: under `make test` every suite shares the one
            // sync thread, which a grouped commit would wait for (the
            // in-flight window has tests of its own).
            let store = try await Store.open(at: path, options: testOptions(.none))
            return (
                store,
                {
                    do { try await store.close() } catch { Issue.record("closing the store: \(error)") }
                    removeStore(path)
                }
            )
        }
    }
}

@Suite("Peers sharing one history")
struct PeerTests {
    /// Every stored transaction, applied from empty.
    static func replay(_ storage: some HistoryStorage) async throws -> (Database, [Transaction]) {
        let all = try await storage.transactions(from: 1, limit: .max)
        var value = Database()
        for transaction in all { value = try apply(value, transaction) }
        return (value, all)
    }

    @Test(
        "concurrent writers on three peers: every commit stored once, numbered 1…n, every peer at the replayed value",
        arguments: SharedHistory.allCases
    )
    func concurrentWriters(history: SharedHistory) async throws {
        let (storage, closeStorage) = try await history.make()
        let peers = [try await Peer.open(storage), try await Peer.open(storage), try await Peer.open(storage)]
        let perPeer = 60
        let reports = try await withThrowingTaskGroup(of: [CommitReport].self) { group in
            for (p, peer) in peers.enumerated() {
                group.addTask {
                    var reports: [CommitReport] = []
                    for n in 0..<perPeer {
                        // A peer that lost every number it tried (two cores
                        // shared by every suite of `make test` can starve
                        // one) was told its commit is not stored: it tries
                        // again, as an app would.
                        while true {
                            do {
                                reports.append(
                                    try await peer.transact(message: "peer \(p) #\(n)") {
                                        try $0.insert(
                                            ["peer": .int(Int64(p)), "n": .int(Int64(n))],
                                            id: RecordID(p * 1_000 + n),
                                            into: "rows"
                                        )
                                    }
                                )
                                break
                            } catch PeerError.tooManyAttempts {
                                continue
                            }
                        }
                    }
                    return reports
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let (replayed, stored) = try await Self.replay(storage)
        #expect(stored.map(\.t) == Array(1...Int64(3 * perPeer)), "numbered without gaps")
        #expect(Set(stored.map(\.id)).count == stored.count, "no transaction stored twice")
        #expect(Set(reports.map(\.transaction.id)) == Set(stored.map(\.id)), "every acknowledged commit stored")
        for report in reports {
            #expect(stored[Int(report.transaction.t) - 1].id == report.transaction.id, "report and storage agree on t")
            #expect(report.after.basis == report.transaction.t && report.before.basis == report.transaction.t - 1)
        }
        #expect(replayed[table: "rows"].count == 3 * perPeer)
        for peer in peers {
            let value = try await peer.catchUp()
            #expect(value == replayed)
            #expect(peer.current == replayed)
            #expect(await peer.summaries.map(\.id) == stored.map(\.id))
        }
        await closeStorage()
    }

    @Test(
        "a stale commit is rebased when it touches other fields, refused with ApplyError when it conflicts",
        arguments: SharedHistory.allCases
    )
    func rebaseAndConflict(history: SharedHistory) async throws {
        let (storage, closeStorage) = try await history.make()
        let a = try await Peer.open(storage)
        try await a.transact { try $0.insert(["x": 0, "y": 0], id: 1, into: "t") }
        let stale = try await Peer.open(storage)
        let other = try await Peer.open(storage)
        try await a.transact { try $0.update(1, in: "t", [.set("x", 1)]) }

        // Built on t 1, stored at t 3 after reading t 2: its field was untouched.
        let rebased = try await stale.transact { try $0.update(1, in: "t", [.set("y", 2)]) }
        #expect(rebased.transaction.t == 3 && rebased.transaction.basis == 2)
        #expect(stale.current.record(1, in: "t") == ["x": 1, "y": 2])

        // Built on t 1 too, but x changed at t 2: a real conflict, nothing stored.
        await #expect(throws: ApplyError.self) {
            try await other.transact { try $0.update(1, in: "t", [.set("x", 5)]) }
        }
        #expect(try await storage.latestT() == 3)
        #expect(other.current.basis == 3, "the refused commit caught the peer up")
        let (replayed, _) = try await Self.replay(storage)
        #expect(replayed.record(1, in: "t") == ["x": 1, "y": 2])
        await closeStorage()
    }

    @Test(
        "a following peer sees other writers' commits without asking",
        .timeLimit(.minutes(5)),
        arguments: SharedHistory.allCases
    )
    func following(history: SharedHistory) async throws {
        let (storage, closeStorage) = try await history.make()
        let writer = try await Peer.open(storage)
        let follower = try await Peer.open(storage)
        let values = await follower.values()
        await follower.startFollowing()
        await follower.startFollowing()
        for n in 1...20 {
            try await writer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        for await value in values where value.basis == 20 { break }
        #expect(follower.current == writer.current)
        await follower.close()
        await #expect(throws: PeerError.closed) { try await follower.transact { _ in } }
        for await _ in await follower.values() { Issue.record("a closed peer's feed yields") }
        await closeStorage()
    }

    @Test(
        "a follower whose notifications stop without ending still catches up, by its slow poll",
        .timeLimit(.minutes(5))
    )
    func silentNotifications() async throws {
        let storage = FaultyStorage()
        await storage.setSilentNotifications(true)
        let writer = try await Peer.open(storage)
        let follower = try await Peer.open(storage)
        let values = await follower.values()
        let clock = ContinuousClock()
        let following = clock.now
        await follower.startFollowing()
        // Past the follower's first catch-up: only the poll can bring it.
        try await Task.sleep(for: .milliseconds(300))
        try await writer.transact { try $0.insert(["n": 1], id: 1, into: "t") }
        for await value in values where value.basis == 1 { break }
        // Timed from the start of following, when the poll's wait starts:
        // on a busy machine the sleep above may end seconds late, and the
        // poll soon after the commit.
        #expect(
            clock.now - following >= Peer.pollInterval - .milliseconds(50),
            "arrived before the poll: the test proves nothing"
        )
        #expect(follower.current == writer.current)
        await follower.close()
    }

    @Test("a following peer no one holds is freed", .timeLimit(.minutes(5)), arguments: SharedHistory.allCases)
    func followerIsFreed(history: SharedHistory) async throws {
        let (storage, closeStorage) = try await history.make()
        weak var weakPeer: Peer?
        do {
            let peer = try await Peer.open(storage)
            await peer.startFollowing()
            weakPeer = peer
            let writer = try await Peer.open(storage)
            let values = await peer.values()
            try await writer.transact { try $0.insert(["n": 1], id: 1, into: "t") }
            // (A file store tells the follower before the commit returns.)
            if peer.current.basis < 1 { for await value in values where value.basis == 1 { break } }
        }
        // The follow task lets go between notifications.
        let writer = try await Peer.open(storage)
        var n = 2
        while weakPeer != nil {
            try await writer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
            n += 1
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(weakPeer == nil)
        await closeStorage()
    }

    @Test(
        "a peer opened later starts from the newest snapshot and reads only the tail",
        arguments: SharedHistory.allCases
    )
    func lateStart(history: SharedHistory) async throws {
        let (storage, closeStorage) = try await history.make()
        let writer = try await Peer.open(storage)
        for n in 1...10 {
            try await writer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        try await writer.snapshot()
        for n in 11...15 {
            try await writer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        let late = try await Peer.open(storage)
        #expect(late.current == writer.current)
        #expect(await late.summaries.map(\.t) == Array(11...15))
        #expect(try await storage.snapshotBases() == [10])
        await closeStorage()
    }

    @Test("an append whose acknowledgement is lost is found stored, once; a failed one is sent again as it was")
    func lostAcknowledgement() async throws {
        let storage = FaultyStorage()
        let peer = try await Peer.open(storage)
        try await peer.transact { try $0.insert(["a": 1], id: 1, into: "t") }
        await storage.setFault(.storeThenThrow)
        let report = try await peer.transact(message: "lost ack") { try $0.insert(["a": 2], id: 2, into: "t") }
        #expect(report.transaction.t == 2 && report.after.record(2, in: "t") == ["a": 2])
        #expect(report.before.basis == 1 && report.before.record(2, in: "t") == nil)
        // Failed once, its number still free: the same transaction again.
        await storage.setFault(.throwOnly)
        let again = try await peer.transact(message: "again") { try $0.insert(["a": 3], id: 3, into: "t") }
        #expect(again.transaction.t == 3)
        // Failed after another writer took its number: rebased, stored next.
        await storage.setFault(.otherThenThrow)
        let rebased = try await peer.transact(message: "rebased") { try $0.insert(["a": 5], id: 5, into: "t") }
        #expect(rebased.transaction.t == 5 && rebased.before.basis == 4)
        // Failing every time: the number stays free, and a request given up
        // on might still land, so the outcome is unknown, said so.
        await storage.setFault(.alwaysThrow)
        do {
            try await peer.transact(maximumAttempts: 3) { try $0.insert(["a": 9], id: 9, into: "t") }
            Issue.record("a commit no append stored was reported")
        } catch PeerError.outcomeUnknown(_, let t, let reason) {
            #expect(t == 6 && reason.contains("still free"))
        }
        await storage.setFault(nil)
        let (replayed, stored) = try await Self.replay(storage)
        #expect(stored.map(\.message) == ["", "lost ack", "again", "", "rebased"])
        #expect(peer.current == replayed)

        // Stored, then the storage went away: the outcome is unknown, said so.
        await storage.setFault(.storeThenDown)
        do {
            try await peer.transact(message: "unknown") { try $0.insert(["a": 4], id: 4, into: "t") }
            Issue.record("a commit whose outcome cannot be known was reported")
        } catch PeerError.outcomeUnknown(_, let t, _) {
            #expect(t == 6)
        }
        await storage.setFault(nil)
        try await peer.catchUp()
        #expect(peer.current.record(4, in: "t") == ["a": 4], "it was stored; catching up shows it")
    }

    @Test("on a storage that is never cut, a peer that is not following commits without reading")
    func noReadPerCommit() async throws {
        let storage = FaultyStorage()
        #expect(!storage.canCutHistory && !MemoryHistoryStorage().canCutHistory)
        let peer = try await Peer.open(storage)
        let opened = await storage.reads
        for n in 1...10 { try await peer.transact { try $0.insert(["a": .int(Int64(n))], id: RecordID(n), into: "t") } }
        #expect(await storage.reads == opened)
        #expect(try await peer.catchUp().basis == 10)
        #expect(await storage.reads == opened + 1)
    }

    @Test("a storage that never lets a commit in, or serves a broken history, is reported")
    func hostileStorage() async throws {
        let storage = FaultyStorage()
        let peer = try await Peer.open(storage)
        try await peer.transact { try $0.insert(["a": 1], id: 1, into: "t") }
        await storage.setFault(.alwaysTaken)
        await #expect(throws: PeerError.tooManyAttempts(t: 2, attempts: 4)) {
            try await peer.transact(maximumAttempts: 4) { try $0.insert(["a": 2], id: 2, into: "t") }
        }
        await storage.setFault(.wrongBasis)
        do {
            _ = try await Peer.open(storage)
            Issue.record("a history whose bases do not follow opened")
        } catch let error as PeerError {
            guard case .divergentHistory(let t, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(t == 1)
        }
    }

    @Test("the memory storage refuses a transaction past the next number or on another basis")
    func memoryStorageChecks() async throws {
        let storage = MemoryHistoryStorage()
        await #expect(throws: HistoryStorageError.self) { try await storage.append(Transaction(t: 2, basis: 1)) }
        await #expect(throws: HistoryStorageError.self) { try await storage.append(Transaction(t: 1, basis: 5)) }
        #expect(try await storage.append(Transaction(t: 1, basis: 0)) == .appended)
        #expect(try await storage.append(Transaction(t: 1, basis: 0)) == .taken)
        #expect(await storage.transactions(from: 0, limit: 10).count == 1)
        #expect(await storage.transactions(from: 2, limit: 10).isEmpty)
        #expect(await storage.transactions(from: 1, limit: 0).isEmpty)
        #expect(try await storage.append(Transaction(t: 2, basis: 1)) == .appended)
        #expect(await storage.transactions(from: 2, limit: .max).map(\.t) == [2])
    }
}
