import Foundation
import Strata
import Testing

/// What a cold hunt found: `flatten` combined changes that could not have
/// followed one another (an update replacing another value than the one
/// before left), so a log whose records checksum but do not apply in order
/// (a segment of another store copied in) opened with the other store's
/// values and no warning; one whose records could not combine at all threw
/// a bare `FlattenError`, after a strict open had removed a sound snapshot.
@Suite("Flatten checks values; a log of records that do not apply in order is damage, named")
struct StoreForeignRecordTests {
    @Test("flatten refuses an update that does not replace what the change before left")
    func flattenChecksValues() throws {
        let t1 = Transaction(t: 1, basis: 0, changes: ["songs": [1: .insert(["title": "A"])]])
        let t2 = Transaction(
            t: 2,
            basis: 1,
            changes: ["songs": [1: .update(["title": FieldChange(old: "B", new: "C")])]]
        )
        #expect(throws: ApplyError.self) { try apply(try apply(Database(), t1), t2) }
        #expect(throws: FlattenError.self) { _ = try flatten([t1, t2]) }
        // Each pairing of kinds, mismatched, is refused; matched, combined.
        let update = { (old: Value, new: Value) in Change.update(["title": FieldChange(old: old, new: new)]) }
        let mismatched: [(Change, Change)] = [
            (.insert(["title": "A"]), update("B", "C")),
            (.insert(["title": "A"]), .delete(["title": "B"])),
            (update("A", "B"), update("C", "D")),
            (update("A", "B"), .delete(["title": "C"])),
        ]
        for (first, next) in mismatched {
            #expect(throws: ChangeError.self, "\(first) then \(next)") { _ = try first.then(next) }
        }
        #expect(try Change.insert(["title": "A"]).then(update("A", "B")) == .insert(["title": "B"]))
        #expect(try Change.insert(["title": "A"]).then(.delete(["title": "A"])) == nil)
        #expect(try update("A", "B").then(update("B", "C")) == update("A", "C"))
        #expect(try update("A", "B").then(.delete(["title": "B"])) == .delete(["title": "A"]))
    }

    /// Stores A and B of two transactions, one record a segment (and A a
    /// snapshot at t 2 when asked); B's second segment copied over A's.
    private func storeWithForeignSegment(
        _ a: [(RecordID, Patch?)],
        _ b: [(RecordID, Patch?)],
        snapshot: Bool = false,
        snapshotAfterFirst: Bool = false
    ) async throws -> String {
        let pathA = temporaryStorePath("foreign-a")
        let pathB = temporaryStorePath("foreign-b")
        defer { removeStore(pathB) }
        var options = testOptions()
        options.segmentSize = 1
        for (path, steps) in [(pathA, a), (pathB, b)] {
            let store = try await Store.open(at: path, options: options)
            for (step, (id, patch)) in steps.enumerated() {
                if snapshotAfterFirst, step == 1, path == pathA { try await store.snapshot() }
                try await store.transact { builder in
                    if let patch {
                        try builder.update(id, in: "songs", patch)
                    } else {
                        try builder.insert(["title": .string(path == pathA ? "A" : "B")], id: id, into: "songs")
                    }
                }
            }
            if snapshot, path == pathA { try await store.snapshot() }
            try await store.close()
        }
        let segment = "/log/00000000000000000002.log"
        try FileManager.default.removeItem(atPath: pathA + segment)
        try FileManager.default.copyItem(atPath: pathB + segment, toPath: pathA + segment)
        return pathA
    }

    @Test("a record that updates another value than the log's record before it is damage, named by segment and t")
    func foreignUpdate() async throws {
        let path = try await storeWithForeignSegment(
            [(1, nil), (1, [.set("title", "A2")])],
            [(1, nil), (1, [.set("title", "B2")])]
        )
        defer { removeStore(path) }
        do {
            let store = try await Store.open(at: path, options: testOptions())
            Issue.record("opened with \(store.current.record(1, in: "songs")?["title"] as Any)")
            try await store.close()
        } catch StoreError.corruptLog(let segment, _, let reason) {
            #expect(segment == "00000000000000000002.log" && reason.contains("transaction t 2"), "\(reason)")
        }
        #expect(!(try Store.verify(at: path).isSound))
        // Recovery keeps the records before it, and says what it cut.
        var options = testOptions()
        options.recovery = .truncateAtDamage
        let store = try await Store.open(at: path, options: options)
        #expect(store.current.basis == 1)
        #expect(store.current.record(1, in: "songs")?["title"] == "A")
        #expect(
            store.warnings.contains { if case .truncatedAtDamage = $0 { true } else { false } },
            "\(store.warnings)"
        )
        try await store.transact { try $0.update(1, in: "songs", [.set("title", "A3")]) }
        try await store.close()
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.current.basis == 2 && reopened.current.record(1, in: "songs")?["title"] == "A3")
        try await reopened.verify()
        try await reopened.close()
    }

    @Test(
        "a snapshot the log after it does not apply to is skipped; the log is blamed when the replay from t 0 fails too"
    )
    func snapshotBeforeForeignRecord() async throws {
        let path = try await storeWithForeignSegment(
            [(1, nil), (1, [.set("title", "A2")])],
            [(1, nil), (1, [.set("title", "B2")])],
            snapshotAfterFirst: true
        )
        defer { removeStore(path) }
        #expect(snapshotFiles(path).count == 1)
        await #expect(throws: StoreError.self) { _ = try await Store.open(at: path, options: testOptions()) }
        var options = testOptions()
        options.recovery = .truncateAtDamage
        let store = try await Store.open(at: path, options: options)
        #expect(store.current.basis == 1 && store.current.record(1, in: "songs")?["title"] == "A")
        try await store.close()
    }

    @Test("a snapshot of another history is removed once the open has its value, also when summaries were read first")
    func foreignSnapshotRemoved() async throws {
        let path = temporaryStorePath("foreign-snapshot")
        defer { removeStore(path) }
        var options = testOptions()
        options.segmentSize = 256
        var store = try await Store.open(at: path, options: options)
        for n in 1...12 {
            try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        try await store.snapshot()
        let name = try #require(snapshotFiles(path).last)
        let old = try Data(contentsOf: URL(fileURLWithPath: name))
        try await store.truncate(after: 6)
        for n in 7...12 {
            try await store.transact { try $0.insert(["m": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        try await store.close()
        // The snapshot of the history before the cut, put back as the newest.
        for file in snapshotFiles(path) { try FileManager.default.removeItem(atPath: file) }
        try old.write(to: URL(fileURLWithPath: name))
        store = try await Store.open(at: path, options: options)
        #expect(store.current.record(12, in: "t")?["m"] == .int(12))
        #expect(store.warnings.contains { "\($0)".contains("another history") }, "\(store.warnings)")
        #expect(!FileManager.default.fileExists(atPath: name), "the foreign snapshot is still there")
        try await store.close()
    }

    @Test("records that cannot combine are damage, not a FlattenError; a strict open that refuses removes nothing")
    func foreignInsert() async throws {
        for snapshot in [false, true] {
            let path = try await storeWithForeignSegment(
                [(1, nil), (2, nil)],
                [(2, nil), (1, nil)],
                snapshot: snapshot
            )
            defer { removeStore(path) }
            let before = snapshotFiles(path)
            #expect(before.count == (snapshot ? 1 : 0))
            do {
                let store = try await Store.open(at: path, options: testOptions())
                Issue.record("opened at t \(store.current.basis)")
                try await store.close()
            } catch StoreError.corruptLog(let segment, _, let reason) {
                #expect(segment == "00000000000000000002.log" && reason.contains("does not apply"), "\(reason)")
            }
            #expect(snapshotFiles(path) == before, "a refused open removed a file")
            var options = testOptions()
            options.recovery = .truncateAtDamage
            let store = try await Store.open(at: path, options: options)
            #expect(store.current.basis == 1 && store.current[table: "songs"].count == 1, "snapshot \(snapshot)")
            #expect(store.warnings.contains { if case .truncatedAtDamage = $0 { true } else { false } })
            try await store.close()
        }
    }
}
