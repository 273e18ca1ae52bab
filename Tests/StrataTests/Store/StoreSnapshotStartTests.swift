import Foundation
import Strata
import Testing

/// Snapshots older than the one open loads are starts for as-of too: open
/// reads their headers, lists those of this history, and an as-of that
/// finds one damaged rebuilds from another start.
@Suite("Store snapshot starts")
struct StoreSnapshotStartTests {
    static func options() -> StoreOptions {
        var options = testOptions()
        options.checkpointsKept = 0
        options.snapshotEveryTransactions = nil
        options.snapshotEveryLogBytes = nil
        options.rebuildBudget = nil
        options.snapshotsKept = 5
        return options
    }

    /// 90 transactions of 20 large records each, snapshots at `snapshots`;
    /// the values after each t.
    static func history(at path: String, text: String, snapshots: Set<Int>) async throws -> [Database] {
        let store = try await Store.open(at: path, options: options())
        var values = [store.current]
        for n in 1...90 {
            try await store.transact { builder in
                for k in 0..<20 {
                    try builder.upsert(
                        ["n": .int(Int64(n)), "text": .string(String(repeating: text, count: 200))],
                        id: RecordID(k),
                        into: "songs"
                    )
                }
            }
            values.append(store.current)
            if snapshots.contains(n) { try await store.snapshot() }
        }
        try await store.close()
        return values
    }

    /// Puts a snapshot of another history (same basis, another value)
    /// in the place of the store's snapshot at t 30.
    static func replaceSnapshot30(of path: String) async throws {
        let other = temporaryStorePath()
        defer { removeStore(other) }
        _ = try await history(at: other, text: "y", snapshots: [30])
        let mine = try snapshotFile(path, basis: 30)
        try FileManager.default.removeItem(atPath: mine)
        try FileManager.default.copyItem(atPath: try snapshotFile(other, basis: 30), toPath: mine)
    }

    static func snapshotFile(_ path: String, basis: Int) throws -> String {
        let directory = path + "/snapshots"
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory).first {
                $0.hasPrefix("snapshot-") && $0.hasSuffix(".strata") && Int($0.dropFirst(9).prefix(20)) == basis
            }
        )
        return directory + "/" + name
    }

    @Test("after reopening, an older snapshot on disk is the start where it is the cheapest")
    func olderSnapshotsAreStarts() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await Self.history(at: path, text: "x", snapshots: [30, 60, 90])
        let store = try await Store.open(at: path, options: Self.options())
        #expect(await store.statistics.snapshotBases == [30, 60, 90])
        #expect(try await store.rebuildPlan(for: 30).start == .snapshot(30))
        #expect(try await store.rebuildPlan(for: 58).start == .snapshot(60))
        for t: Int64 in [0, 29, 30, 31, 45, 58, 60, 61, 89, 90] {
            #expect(try await store.database(asOf: t) == values[Int(t)], "t \(t)")
        }
        try await store.close()
    }

    @Test("a snapshot of another history under an older basis is not listed, and never read for an as-of")
    func foreignOlderSnapshotIsLeftOut() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await Self.history(at: path, text: "x", snapshots: [30, 90])
        try await Self.replaceSnapshot30(of: path)

        let store = try await Store.open(at: path, options: Self.options())
        #expect(await store.statistics.snapshotBases == [90])
        #expect(try await store.rebuildPlan(for: 30).start != .snapshot(30))
        for t: Int64 in [29, 30, 31] {
            #expect(try await store.database(asOf: t) == values[Int(t)], "t \(t)")
        }
        try await store.close()
    }

    @Test("an older snapshot damaged after its header is forgotten by the as-of that finds it, which still answers")
    func damagedOlderSnapshotFallsBack() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await Self.history(at: path, text: "x", snapshots: [30, 90])
        let file = try Self.snapshotFile(path, basis: 30)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        for offset in stride(from: bytes.count / 2, to: bytes.count / 2 + 64, by: 1) { bytes[offset] ^= 0x5A }
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let store = try await Store.open(at: path, options: Self.options())
        #expect(store.warnings.isEmpty)
        #expect(await store.statistics.snapshotBases == [30, 90])
        #expect(try await store.rebuildPlan(for: 30).start == .snapshot(30))
        #expect(try await store.database(asOf: 30) == values[30])
        #expect(await store.statistics.snapshotBases == [90])
        #expect(try await store.rebuildPlan(for: 30).start != .snapshot(30))
        #expect(try await store.database(asOf: 31) == values[31])
        // Forgotten: no longer one of the store's snapshots (verify() reports the file).
        await #expect {
            _ = try await store.database(inSnapshot: 30)
        } throws: { error in
            if case .noSnapshot(30)? = error as? StoreError { return true }
            return false
        }
        try await store.close()
    }

    @Test("a listed snapshot replaced by another history's value after open is never read for an as-of")
    func snapshotReplacedAfterOpen() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await Self.history(at: path, text: "x", snapshots: [30, 90])
        let store = try await Store.open(at: path, options: Self.options())
        #expect(await store.statistics.snapshotBases == [30, 90])
        try await Self.replaceSnapshot30(of: path)
        #expect(try await store.database(asOf: 30) == values[30])
        #expect(await store.statistics.snapshotBases == [90])
        try await store.close()
    }

    @Test("a read-only store whose writer cuts the history and snapshots the new t answers as-of from its own history")
    func readerAfterWriterCutsAndRegrows() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await Self.history(at: path, text: "x", snapshots: [30, 60, 90])
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        let reader = try await Store.open(at: path, options: readOnly)
        #expect(await reader.statistics.snapshotBases == [30, 60, 90])
        let writer = try await Store.open(at: path, options: Self.options())
        try await writer.truncate(after: 20)
        for n in 21...30 {
            try await writer.transact { try $0.upsert(["new": .int(Int64(n))], id: 77, into: "songs") }
        }
        try await writer.snapshot()
        // The reader's history is still the one it opened: its t 30 is
        // the value published then, or a typed error, never the writer's.
        for t: Int64 in [30, 60] {
            do {
                #expect(try await reader.database(asOf: t) == values[Int(t)], "t \(t)")
            } catch let error as StoreError {
                if case .noSnapshot = error { Issue.record("t \(t): \(error)") }
            }
        }
        try await writer.close()
        try await reader.close()
    }

    @Test("a listed snapshot that cannot be opened (a directory in its place) is forgotten, and the as-of answers")
    func unreadableSnapshotFallsBack() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await Self.history(at: path, text: "x", snapshots: [30, 90])
        let store = try await Store.open(at: path, options: Self.options())
        let file = try Self.snapshotFile(path, basis: 30)
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        #expect(try await store.database(asOf: 30) == values[30])
        #expect(await store.statistics.snapshotBases == [90])
        try await store.close()
    }
}
