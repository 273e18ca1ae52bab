import Foundation
import Strata
import Testing

/// Missing or cut log segments are reported as what they are: `.strict`
/// refuses to open when acknowledged history is gone; `.truncateAtDamage`
/// opens the longest sound prefix and says how many transactions were lost.
@Suite("Store missing history")
struct StoreMissingHistoryTests {
    /// A closed store of `count` transactions over small segments.
    static func makeStore(_ path: String, count: Int, close: Bool = true) async throws -> (Store, [Database]) {
        var options = testOptions()
        options.segmentSize = 1_024
        let store = try await Store.open(at: path, options: options)
        var values = [store.current]
        for i in 1...count {
            try await store.transact(message: "t\(i)") {
                try $0.insert(["text": .string(String(repeating: "w", count: 40 + i))], id: RecordID(i), into: "r")
            }
            values.append(store.current)
        }
        if close { try await store.close() }
        return (store, values)
    }

    static var recovering: StoreOptions {
        var options = testOptions()
        options.recovery = .truncateAtDamage
        return options
    }

    static func lost(_ store: Store) -> [Int64] {
        store.warnings.compactMap { if case .lostTransactions(_, let count, _) = $0 { count } else { nil } }
    }

    /// The first record number of a segment file.
    static func first(_ segment: String) -> Int {
        Int(URL(fileURLWithPath: segment).deletingPathExtension().lastPathComponent)!
    }

    @Test("a deleted newest segment is refused under .strict and counted under .truncateAtDamage")
    func deletedNewestSegment() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let (_, values) = try await Self.makeStore(path, count: 60)
        let segments = logSegments(path)
        #expect(segments.count >= 3)
        let newest = segments.last!
        let firstLost = Self.first(newest)
        try FileManager.default.removeItem(atPath: newest)
        do {
            let store = try await Store.open(at: path, options: testOptions())
            Issue.record("opened at t \(store.current.basis) with a segment missing")
        } catch StoreError.missingHistory(let reached, let expected, _) {
            #expect(reached == Int64(firstLost - 1) && expected == 60)
        }
        let store = try await Store.open(at: path, options: Self.recovering)
        #expect(store.current == values[firstLost - 1])
        #expect(Self.lost(store) == [Int64(60 - firstLost + 1)], "\(store.warnings)")
        try await store.close()
        let clean = try await Store.open(at: path, options: testOptions())
        #expect(clean.warnings.isEmpty && clean.current == values[firstLost - 1])
        try await clean.close()
    }

    @Test("a deleted newest segment is refused even when the writer died without closing")
    func deletedNewestSegmentAfterCrash() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let (store, _) = try await Self.makeStore(path, count: 60, close: false)
        let newest = logSegments(path).last!
        let copy = StoreCorruptionTests.copyStore(path)
        defer { removeStore(copy) }
        try await store.close()
        try FileManager.default.removeItem(atPath: copy + "/log/" + URL(fileURLWithPath: newest).lastPathComponent)
        try? FileManager.default.removeItem(atPath: copy + "/lock")
        // The copy's manifest is the one of a live store: it names the newest segment.
        await #expect(throws: StoreError.self) { try await Store.open(at: copy, options: testOptions()) }
        let recovered = try await Store.open(at: copy, options: Self.recovering)
        #expect(!recovered.warnings.isEmpty)
        #expect(recovered.current.basis == Int64(Self.first(newest) - 1))
        try await recovered.close()
    }

    @Test("a newest segment cut to 0 bytes is damage, not a crash during its creation")
    func emptiedNewestSegment() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let (_, values) = try await Self.makeStore(path, count: 60)
        let newest = logSegments(path).last!
        let firstLost = Self.first(newest)
        try Data().write(to: URL(fileURLWithPath: newest))
        await #expect(throws: StoreError.self) { try await Store.open(at: path, options: testOptions()) }
        let store = try await Store.open(at: path, options: Self.recovering)
        #expect(store.current == values[firstLost - 1])
        #expect(Self.lost(store) == [Int64(60 - firstLost + 1)], "\(store.warnings)")
        #expect(!store.warnings.contains { if case .tornTail = $0 { true } else { false } })
        try await store.close()
    }

    @Test("a missing middle segment opens the prefix before it under .truncateAtDamage")
    func missingMiddleSegment() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let (_, values) = try await Self.makeStore(path, count: 60)
        let segments = logSegments(path)
        let middle = segments[1]
        let gap = Self.first(middle)
        try FileManager.default.removeItem(atPath: middle)
        do {
            _ = try await Store.open(at: path, options: testOptions())
            Issue.record("opened with a middle segment missing")
        } catch let error as StoreError {
            #expect("\(error)".contains("missing"), "\(error)")
        }
        let store = try await Store.open(at: path, options: Self.recovering)
        #expect(store.current == values[gap - 1])
        #expect(Self.lost(store) == [Int64(60 - gap + 1)], "\(store.warnings)")
        try await store.close()
        #expect(logSegments(path).count == 1)
        let clean = try await Store.open(at: path, options: testOptions())
        #expect(clean.warnings.isEmpty && clean.current == values[gap - 1])
        try await clean.close()
    }

    @Test("a damaged manifest is refused under .strict and rebuilt under .truncateAtDamage")
    func damagedManifest() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let (_, values) = try await Self.makeStore(path, count: 10)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/manifest")))
        bytes[20] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/manifest"))
        do {
            _ = try await Store.open(at: path, options: testOptions())
            Issue.record("opened with a damaged manifest")
        } catch StoreError.corruptManifest {}
        let store = try await Store.open(at: path, options: Self.recovering)
        #expect(store.current == values[10])
        #expect(store.warnings.contains { if case .rebuiltManifest = $0 { true } else { false } })
        try await store.close()
        let clean = try await Store.open(at: path, options: testOptions())
        #expect(clean.warnings.isEmpty)
        try await clean.close()
    }

    @Test("a store from before manifests opens and gains one")
    func storeWithoutManifest() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let (_, values) = try await Self.makeStore(path, count: 10)
        try FileManager.default.removeItem(atPath: path + "/manifest")
        var options = testOptions()
        options.createIfMissing = false
        let store = try await Store.open(at: path, options: options)
        #expect(store.current == values[10] && store.warnings.isEmpty)
        try await store.close()
        #expect(FileManager.default.fileExists(atPath: path + "/manifest"))
    }
}

/// Opening creates a store only when asked, and refuses what is not one.
@Suite("Store directory")
struct StoreDirectoryTests {
    static var opening: StoreOptions {
        var options = testOptions()
        options.createIfMissing = false
        return options
    }

    @Test("a missing path is an error unless creating is asked for, and nothing is created")
    func missingPath() async throws {
        let path = temporaryStorePath() + "/mistyped"
        defer { removeStore(path) }
        do {
            _ = try await Store.open(at: path, options: Self.opening)
            Issue.record("a missing path opened")
        } catch StoreError.noStore(let reported) {
            #expect(reported == path)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        let created = try await Store.open(at: path, options: testOptions())
        try await created.transact { try $0.insert(["a": 1], id: 1, into: "t") }
        try await created.close()
        let reopened = try await Store.open(at: path, options: Self.opening)
        #expect(reopened.current.basis == 1)
        try await reopened.close()
    }

    @Test("a file, a directory of other files, an empty directory and an empty path are not stores")
    func notAStore() async throws {
        let root = temporaryStorePath()
        defer { removeStore(root) }
        let file = root + "/file"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
        let others = root + "/others"
        try FileManager.default.createDirectory(atPath: others, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: others + "/notes.txt"))
        let empty = root + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let cases = [
            (file, false), (file, true), (others, false), (others, true), (empty, false), ("", false), ("", true),
        ]
        for (path, creating) in cases {
            var options = Self.opening
            options.createIfMissing = creating
            do {
                _ = try await Store.open(at: path, options: options)
                Issue.record("\(path) opened as a store (creating: \(creating))")
            } catch StoreError.notAStore(let reported, let reason) {
                #expect(reported == path && !reason.isEmpty)
            }
        }
        // Read-only, and the log reader: an empty path is refused the same way.
        let readOnly = {
            var options = Self.opening
            options.readOnly = true
            return options
        }()
        let opens: [@Sendable () async throws -> Void] = [
            { _ = try await Store.open(at: "", options: readOnly) }, { _ = try await StoreLog.open(at: "") },
        ]
        for open in opens {
            do {
                try await open()
                Issue.record("an empty path opened")
            } catch StoreError.notAStore(let reported, let reason) {
                #expect(reported.isEmpty && reason == "the path is empty")
                #expect(
                    "\(StoreError.notAStore(path: reported, reason: reason))"
                        == #""" is not a Strata store: the path is empty"#
                )
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: others) == ["notes.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        var creating = Self.opening
        creating.createIfMissing = true
        let store = try await Store.open(at: empty, options: creating)
        try await store.close()
    }

    @Test("a store reopened many times snapshots by the log after its newest snapshot")
    func reopenedOftenSnapshots() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions()
        options.snapshotEveryLogBytes = 64 << 10
        options.rebuildBudget = nil
        var roundBytes = 0
        for round in 0..<40 {
            let store = try await Store.open(at: path, options: options)
            let before = await store.statistics.logBytesSinceSnapshot
            for i in 0..<40 {
                try await store.transact(message: "round \(round)") {
                    try $0.upsert(
                        ["n": .int(Int64(i)), "pad": .string(String(repeating: "p", count: 20))],
                        id: RecordID(i),
                        into: "r"
                    )
                }
            }
            roundBytes = max(roundBytes, await store.statistics.logBytesSinceSnapshot - before)
            try await store.close()
        }
        let store = try await Store.open(at: path, options: options)
        let statistics = await store.statistics
        #expect(!snapshotFiles(path).isEmpty, "no snapshot after 1,600 commits of \(statistics.logBytes) log bytes")
        #expect(statistics.lastSnapshotBasis > 0)
        #expect(statistics.logBytesSinceSnapshot < (64 << 10) + roundBytes, "\(statistics)")

        // A truncate below the newest snapshot measures from the one before it.
        let cutAt = statistics.lastSnapshotBasis - 1
        try await store.truncate(after: cutAt)
        let afterCut = await store.statistics
        #expect(afterCut.lastSnapshotBasis < cutAt || afterCut.lastSnapshotBasis == 0)
        #expect(snapshotFiles(path).allSatisfy { !$0.hasSuffix(String(statistics.lastSnapshotBasis) + ".strata") })
        try await store.close()
        let reopened = try await Store.open(at: path, options: options)
        let reopenedStatistics = await reopened.statistics
        #expect(reopenedStatistics.logBytesSinceSnapshot == afterCut.logBytesSinceSnapshot)
        #expect(reopenedStatistics.lastSnapshotBasis == afterCut.lastSnapshotBasis)
        try await reopened.close()
    }
}
