import Foundation
import Strata
import Synchronization
import Testing

/// What a review of the store as an app uses it found: a read-only store
/// that read another history after its writer truncated, a foreign
/// directory holding a `log` taken for a store, a newer build's longer
/// manifest taken for damage, and a wide record's update quadratic.
@Suite("Store review: rewritten logs, foreign directories, newer manifests, wide records")
struct StoreReviewTests {
    @Test("a read-only store never answers with the writer's new history after a truncate: its own, or a typed error")
    func readerAfterTruncate() async throws {
        let path = temporaryStorePath("review-reader-truncate")
        defer { removeStore(path) }
        let writer = try await Store.open(at: path, options: testOptions(.everyCommit))
        var old: [Database] = [writer.current]
        var ids: [UUID] = []
        for n in 1...40 {
            let report = try await writer.transact(message: "m") {
                try $0.insert(["v": "aaaaaaaaaa"], id: RecordID(n), into: "t")
            }
            ids.append(report.transaction.id)
            old.append(writer.current)
            if n == 5 { try await writer.snapshot() }
        }
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        readOnly.cachedTransactionChanges = 0
        let reader = try await Store.open(at: path, options: readOnly)
        #expect(reader.current == old[40])
        try await writer.truncate(after: 5)
        // Records of the same size: every frame of the new history checks.
        for n in 6...40 {
            try await writer.transact(message: "m") { try $0.insert(["v": "bbbbbbbbbb"], id: RecordID(n), into: "t") }
        }
        for t in Int64(6)...12 {
            do {
                let value = try await reader.database(asOf: t)
                #expect(value == old[Int(t)], "as-of \(t)")
            } catch let error as StoreError {
                guard case .historyChanged(_, _, let reason) = error else {
                    Issue.record("as-of \(t): \(error)")
                    continue
                }
                #expect(reason.contains("was read before"), "\(reason)")
            }
            do {
                let transaction = try await reader.transaction(id: ids[Int(t) - 1])
                #expect(transaction?.id == ids[Int(t) - 1], "transaction \(t)")
            } catch let error as StoreError {
                guard case .historyChanged = error else {
                    Issue.record("transaction \(t): \(error)")
                    continue
                }
            }
        }
        try await reader.close()
        try await writer.close()
    }

    /// The POSIX file system, where the file `vanishing` names is removed
    /// just before it is opened the `opening`th time: a snapshot its writer
    /// pruned between a reader's listing (or header read) and its read.
    final class VanishingFileSystem: ForwardingFileSystem, @unchecked Sendable {
        let base = PosixFileSystem()
        let vanishing: String
        private let opensLeft: Mutex<Int>

        init(vanishing path: String, opening: Int) {
            vanishing = path
            opensLeft = Mutex(opening)
        }

        func open(_ path: String, create: Bool) throws -> any StorageFile {
            let vanishes =
                path == vanishing
                && opensLeft.withLock { left in
                    left -= 1
                    return left == 0
                }
            if vanishes { try base.remove(path) }
            return try base.open(path, create: create)
        }
    }

    /// Found by a review: every writable open now prunes snapshots, and a
    /// read-only open that listed one its writer then removed reported it
    /// as "left in place, not read".
    @Test("a snapshot removed between a read-only open's listing and its read is no warning")
    func snapshotPrunedWhileListed() async throws {
        let path = temporaryStorePath("review-pruned-listed")
        defer { removeStore(path) }
        let writer = try await Store.open(at: path, options: testOptions(.everyCommit))
        for n in 1...3 {
            try await writer.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
            try await writer.snapshot()
        }
        let expected = writer.current
        try await writer.close()
        let snapshots = snapshotFiles(path)
        try #require(snapshots.count >= 2)
        // The oldest before its header is read; the newest after its header, before its value.
        for (vanishing, opening) in [(snapshots.first!, 1), (snapshots.last!, 2)] {
            var readOnly = StoreOptions()
            readOnly.readOnly = true
            readOnly.fileSystem = VanishingFileSystem(vanishing: vanishing, opening: opening)
            let reader = try await Store.open(at: path, options: readOnly)
            #expect(reader.current == expected)
            #expect(reader.warnings.isEmpty, "\(reader.warnings)")
            try await reader.close()
        }
    }

    /// Found by a cold hunt: a segment wholly past the cut is removed, and
    /// its read failed as a bare `FileSystemError` (ENOENT).
    @Test("a read-only store whose writer's truncate removed whole segments reports historyChanged")
    func readerAfterSegmentsRemoved() async throws {
        let path = temporaryStorePath("review-reader-segments")
        defer { removeStore(path) }
        var options = testOptions(.everyCommit)
        options.segmentSize = 256
        let writer = try await Store.open(at: path, options: options)
        for n in 1...40 {
            try await writer.transact(message: "m") {
                try $0.insert(["v": .string(String(repeating: "a", count: 100))], id: RecordID(n), into: "t")
            }
        }
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        readOnly.cachedTransactionChanges = 0
        let reader = try await Store.open(at: path, options: readOnly)
        #expect(reader.current.basis == 40)
        let segmentsBefore = try FileManager.default.contentsOfDirectory(atPath: path + "/log").count
        try await writer.truncate(after: 5)
        let segmentsAfter = try FileManager.default.contentsOfDirectory(atPath: path + "/log").count
        #expect(segmentsAfter < segmentsBefore, "the truncate removed no segment: \(segmentsBefore) → \(segmentsAfter)")
        let reads: [(String, () async throws -> Void)] = [
            ("transaction(at: 30)", { _ = try await reader.transaction(at: 30) }),
            ("history", { _ = try await reader.history(limit: 50) }),
            ("versions(of:)", { _ = try await reader.versions(of: 30, in: "t") }),
            ("database(asOf: 30)", { _ = try await reader.database(asOf: 30) }),
            ("verify()", { try await reader.verify() }),
        ]
        for (label, read) in reads {
            do {
                try await read()
                Issue.record("\(label) read a segment the writer removed")
            } catch let error as StoreError {
                guard case .historyChanged(_, _, let reason) = error else {
                    Issue.record("\(label): \(error)")
                    continue
                }
                // (A record of the segment the cut fell in no longer checks.)
                if label.hasPrefix("transaction") { #expect(reason.contains("segment is gone"), "\(label): \(reason)") }
            } catch {
                Issue.record("\(label): \(type(of: error)) \(error)")
            }
        }
        // What the cut kept still reads.
        #expect(try await reader.transaction(at: 3)?.t == 3)
        try await reader.close()
        try await writer.close()
    }

    @Test("a directory holding a log folder or file of another program is not a store, and nothing is written to it")
    func foreignLog() async throws {
        for shape in ["folder", "file", "empty folder"] {
            let path = temporaryStorePath("review-foreign")
            defer { removeStore(path) }
            switch shape {
            case "file":
                try Data("some app's log\n".utf8).write(to: URL(fileURLWithPath: path + "/log"))
            default:
                try FileManager.default.createDirectory(atPath: path + "/log", withIntermediateDirectories: true)
                if shape == "folder" { try Data("x".utf8).write(to: URL(fileURLWithPath: path + "/log/app.txt")) }
            }
            try Data("notes".utf8).write(to: URL(fileURLWithPath: path + "/notes.txt"))
            let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            for options in [
                StoreOptions(),
                {
                    var o = StoreOptions(); o.readOnly = true; return o
                }(),
            ] {
                await #expect(throws: StoreError.self, "\(shape)") {
                    _ = try await Store.open(at: path, options: options)
                }
                do {
                    _ = try await Store.open(at: path, options: options)
                } catch let error as StoreError {
                    guard case .notAStore = error else {
                        Issue.record("\(shape): \(error)")
                        continue
                    }
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before, "\(shape)")
        }
    }

    @Test("a newer build's manifest of another length is a newer version under every recovery, never rewritten")
    func newerLongerManifest() async throws {
        let path = temporaryStorePath("review-newer-manifest")
        defer { removeStore(path) }
        _ = try await StoreCorruptionTests.makeStore(path, count: 5, snapshotAt: 5)
        let file = URL(fileURLWithPath: path + "/manifest")
        let original = [UInt8](try Data(contentsOf: file))
        for extra in [-20, 4, 8, 100] {
            // Version 2, another length, whatever its checksum.
            var manifest = original
            manifest[8] = 2
            manifest =
                extra < 0
                ? Array(manifest.prefix(manifest.count + extra)) : manifest + Array(repeating: 7, count: extra)
            try Data(manifest).write(to: file)
            for recovery in [Recovery.strict, .truncateAtDamage] {
                var options = testOptions()
                options.recovery = recovery
                do {
                    let store = try await Store.open(at: path, options: options)
                    try await store.close()
                    Issue.record("\(extra), \(recovery): opened")
                } catch let error as StoreError {
                    guard case .unsupportedVersion(_, let found, _) = error else {
                        Issue.record("\(extra), \(recovery): \(error)")
                        continue
                    }
                    #expect(found == 2)
                }
                #expect([UInt8](try Data(contentsOf: file)) == manifest, "\(extra), \(recovery): rewritten")
            }
        }
        // A version 1 manifest of the wrong length is damage, its length named.
        try Data(original + [0, 0, 0, 0]).write(to: file)
        do {
            _ = try await Store.open(at: path, options: testOptions())
            Issue.record("opened")
        } catch let error as StoreError {
            #expect("\(error)".contains("\(original.count + 4) bytes"), "\(error)")
        }
    }

    @Test("the change between two records is the field-by-field model's, over random records sharing names")
    func changeBetween() {
        var random = SeededRandom(seed: 0xD1FF)
        let names: [Key] = ["a", "b", "caf\u{E9}", "cafe\u{301}", "z", "", "ü", "field-7"]
        func record() -> Record {
            var fields: [Key: Value] = [:]
            for name in names where random.int(below: 3) > 0 { fields[name] = .int(Int64(random.int(below: 3))) }
            return Record(fields)
        }
        for round in 0..<3_000 {
            let (old, new) = (record(), record())
            var model: [Key: FieldChange] = [:]
            for name in names where old[name] != new[name] { model[name] = FieldChange(old: old[name], new: new[name]) }
            let expected: Change? = model.isEmpty ? nil : .update(model)
            #expect(Change.between(old, new) == expected, "seed 0xD1FF, round \(round)")
        }
        // A wide record: one pass, so 20,000 fields take no time to diff.
        var wide: [Key: Value] = [:]
        for i in 0..<20_000 { wide[Key("field-\(i)-ñ")] = .int(Int64(i)) }
        var edited = wide
        edited["field-7-ñ"] = "seven"
        edited["field-19999-ñ"] = nil
        #expect(
            Change.between(Record(wide), Record(edited))
                == .update([
                    "field-7-ñ": FieldChange(old: 7, new: "seven"), "field-19999-ñ": FieldChange(old: 19_999, new: nil),
                ])
        )
    }
}
