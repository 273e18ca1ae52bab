import Foundation
import Strata
import Testing

/// What an app's surroundings do to a store's directory: an early record
/// damaged behind sound snapshots, a working directory that changes, stray
/// files named like snapshots, a newer build's files, a lock file deleted,
/// segments smaller than a header.
@Suite("Store: the directory's surroundings", .serialized)
struct StoreDirectoryEdgeTests {
    /// 60 commits over 4 KiB segments, snapshots at t 30 and t 50, then
    /// one bit of transaction 2's record flipped (a sealed segment, known
    /// at open by its summary); with `damageNewestSnapshot`, the last byte
    /// of snapshot 50 too.
    static func damagedEarly(_ path: String, damageNewestSnapshot: Bool) async throws {
        var options = StoreOptions()
        options.createIfMissing = true
        options.segmentSize = 4_096
        options.rebuildBudget = nil
        let store = try await Store.open(at: path, options: options)
        for i in 1...60 {
            try await store.transact(message: "write \(i)") { builder in
                try builder.upsert(
                    ["n": .int(Int64(i)), "pad": .string(String(repeating: "y", count: 400))],
                    id: RecordID(i),
                    into: "items"
                )
            }
            if i == 30 || i == 50 { _ = try await store.snapshot() }
        }
        try await store.close()
        let first = URL(fileURLWithPath: logSegments(path)[0])
        var bytes = try Data(contentsOf: first)
        bytes[24 + 500] ^= 0x01
        try bytes.write(to: first)
        if damageNewestSnapshot {
            let newest = URL(fileURLWithPath: snapshotFiles(path).last!)
            var snapshot = try Data(contentsOf: newest)
            snapshot[snapshot.count - 1] ^= 0x01
            try snapshot.write(to: newest)
        }
    }

    @Test(
        "damage before an older sound snapshot costs as-of into it, not the value: the open falls back to that snapshot",
        arguments: [Recovery.strict, .truncateAtDamage]
    )
    func earlyDamageBehindSnapshots(recovery: Recovery) async throws {
        let path = temporaryStorePath("early-damage")
        defer { removeStore(path) }
        try await Self.damagedEarly(path, damageNewestSnapshot: true)
        var options = StoreOptions()
        options.recovery = recovery
        let store = try await Store.open(at: path, options: options)
        #expect(store.current.basis == 60 && store.current.recordCount == 60, "\(store.warnings)")
        #expect(store.warnings.contains { if case .skippedSnapshot = $0 { true } else { false } })
        #expect(!store.warnings.contains { if case .lostTransactions = $0 { true } else { false } })
        // Nothing sound was removed: snapshot 30 and every segment are still there.
        #expect(snapshotFiles(path).count == 2)
        #expect(try await store.database(asOf: 40).recordCount == 40)
        await #expect(throws: StoreError.self) { _ = try await store.database(asOf: 2) }
        try await store.close()
    }

    @Test("a store opened by a relative path writes to itself after the working directory changes")
    func relativePath() async throws {
        let first = temporaryStorePath("relative-a")
        let second = temporaryStorePath("relative-b")
        defer {
            removeStore(first)
            removeStore(second)
        }
        let saved = FileManager.default.currentDirectoryPath
        defer { FileManager.default.changeCurrentDirectoryPath(saved) }
        var options = StoreOptions()
        options.createIfMissing = true
        options.segmentSize = 4_096
        // A store of the same name in the directory the process moves to.
        let other = try await Store.open(at: second + "/library.strata", options: options)
        try await other.transact { try $0.insert(["x": 1], id: 1, into: "other") }
        try await other.close()
        try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: true)
        FileManager.default.changeCurrentDirectoryPath(first)
        let store = try await Store.open(at: "library.strata", options: options)
        #expect(store.path.hasPrefix("/") && store.path.hasSuffix("/library.strata"))
        FileManager.default.changeCurrentDirectoryPath(second)
        for i in 1...12 {
            try await store.transact {
                try $0.insert(["pad": .bytes([UInt8](repeating: 1, count: 1_000))], id: RecordID(i), into: "t")
            }
        }
        try await store.close()
        let again = try await Store.open(at: first + "/library.strata")
        #expect(again.current.basis == 12)
        try await again.close()
        let otherAgain = try await Store.open(at: second + "/library.strata")
        #expect(otherAgain.current.basis == 1 && otherAgain.current.record(1, in: "other") != nil)
        try await otherAgain.close()
    }

    @Test("a file named like a snapshot is no evidence of history until its header says so", arguments: [0, 40, 64])
    func strayFileNamedLikeASnapshot(size: Int) async throws {
        let path = temporaryStorePath("stray-snapshot")
        defer { removeStore(path) }
        var options = StoreOptions()
        options.createIfMissing = true
        let store = try await Store.open(at: path, options: options)
        for i in 1...5 { try await store.transact { try $0.insert(["n": .int(Int64(i))], id: RecordID(i), into: "t") } }
        _ = try await store.snapshot()
        try await store.close()
        let stray = path + "/snapshots/snapshot-00000000000000000999.strata"
        let garbage = [UInt8]((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        // An empty file, garbage, or another store's snapshot (basis 5) under that name.
        let contents = size == 64 ? try Data(contentsOf: URL(fileURLWithPath: snapshotFiles(path)[0])) : Data(garbage)
        FileManager.default.createFile(atPath: stray, contents: contents)
        for recovery in [Recovery.strict, .truncateAtDamage] {
            var reopen = StoreOptions()
            reopen.recovery = recovery
            let again = try await Store.open(at: path, options: reopen)
            #expect(again.current.basis == 5 && again.current.recordCount == 5)
            #expect(again.warnings.contains { if case .skippedSnapshot = $0 { true } else { false } })
            #expect(!again.warnings.contains { if case .lostTransactions = $0 { true } else { false } })
            try await again.close()
            #expect(FileManager.default.fileExists(atPath: stray), "the stray file was not the store's to remove")
        }
    }

    @Test("a store whose directory was deleted and made again by another open writes nothing into the new store")
    func directoryReplacedWhileOpen() async throws {
        let path = temporaryStorePath("replaced")
        defer { removeStore(path) }
        var options = StoreOptions()
        options.createIfMissing = true
        options.segmentSize = 4_096
        let stale = try await Store.open(at: path, options: options)
        for i in 1...3 {
            try await stale.transact {
                try $0.insert(["pad": .bytes([UInt8](repeating: 1, count: 1_000))], id: RecordID(i), into: "old")
            }
        }
        // "Start over" while an old instance still runs: the directory goes,
        // a new store takes its place.
        try FileManager.default.removeItem(atPath: path)
        let fresh = try await Store.open(at: path, options: options)
        for i in 1...2 {
            try await fresh.transact { try $0.insert(["n": .int(Int64(i))], id: RecordID(i), into: "fresh") }
        }
        try await fresh.close()
        var failures: [String] = []
        for i in 4...12 {
            do {
                try await stale.transact {
                    try $0.insert(["pad": .bytes([UInt8](repeating: 1, count: 1_000))], id: RecordID(i), into: "old")
                }
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.contains { $0.contains("removed or replaced since the store opened") }, "\(failures)")
        await #expect(throws: (any Error).self) { _ = try await stale.snapshot() }
        try? await stale.close()
        let again = try await Store.open(at: path)
        #expect(again.current.tableNames == ["fresh"] && again.current.basis == 2, "\(again.current)")
        #expect(again.warnings.isEmpty, "\(again.warnings)")
        try await again.verify()
        try await again.close()
    }

    @Test("a stray file named past the history takes no snapshot's place when the store prunes its snapshots")
    func strayFileKeepsNoSlot() async throws {
        let path = temporaryStorePath("stray-prune")
        defer { removeStore(path) }
        var options = testOptions()
        options.snapshotsKept = 1
        let store = try await Store.open(at: path, options: options)
        for i in 1...5 { try await store.transact { try $0.insert(["n": .int(Int64(i))], id: RecordID(i), into: "t") } }
        _ = try await store.snapshot()
        try await store.close()
        let stray = path + "/snapshots/snapshot-00000000000000000999.strata"
        FileManager.default.createFile(atPath: stray, contents: Data([1, 2, 3]))
        let again = try await Store.open(at: path, options: options)
        try await again.transact { try $0.insert(["n": 6], id: 6, into: "t") }
        let written = try await again.snapshot()
        try await again.close()
        let names = snapshotFiles(path).map { URL(fileURLWithPath: $0).lastPathComponent }
        #expect(Set(names) == [written.name, "snapshot-00000000000000000999.strata"], "\(names)")
        let third = try await Store.open(at: path, options: options)
        #expect(third.current.basis == 6)
        #expect(await third.statistics.snapshotBases == [6])
        try await third.close()
    }

    @Test("a newer build's snapshot whose header grew is refused as newer, not skipped as damaged")
    func newerSnapshotWithALargerHeader() async throws {
        let path = temporaryStorePath("newer-snapshot")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.insert(["n": 1], id: 1, into: "t") }
        try await store.close()
        // Format version 9, a 72-byte header closed by its own checksum, basis 1.
        var header = Array("STRATSNP".utf8)
        withUnsafeBytes(of: UInt32(9).littleEndian) { header += $0 }
        withUnsafeBytes(of: UInt32(0).littleEndian) { header += $0 }
        withUnsafeBytes(of: UInt64(1).littleEndian) { header += $0 }
        header += [UInt8](repeating: 0, count: 68 - header.count)
        withUnsafeBytes(of: CRC32C.checksum(header).littleEndian) { header += $0 }
        let file = path + "/snapshots/snapshot-00000000000000000001.strata"
        try Data(header + [UInt8](repeating: 0x33, count: 100)).write(to: URL(fileURLWithPath: file))
        await #expect {
            _ = try await Store.open(at: path)
        } throws: { error in
            guard case StoreError.unsupportedVersion(_, let found, _) = error else { return false }
            return found == 9
        }
        #expect(FileManager.default.fileExists(atPath: file))
        // Verify compares it on another thread while the replay goes on,
        // and ends as open does.
        #expect {
            _ = try Store.verify(at: path)
        } throws: { error in
            guard case StoreError.unsupportedVersion(_, let found, _) = error else { return false }
            return found == 9
        }
    }

    /// A snapshot file of format version 9 with basis `basis`; its path.
    static func newerSnapshot(in path: String, basis: Int64) throws -> String {
        var header = Array("STRATSNP".utf8)
        withUnsafeBytes(of: UInt32(9).littleEndian) { header += $0 }
        withUnsafeBytes(of: UInt32(0).littleEndian) { header += $0 }
        withUnsafeBytes(of: UInt64(basis).littleEndian) { header += $0 }
        header += [UInt8](repeating: 0, count: 68 - header.count)
        withUnsafeBytes(of: CRC32C.checksum(header).littleEndian) { header += $0 }
        let file = path + "/snapshots/" + String(format: "snapshot-%020lld.strata", basis)
        try Data(header + [UInt8](repeating: 0x33, count: 100)).write(to: URL(fileURLWithPath: file))
        return file
    }

    @Test("newer snapshots at t 1, 2 and 3 of one segment: verify names the first, as when it compared them in turn")
    func firstNewerSnapshotIsNamed() async throws {
        let path = temporaryStorePath("newer-snapshots")
        defer { removeStore(path) }
        var options = testOptions()
        options.segmentSize = 1 << 20
        let store = try await Store.open(at: path, options: options)
        for i in 1...3 { try await store.transact { try $0.insert(["n": .int(Int64(i))], id: RecordID(i), into: "t") } }
        try await store.close()
        for newest in [3, 2] as [Int64] {
            var files: [String] = []
            for basis in 1...newest { files.append(try Self.newerSnapshot(in: path, basis: basis)) }
            #expect {
                _ = try Store.verify(at: path)
            } throws: { error in
                guard case StoreError.unsupportedVersion(let file, let found, _) = error else { return false }
                return found == 9 && file == files[0]
            }
            for file in files { try FileManager.default.removeItem(atPath: file) }
        }
        // Only the last: it is the one named.
        let last = try Self.newerSnapshot(in: path, basis: 3)
        #expect {
            _ = try Store.verify(at: path)
        } throws: { error in
            guard case StoreError.unsupportedVersion(let file, _, _) = error else { return false }
            return file == last
        }
    }

    /// A file system written against the protocol before directory locks
    /// and identities: the defaults (no directory lock, no identity) apply.
    struct PlainFileSystem: FileSystem {
        let base = PosixFileSystem()
        func open(_ path: String, create: Bool) throws -> any StorageFile { try base.open(path, create: create) }
        func contents(ofDirectory path: String) throws -> [String] { try base.contents(ofDirectory: path) }
        func createDirectory(_ path: String) throws { try base.createDirectory(path) }
        func remove(_ path: String) throws { try base.remove(path) }
        func rename(_ source: String, to destination: String) throws { try base.rename(source, to: destination) }
        func syncDirectory(_ path: String) throws { try base.syncDirectory(path) }
        func exists(_ path: String) -> Bool { base.exists(path) }
        func lock(_ path: String) throws -> any StorageFile { try base.lock(path) }
    }

    @Test("a file system without directory locks or identities still opens, commits, snapshots and reopens")
    func plainFileSystem() async throws {
        let path = temporaryStorePath("plain-fs")
        defer { removeStore(path) }
        var options = testOptions()
        options.fileSystem = PlainFileSystem()
        options.segmentSize = 4_096
        let store = try await Store.open(at: path, options: options)
        for i in 1...20 {
            try await store.transact {
                try $0.insert(["pad": .string(String(repeating: "p", count: 500))], id: RecordID(i), into: "t")
            }
        }
        _ = try await store.snapshot()
        try await store.close()
        let again = try await Store.open(at: path, options: options)
        #expect(again.current.basis == 20)
        try await again.verify()
        try await again.close()
        #expect(RecordID("no\u{A0}break").description == #""no\u{A0}break""#)
        #expect(RecordID("a b").description == #""a b""#)
    }

    @Test(
        "compaction blocks that cannot be listed (their directory replaced by a file) are a note to verify, not damage"
    )
    func blocksDirectoryReplaced() async throws {
        let path = temporaryStorePath("blocks-file")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        for i in 1...5 { try await store.transact { try $0.insert(["n": .int(Int64(i))], id: RecordID(i), into: "t") } }
        try await store.close()
        try FileManager.default.removeItem(atPath: path + "/blocks")
        FileManager.default.createFile(atPath: path + "/blocks", contents: Data("not a directory".utf8))
        let report = try Store.verify(at: path)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.notes.contains { $0.contains("compaction blocks cannot be read") }, "\(report.notes)")
        #expect(report.transactions == 5)
    }

    @Test("a newer build's log segment whose header grew is refused as newer and never cut")
    func newerSegmentWithALargerHeader() async throws {
        let path = temporaryStorePath("newer-header")
        defer { removeStore(path) }
        var options = StoreOptions()
        options.createIfMissing = true
        let store = try await Store.open(at: path, options: options)
        try await store.transact { try $0.insert(["n": 1], id: 1, into: "t") }
        try await store.close()
        // Format version 2 with 8 more header bytes, its checksum at its own end.
        var header = Array("STRATLOG".utf8)
        withUnsafeBytes(of: UInt32(2).littleEndian) { header += $0 }
        withUnsafeBytes(of: UInt64(2).littleEndian) { header += $0 }
        withUnsafeBytes(of: UInt64(0).littleEndian) { header += $0 }
        withUnsafeBytes(of: CRC32C.checksum(header).littleEndian) { header += $0 }
        let segment = path + "/log/00000000000000000002.log"
        try Data(header + [UInt8](repeating: 0x77, count: 300)).write(to: URL(fileURLWithPath: segment))
        for recovery in [Recovery.strict, .truncateAtDamage] {
            var reopen = StoreOptions()
            reopen.recovery = recovery
            await #expect {
                _ = try await Store.open(at: path, options: reopen)
            } throws: { error in
                guard case StoreError.unsupportedVersion(_, let found, _) = error else { return false }
                return found == 2
            }
            #expect(FileManager.default.fileExists(atPath: segment))
        }
        // The same header damaged (its checksum no longer closes it anywhere) is damage.
        var damaged = try Data(contentsOf: URL(fileURLWithPath: segment))
        damaged[14] ^= 0x40
        try damaged.write(to: URL(fileURLWithPath: segment))
        await #expect {
            _ = try await Store.open(at: path)
        } throws: { error in
            if case StoreError.corruptLog = error { true } else { false }
        }
    }

    @Test("a second writer is locked out even when the lock file was deleted while the store was open")
    func lockFileDeleted() async throws {
        let path = temporaryStorePath("lock-deleted")
        defer { removeStore(path) }
        var options = StoreOptions()
        options.createIfMissing = true
        let first = try await Store.open(at: path, options: options)
        try await first.transact { try $0.insert(["by": "first"], id: 1, into: "t") }
        try FileManager.default.removeItem(atPath: path + "/lock")
        await #expect {
            _ = try await Store.open(at: path, options: options)
        } throws: { error in
            if case StoreError.locked = error { true } else { false }
        }
        try await first.transact { try $0.insert(["by": "first"], id: 2, into: "t") }
        try await first.close()
        // Closed: the next open takes both locks again.
        let next = try await Store.open(at: path, options: options)
        #expect(next.current[table: "t"].count == 2)
        try await next.close()
    }

    @Test(
        "segments no larger than a header: seals at close, reopens, a cut; never two segments of one name",
        arguments: [1, 24, 100]
    )
    func segmentsSmallerThanAHeader(segmentSize: Int) async throws {
        let path = temporaryStorePath("tiny-segments")
        defer { removeStore(path) }
        var options = testOptions(.everyCommit)
        options.segmentSize = segmentSize
        var t: Int64 = 0
        for round in 0..<4 {
            // A large commit and a snapshot: the close seals the segment and
            // leaves an empty one, which the next open finds active.
            let store = try await Store.open(at: path, options: options)
            #expect(store.current.basis == t && store.warnings.isEmpty, "round \(round): \(store.warnings)")
            try await store.transact {
                try $0.upsert(["b": .bytes([UInt8](repeating: 3, count: 5 << 20))], id: RecordID(round), into: "t")
            }
            _ = try await store.snapshot()
            try await store.close()
            let again = try await Store.open(at: path, options: options)
            try await again.transact { try $0.upsert(["x": .int(Int64(round))], id: RecordID(100 + round), into: "t") }
            t += 2
            let names = logSegments(path)
            #expect(Set(names).count == names.count, "round \(round): \(names)")
            if round == 2 {
                try await again.truncate(after: t - 2)
                t -= 2
                #expect(again.current.basis == t)
            }
            try await again.verify()
            try await again.close()
        }
        let last = try await Store.open(at: path, options: testOptions())
        #expect(last.current.basis == t && last.warnings.isEmpty, "\(last.warnings)")
        try await last.verify()
        try await last.close()
    }
}
