import Foundation
import Strata
import Testing

/// Reverts that wait to be admitted as writers (behind a truncate here;
/// behind a segment's rollover or a peer's turn otherwise) build what they
/// commit once admitted (found by a cold review: `revert(to:)` committed
/// a diff from the value before a commit that landed meanwhile, and
/// `revert(transaction:)` the inverse of a transaction a truncate cut).
@Suite("Reverts that wait to be admitted", .serialized)
struct StoreRevertRaceTests {
    static func options(_ gate: SnapshotGateFileSystem) -> StoreOptions {
        var options = StoreOptions()
        options.createIfMissing = true
        options.rebuildBudget = nil
        options.snapshotEveryLogBytes = nil
        options.fileSystem = gate
        return options
    }

    /// Lets the tasks started reach their waits.
    static func settle() async {
        for _ in 0..<20 { await Task.yield() }
        try? await Task.sleep(for: .milliseconds(30))
    }

    /// Holds new writers: a truncate after `t` waiting behind a snapshot
    /// held at the gate.
    static func holdWriters(
        _ store: Store,
        _ gate: SnapshotGateFileSystem,
        truncatingAfter t: Int64
    ) async throws -> (Task<(name: String, size: Int), any Error>, Task<Void, any Error>) {
        let snapshot = Task { try await store.snapshot() }
        while !gate.held { try await Task.sleep(for: .milliseconds(1)) }
        let truncate = Task { try await store.truncate(after: t) }
        await settle()
        return (snapshot, truncate)
    }

    @Test("revert(to:) commits the value after t, though a commit was admitted before it")
    func revertToAfterAnotherCommit() async throws {
        let path = temporaryStorePath("revert-to-race")
        defer { removeStore(path) }
        let gate = SnapshotGateFileSystem()
        let store = try await Store.open(at: path, options: Self.options(gate))
        try await store.transact { try $0.upsert(["v": 0], id: 0, into: "keep") }
        try await store.transact { try $0.upsert(["v": 1], id: 1, into: "keep") }
        let target = try await store.database(asOf: 1)
        let (snapshot, truncate) = try await Self.holdWriters(store, gate, truncatingAfter: 2)
        let other = Task { try await store.transact { try $0.upsert(["x": 1], id: 99, into: "other") } }
        await Self.settle()
        let revert = Task { try await store.revert(to: 1) }
        await Self.settle()
        gate.release()
        _ = try await (snapshot.value, truncate.value, other.value)
        let report = try await revert.value
        #expect(report.after.tables == target.tables, "revert(to: 1) left \(report.after)")
        #expect(store.current.tables == target.tables)
        try await store.close()
    }

    @Test("revert(transaction:) of a transaction a truncate cut while it waited is an unknown transaction")
    func revertOfCutTransaction() async throws {
        let path = temporaryStorePath("revert-cut-race")
        defer { removeStore(path) }
        let gate = SnapshotGateFileSystem()
        let store = try await Store.open(at: path, options: Self.options(gate))
        for w in [1, 2, 1] { try await store.transact { try $0.upsert(["w": .int(Int64(w))], id: 1, into: "s") } }
        let cut = try await store.transact(message: "to 2 again") { try $0.upsert(["w": 2], id: 1, into: "s") }
        let (snapshot, truncate) = try await Self.holdWriters(store, gate, truncatingAfter: 2)
        let revert = Task { try await store.revert(transaction: cut.transaction.id) }
        await Self.settle()
        gate.release()
        _ = try await (snapshot.value, truncate.value)
        await #expect {
            try await revert.value
        } throws: { error in
            guard case .unknownTransaction(let id)? = error as? StoreError else { return false }
            return id == "\(cut.transaction.id)"
        }
        #expect(store.current.basis == 2)
        #expect(store.current.record(1, in: "s")?["w"] == 2)
        try await store.close()
    }
}
