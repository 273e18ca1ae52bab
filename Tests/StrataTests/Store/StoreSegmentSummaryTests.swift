import Foundation
import Strata
import Synchronization
import Testing

/// Sealed log segments are summarized beside them (`<segment>.summary`), and
/// open learns the history before the newest snapshot from the summaries,
/// without reading those segments.
@Suite("Store segment summaries", .serialized)
struct StoreSegmentSummaryTests {
    static func summaryFiles(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path + "/log")) ?? [])
            .filter { $0.hasSuffix(".summary") }.sorted().map { path + "/log/" + $0 }
    }

    static func options(_ fileSystem: (any FileSystem)? = nil) -> StoreOptions {
        var options = testOptions()
        options.segmentSize = 2_048
        options.rebuildBudget = nil
        options.snapshotEveryLogBytes = nil
        if let fileSystem { options.fileSystem = fileSystem }
        return options
    }

    /// 90 transactions over many segments, with messages in several
    /// scripts, every significance, one large record, and a snapshot at
    /// t 70. Returns each transaction's summary as committed.
    static func makeStore(_ path: String) async throws -> [TransactionSummary] {
        let store = try await Store.open(at: path, options: options())
        var summaries: [TransactionSummary] = []
        let messages = ["", "import", "Beyoncé — Déjà Vu", "日本語のアルバム", "🎵🎶 emoji", String(repeating: "x", count: 300)]
        for i in 1...90 {
            let significance: Significance = i % 7 == 0 ? .significant : (i % 5 == 0 ? .minor : .normal)
            let report = try await store.transact(message: messages[i % messages.count], significance: significance) {
                let text = i == 33 ? String(repeating: "long ", count: 2_000) : "song \(i)"
                try $0.upsert(["title": .string(text), "n": .int(Int64(i))], id: RecordID(i % 40), into: "songs")
            }
            summaries.append(report.transaction.summary)
            if i == 70 { try await store.snapshot() }
        }
        try await store.close()
        return summaries
    }

    /// What a reopened store knows of its history and values.
    static func describe(_ store: Store) async throws -> (summaries: [TransactionSummary], values: [Database]) {
        let summaries = try await store.history(limit: .max).reversed().map(\.summary)
        var values: [Database] = []
        for t in stride(from: 0, through: 90, by: 9) { values.append(try await store.database(asOf: Int64(t))) }
        values.append(store.current)
        return (summaries, values)
    }

    @Test("open reads no sealed segment before the snapshot, and knows the same history as reading them")
    func openSkipsSealedSegments() async throws {
        let path = temporaryStorePath("summary")
        defer { removeStore(path) }
        let committed = try await Self.makeStore(path)
        let segments = logSegments(path)
        #expect(segments.count >= 6)
        #expect(Self.summaryFiles(path).count == segments.count - 1, "every sealed segment is summarized")

        let counting = ReadCountingFileSystem()
        let store = try await Store.open(at: path, options: Self.options(counting))
        let read = counting.bytesRead.withLock { $0 }
        #expect(store.warnings.isEmpty)
        // A segment whose records all precede the snapshot (t 70) is read
        // for its header and its last frame's header only (32 bytes); the
        // rest are read whole.
        var skipped = 0
        for segment in segments {
            let size = try FileManager.default.attributesOfItem(atPath: segment)[.size] as! Int
            let bytes = read[segment, default: 0]
            #expect(bytes == 32 || bytes >= size, "\(segment): \(bytes) of \(size) bytes read")
            if bytes == 32 { skipped += 1 }
        }
        #expect(skipped >= segments.count / 2, "\(skipped) of \(segments.count) segments skipped")
        let summarized = try await Self.describe(store)
        #expect(summarized.summaries == committed)
        try await store.close()

        // Without summaries: every segment is read, the same history is
        // known, and the summaries are written again.
        for file in Self.summaryFiles(path) { try FileManager.default.removeItem(atPath: file) }
        let rescanned = try await Store.open(at: path, options: Self.options())
        let scanned = try await Self.describe(rescanned)
        #expect(scanned.summaries == committed)
        #expect(scanned.values == summarized.values)
        try await rescanned.close()
        #expect(Self.summaryFiles(path).count == segments.count - 1)
    }

    /// A store of segments of the default size (a snapshot asks for a seal
    /// from 4 MiB on) holding about 34 MiB of log in one segment (34
    /// records of 1 MiB), then a snapshot of it: open, with its options and
    /// each transaction's summary as committed.
    static func snapshottedLargeStore(_ path: String) async throws -> (Store, StoreOptions, [TransactionSummary]) {
        var options = testOptions()
        options.rebuildBudget = nil
        options.snapshotEveryLogBytes = nil
        let store = try await Store.open(at: path, options: options)
        var committed: [TransactionSummary] = []
        let blob = [UInt8](repeating: 7, count: 1 << 20)
        for i in 0..<34 {
            let report = try await store.transact(message: "import \(i)") {
                try $0.upsert(["blob": .bytes(blob), "n": .int(Int64(i))], id: RecordID(i), into: "r")
            }
            committed.append(report.transaction.summary)
        }
        try await store.snapshot()
        return (store, options, committed)
    }

    @Test("a snapshot seals a large active segment at the next commit, so that open skips it too")
    func snapshotSealsTheActiveSegment() async throws {
        let path = temporaryStorePath("summary-seal")
        defer { removeStore(path) }
        let (store, options, imported) = try await Self.snapshottedLargeStore(path)
        var committed = imported
        #expect(logSegments(path).count == 1, "sealed at the next append, not before")
        let report = try await store.transact(message: "after") {
            try $0.upsert(["blob": .string("small")], id: RecordID(0), into: "r")
        }
        committed.append(report.transaction.summary)
        let expected = store.current
        try await store.close()
        let segments = logSegments(path)
        #expect(segments.count == 2)
        #expect(Self.summaryFiles(path).count == 1)

        let counting = ReadCountingFileSystem()
        var reading = options
        reading.fileSystem = counting
        let reopened = try await Store.open(at: path, options: reading)
        let read = counting.bytesRead.withLock { $0 }
        #expect(read[segments[0], default: 0] == 32, "the sealed segment: its header and last frame's")
        #expect(await reopened.current == expected)
        #expect(try await reopened.history(limit: .max).reversed().map(\.summary) == committed)
        try await reopened.verify()
        try await reopened.close()
    }

    @Test("a snapshot's seal that no commit carried out is carried out by close; reopening seals an unsealed one once")
    func closeSealsWhatTheSnapshotAsked() async throws {
        let path = temporaryStorePath("summary-close-seal")
        let copy = temporaryStorePath("summary-close-seal-copy")
        defer {
            removeStore(path)
            removeStore(copy)
        }
        let (store, options, committed) = try await Self.snapshottedLargeStore(path)
        // What a process that died here (or a store of an earlier build)
        // leaves: a snapshot of the whole log, and the log in one large
        // last segment without a summary.
        try FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let expected = store.current
        try await store.close()

        for (directory, label) in [(path, "closed after the snapshot"), (copy, "reopened and closed")] {
            if directory == copy {
                #expect(logSegments(copy).count == 1, "the copy was taken before close sealed it")
                var readOnly = options
                readOnly.readOnly = true
                try await Store.open(at: copy, options: readOnly).close()
                #expect(logSegments(copy).count == 1, "a read-only open changes nothing")
                #expect(Self.summaryFiles(copy).isEmpty, "a read-only open changes nothing")
                try await Store.open(at: copy, options: options).close()
            }
            let segments = logSegments(directory)
            #expect(segments.count == 2, "\(label): sealed, and an empty segment after it")
            #expect(Self.summaryFiles(directory).count == 1, "\(label)")
            let counting = ReadCountingFileSystem()
            var reading = options
            reading.fileSystem = counting
            let reopened = try await Store.open(at: directory, options: reading)
            let read = counting.bytesRead.withLock { $0 }
            #expect(read[segments[0], default: 0] == 32, "\(label): the sealed segment's header and last frame only")
            #expect(await reopened.current == expected, "\(label)")
            #expect(try await reopened.history(limit: .max).reversed().map(\.summary) == committed, "\(label)")
            try await reopened.close()
            // Closing again (no commit, no snapshot) makes no more segments.
            for _ in 0..<3 { try await Store.open(at: directory, options: options).close() }
            #expect(logSegments(directory) == segments, "\(label): reopening without commits seals nothing")
            let writer = try await Store.open(at: directory, options: options)
            let report = try await writer.transact(message: "after") {
                try $0.upsert(["blob": .string("small")], id: RecordID(0), into: "r")
            }
            let after = writer.current
            try await writer.close()
            let last = try await Store.open(at: directory, options: options)
            #expect(last.current == after, "\(label)")
            #expect(
                try await last.history(limit: .max).reversed().map(\.summary) == committed + [
                    report.transaction.summary
                ],
                "\(label)"
            )
            #expect(logSegments(directory) == segments, "\(label): the commit went to the empty segment")
            try await last.verify()
            try await last.close()
            #expect(try Store.verify(at: directory).isSound, "\(label)")
        }
    }

    @Test("damage found in the active segment is never sealed under a summary: the next open still meets it")
    func damageFoundBeforeCloseIsNotSealed() async throws {
        let path = temporaryStorePath("summary-damage-seal")
        defer { removeStore(path) }
        let (store, options, _) = try await Self.snapshottedLargeStore(path)
        // One byte inside record 11's blob (records are ~1 MiB each).
        let segment = try #require(logSegments(path).first)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: segment))
        try handle.seek(toOffset: UInt64(10 << 20) + 12_345)
        handle.write(Data([0x42]))
        try handle.close()
        await #expect(throws: StoreError.self, "verify reads every record") { try await store.verify() }
        try await store.close()
        #expect(logSegments(path).count == 2, "the seal the snapshot asked for")
        #expect(Self.summaryFiles(path).isEmpty, "no summary vouches for the damaged segment")
        var strict = options
        strict.recovery = .strict
        await #expect(throws: StoreError.self, "refused, as before the seal") {
            try await Store.open(at: path, options: strict).close()
        }
        #expect(try !Store.verify(at: path).isSound)
    }

    @Test("a damaged, cut, stale or misplaced summary is ignored: the segment is read and the summary rewritten")
    func badSummariesAreIgnored() async throws {
        let path = temporaryStorePath("summary-bad")
        defer { removeStore(path) }
        let committed = try await Self.makeStore(path)
        let summaries = Self.summaryFiles(path)
        let original = try summaries.map { try [UInt8](Data(contentsOf: URL(fileURLWithPath: $0))) }
        var random = SeededRandom(seed: 77)
        for round in 0..<40 {
            let victim = random.int(below: summaries.count)
            var bytes = original[victim]
            let what: String
            switch round % 5 {
            case 0:
                let at = random.int(below: bytes.count)
                bytes[at] ^= UInt8(1 + random.int(below: 255))
                what = "byte \(at) flipped"
            case 1:
                bytes.removeLast(1 + random.int(below: bytes.count))
                what = "cut to \(bytes.count) bytes"
            case 2:
                bytes = original[(victim + 1) % original.count]
                what = "another segment's summary"
            case 3:
                bytes += random.bytes(1 + random.int(below: 40))
                what = "bytes appended"
            default:
                bytes = random.bytes(random.int(below: 200))
                what = "random bytes"
            }
            try Data(bytes).write(to: URL(fileURLWithPath: summaries[victim]))
            let store = try await Store.open(at: path, options: Self.options())
            #expect(store.warnings.isEmpty, "round \(round): \(what)")
            #expect(
                try await store.history(limit: .max).reversed().map(\.summary) == committed,
                "round \(round): \(what)"
            )
            try await store.close()
            let rewritten = try [UInt8](Data(contentsOf: URL(fileURLWithPath: summaries[victim])))
            #expect(rewritten == original[victim], "round \(round): \(what): not written again")
        }
    }

    @Test("a summary that checks but lists other transactions is found by verify")
    func lyingSummaryIsFoundByVerify() async throws {
        let path = temporaryStorePath("summary-lie")
        defer { removeStore(path) }
        _ = try await Self.makeStore(path)
        let file = Self.summaryFiles(path)[1]
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        // The first entry's digest: frame size (varint), CRC (4), digest size (varint), then the ID.
        var offset = 44
        _ = TestVarint.read(bytes, at: &offset)
        offset += 4
        _ = TestVarint.read(bytes, at: &offset)
        bytes[offset] ^= 0xFF
        let entries = CRC32C.checksum(bytes[44...])
        bytes.replaceSubrange(36..<40, with: withUnsafeBytes(of: entries.littleEndian, Array.init))
        let header = CRC32C.checksum(bytes[0..<40])
        bytes.replaceSubrange(40..<44, with: withUnsafeBytes(of: header.littleEndian, Array.init))
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let store = try await Store.open(at: path, options: Self.options())
        do {
            try await store.verify()
            Issue.record("verify passed a summary that lists another transaction")
        } catch StoreError.corruptLog(let segment, _, let reason) {
            #expect(file.hasSuffix(segment.replacingOccurrences(of: ".log", with: ".summary")), "\(segment)")
            #expect(reason.contains("history lists"), "\(reason)")
        }
        try await store.close()
    }

    @Test("damage in a sealed segment before the snapshot is found by verify and by reading it, not by open")
    func damageBeforeSnapshot() async throws {
        let path = temporaryStorePath("summary-damage")
        defer { removeStore(path) }
        _ = try await Self.makeStore(path)
        let segment = logSegments(path)[1]
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment)))
        bytes[40] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: segment))

        let store = try await Store.open(at: path, options: Self.options())
        #expect(store.warnings.isEmpty)
        #expect(await store.current.basis == 90)
        do {
            try await store.verify()
            Issue.record("verify passed a damaged segment")
        } catch StoreError.corruptLog(let name, _, _) {
            #expect(segment.hasSuffix(name))
        }
        // The damaged segment's first transaction no longer reads back.
        await #expect(throws: StoreError.self) { _ = try await store.history(limit: .max) }
        try await store.close()
        // Finding it dropped the segment's summary: the next open reads the
        // segment, and its recovery option decides.
        await #expect(throws: StoreError.self) { _ = try await Store.open(at: path, options: Self.options()) }
        var recovering = Self.options()
        recovering.recovery = .truncateAtDamage
        let cut = try await Store.open(at: path, options: recovering)
        #expect(cut.warnings.contains { if case .truncatedAtDamage = $0 { true } else { false } }, "\(cut.warnings)")
        #expect(try await replayHistory(cut) == cut.current)
        try await cut.verify()
        try await cut.close()
    }

    @Test(
        "a damaged newest snapshot sends open back over the summarized segments: their damage is met as damage",
        arguments: [Recovery.strict, .truncateAtDamage]
    )
    func damagedSnapshotAndSegment(recovery: Recovery) async throws {
        let path = temporaryStorePath("summary-fallback")
        defer { removeStore(path) }
        _ = try await Self.makeStore(path)
        let snapshot = try #require(snapshotFiles(path).last)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: snapshot)))
        bytes[bytes.count / 2] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: snapshot))
        let segment = logSegments(path)[2]
        var log = try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment)))
        log[40] ^= 0x5A
        try Data(log).write(to: URL(fileURLWithPath: segment))

        var options = Self.options()
        options.recovery = recovery
        do {
            let store = try await Store.open(at: path, options: options)
            #expect(recovery == .truncateAtDamage, "strict open accepted damage in the log")
            #expect(store.warnings.contains { if case .skippedSnapshot = $0 { true } else { false } })
            #expect(store.warnings.contains { if case .truncatedAtDamage = $0 { true } else { false } })
            let value = store.current
            #expect(value.basis > 0 && value.basis < 70, "opened at t \(value.basis)")
            #expect(try await replayHistory(store) == value)
            try await store.verify()
            try await store.close()
        } catch StoreError.corruptLog(let name, _, _) {
            #expect(recovery == .strict)
            #expect(segment.hasSuffix(name))
        }
    }

    @Test("a summarized segment whose header is damaged is read, and refused as damage")
    func damagedSegmentHeader() async throws {
        let path = temporaryStorePath("summary-header")
        defer { removeStore(path) }
        _ = try await Self.makeStore(path)
        let segment = logSegments(path)[1]
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment)))
        bytes[14] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        await #expect(throws: StoreError.self) { _ = try await Store.open(at: path, options: Self.options()) }
    }

    @Test("truncating into a sealed segment, committing across new segments and reopening keep the history whole")
    func truncateIntoSealedSegment() async throws {
        let path = temporaryStorePath("summary-cut")
        defer { removeStore(path) }
        let committed = try await Self.makeStore(path)
        let store = try await Store.open(at: path, options: Self.options())
        try await store.truncate(after: 25)
        var kept = Array(committed.prefix(25))
        for i in 0..<40 {
            let report = try await store.transact(message: "after the cut \(i)") {
                try $0.upsert(["title": .string("again \(i)")], id: RecordID(100 + i), into: "songs")
            }
            kept.append(report.transaction.summary)
            if i == 30 { try await store.snapshot() }
        }
        let expected = store.current
        try await store.close()
        for _ in 0..<3 {
            let reopened = try await Store.open(at: path, options: Self.options())
            #expect(reopened.warnings.isEmpty)
            #expect(await reopened.current == expected)
            #expect(try await reopened.history(limit: .max).reversed().map(\.summary) == kept)
            #expect(try await replayHistory(reopened) == expected)
            try await reopened.verify()
            try await reopened.close()
        }
        #expect(Self.summaryFiles(path).count == logSegments(path).count - 1)
    }
}
