import Foundation
import Strata
import Testing

/// Snapshots and blocks belong to the exact history they were built from:
/// after a log is cut (by damage or `truncate`) and grows again, nothing of
/// the old history is ever loaded; a truncate killed at any step opens
/// either before it or after it.
@Suite("Store history ties", .serialized)
struct StoreHistoryTieTests {
    /// The offsets of the frames of a log segment's bytes.
    static func frameOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var offset = 24
        while offset + 8 <= bytes.count {
            offsets.append(offset)
            let length = (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
            offset += 8 + length
        }
        return offsets
    }

    static func upsert(_ store: Store, _ i: Int, _ text: String) async throws {
        try await store.transact(message: text) { try $0.upsert(["text": .string(text)], id: RecordID(i), into: "r") }
    }

    @Test("a log cut at damage and grown again never loads the old history's snapshot")
    func staleSnapshotAfterDamage() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        for i in 1...30 { try await Self.upsert(store, i, "old \(i)") }
        try await store.snapshot()
        try await store.close()
        let oldSnapshot = try Data(contentsOf: URL(fileURLWithPath: snapshotFiles(path).last!))

        // Damage the record of t 9.
        let segment = logSegments(path).first!
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))
        bytes[Self.frameOffsets(bytes)[8] + 12] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        await #expect(throws: StoreError.self) { try await Store.open(at: path, options: testOptions()) }

        var recovering = testOptions()
        recovering.recovery = .truncateAtDamage
        let cut = try await Store.open(at: path, options: recovering)
        #expect(cut.current.basis == 8)
        let lost = cut.warnings.compactMap { warning -> Int64? in
            if case .lostTransactions(8, let count, _) = warning { return count } else { return nil }
        }
        #expect(lost.count == 1 && lost[0] >= 22, "\(cut.warnings)")
        #expect(snapshotFiles(path).isEmpty, "the basis-30 snapshot of the dropped history is gone")
        var expected: [Int64: Database] = [8: cut.current]
        for i in 9...40 {
            try await Self.upsert(cut, i, "new \(i)")
            expected[Int64(i)] = cut.current
        }
        try await cut.close()

        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.warnings.isEmpty, "\(reopened.warnings)")
        #expect(reopened.current == expected[40])
        #expect(reopened.current.record(20, in: "r")?["text"] == "new 20")
        #expect(try await reopened.database(asOf: 25) == expected[25])
        try await reopened.close()

        // The old snapshot put back by hand: its basis transaction is of
        // another history, so it is skipped (and removed), never loaded.
        let name = "snapshot-00000000000000000030.strata"
        try oldSnapshot.write(to: URL(fileURLWithPath: path + "/snapshots/" + name))
        let again = try await Store.open(at: path, options: testOptions())
        #expect(again.current == expected[40])
        #expect(again.warnings.contains { if case .skippedSnapshot(name, _) = $0 { true } else { false } })
        #expect(!FileManager.default.fileExists(atPath: path + "/snapshots/" + name))
        #expect(try await again.database(asOf: 30) == expected[30])
        try await again.close()
    }

    /// The crash-writer child, built beside the test bundle.
    static var writerPath: String { StoreCrashTests.writerPath }

    @Test("truncate killed at every step opens before or after it, and the next commits are kept")
    func truncateKilledAtEveryStep() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.writerPath), "missing \(Self.writerPath)")
        let original = temporaryStorePath("truncate")
        defer { removeStore(original) }
        var options = testOptions()
        options.segmentSize = 2_048
        options.snapshotsKept = 10
        let store = try await Store.open(at: original, options: options)
        var values = [store.current]
        for i in 1...300 {
            try await Self.upsert(store, i % 70, "v\(i) " + String(repeating: "z", count: i % 40))
            values.append(store.current)
            if i % 60 == 0 { try await store.snapshot() }
        }
        try await store.close()
        #expect(logSegments(original).count > 3 && snapshotFiles(original).count >= 4)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: original + "/blocks")) ?? []).count >= 1)

        var step = 1
        var completed = false
        var outcomes: Set<Int64> = []
        while !completed && step < 500 {
            let copy = StoreCorruptionTests.copyStore(original)
            defer { removeStore(copy) }
            let child = try ChildProcess(path: Self.writerPath, arguments: [copy, "truncate", "40", String(step)])
            let (text, killedBySignal) = try await child.finish()
            completed = text.contains("truncated")
            #expect(completed || killedBySignal, "step \(step): \(text)")

            let reopened = try await Store.open(at: copy, options: testOptions())
            let basis = reopened.current.basis
            outcomes.insert(basis)
            #expect(basis == 300 || basis == 40, "step \(step): opened at t \(basis)")
            #expect(reopened.current == values[Int(basis)], "step \(step)")
            #expect(reopened.warnings.isEmpty, "step \(step): \(reopened.warnings)")
            if basis == 40 {
                for t in stride(from: 10, through: 40, by: 10) {
                    #expect(try await reopened.database(asOf: Int64(t)) == values[t], "step \(step) t \(t)")
                }
            }
            // The next acknowledged commits survive the next open.
            for i in 0..<5 { try await Self.upsert(reopened, 1_000 + i, "after \(step)") }
            let after = reopened.current
            try await reopened.close()
            let again = try await Store.open(at: copy, options: testOptions())
            #expect(again.current == after, "step \(step): commits after the interrupted truncate lost")
            #expect(again.warnings.isEmpty, "step \(step): \(again.warnings)")
            try await again.close()
            step += 1
        }
        #expect(completed, "the truncate never completed")
        #expect(outcomes == [300, 40], "kills landed both before and after the cut: \(outcomes)")
    }
}
