import DeterministicRandom
import Foundation
import Strata
import Testing

/// `Store.verify(at:)` sums a snapshot's records ahead of the replay
/// checking their structure only (not their text nor their order), and
/// compares the file in full, validating it, when the sums differ from the
/// replay's. Its verdict on a hostile snapshot (every checksum resealed)
/// must be what reading the file says: refused or unlike the log, a
/// problem naming the file; read as the log's value, sound.
@Suite("Verify against hostile snapshots")
struct VerifyHostileSnapshotTests {
    @Test("resealed mutations of a records chunk: verify's verdict is the full read's, never a crash")
    func verdictIsTheReadsVerdict() async throws {
        let path = temporaryStorePath("verify-hostile-snapshot")
        defer { removeStore(path) }
        // Many transactions before the snapshot, so that its sums are
        // ready when the replay reaches it (usually: either way the verdict
        // must be the same).
        let store = try await Store.open(at: path, options: testOptions())
        for n in 0..<300 {
            try await store.transact(message: "t\(n)") { builder in
                try builder.insert(
                    [
                        "title": .string("t\(n) ü \u{1F600}"), "n": .int(Int64(n)),
                        "tags": .list([.string("a"), .map(["k": .null, "l": .string("x")])]),
                        "ref": .reference(RecordReference(table: "songs", id: RecordID("s\(n)"))),
                    ],
                    id: n % 2 == 0 ? RecordID(Int64(n)) : RecordID("s\(n)"),
                    into: "songs"
                )
            }
        }
        try await store.snapshot()
        let original = store.current
        try await store.close()
        #expect(try Store.verify(at: path).isSound)

        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        let records = try #require(layout.chunks.firstIndex { $0.fields[0] == 0 })
        let raw = try layout.raw(of: records, in: bytes)
        var random = SplitMix64(seed: 77)
        var verdicts = (sound: 0, refused: 0, differs: 0)
        for round in 0..<240 {
            // Kind 5 writes 0x00 or 0x7F inside text; an 0xFF run (kind 3) is never UTF-8.
            let mutated = SnapshotChunkTests.mutated(raw, kind: round % 6, random: &random)
            try Data(try layout.resealing(bytes, chunk: records, raw: mutated)).write(to: URL(fileURLWithPath: file))
            let report = try Store.verify(at: path)
            let named = report.problems.contains { $0.file == file }
            let reopened = try await Store.open(at: path, options: testOptions())
            let refused = SnapshotChunkTests.skippedSnapshot(reopened.warnings)
            let equal = refused ? false : try await reopened.database(inSnapshot: 300) == original
            try await reopened.close()
            if equal {
                verdicts.sound += 1
                #expect(report.isSound, "seed 77 round \(round): \(report.problems)")
            } else {
                if refused { verdicts.refused += 1 } else { verdicts.differs += 1 }
                #expect(named, "seed 77 round \(round) (refused: \(refused)): \(report.problems)")
            }
        }
        // Each verdict is reached: the mutations are not all of one kind.
        #expect(verdicts.refused > 0 && verdicts.differs + verdicts.sound > 0, "\(verdicts)")
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        #expect(try Store.verify(at: path).isSound)
    }

    @Test("text that is not UTF-8, resealed, is named as the file's damage, at an offset")
    func invalidTextIsDamage() async throws {
        let path = temporaryStorePath("verify-hostile-text")
        defer { removeStore(path) }
        try await Self.storeOfNotes(path, count: 200)
        let file = try Self.resealNewest(at: path) { raw in try Self.breakText(&raw, of: "Gamma17") }
        let report = try Store.verify(at: path)
        #expect(report.problems.count == 1, "\(report.problems)")
        let problem = try #require(report.problems.first)
        #expect(problem.file == file && problem.offset != nil, "\(problem)")
        #expect(problem.reason.contains("UTF-8"), "\(problem.reason)")
    }

    /// The POSIX file system, its log segments slow to read whole when `slow`.
    static func slowLog(_ slow: Bool) -> ReadCountingFileSystem {
        ReadCountingFileSystem(slowWholeReads: { slow && $0.hasSuffix(".log") }, delay: 0.3)
    }

    /// A store of `count` one-record transactions (notes 0..<count, field
    /// `a` "Gamma" and the number), snapshotted at its end.
    static func storeOfNotes(_ path: String, count: Int = 300) async throws {
        let store = try await Store.open(at: path, options: testOptions())
        for n in 0..<count {
            try await store.transact(message: "t\(n)") { builder in
                try builder.insert(
                    ["a": .string("Gamma\(n)"), "b": .int(Int64(n))],
                    id: RecordID(Int64(n)),
                    into: "notes"
                )
            }
        }
        try await store.snapshot()
        try await store.close()
    }

    /// The newest snapshot of the store at `path` with its records chunk
    /// changed by `edit` (with `otherHistory`, its basis transaction's ID
    /// too), every checksum resealed; its file.
    static func resealNewest(
        at path: String,
        otherHistory: Bool = false,
        _ edit: (inout [UInt8]) throws -> Void
    ) throws -> String {
        var (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        if otherHistory { for i in 40..<56 { bytes[i] ^= 0x5A } }
        let records = try #require(layout.chunks.firstIndex { $0.fields[0] == 0 })
        var raw = try layout.raw(of: records, in: bytes)
        try edit(&raw)
        try Data(try layout.resealing(bytes, chunk: records, raw: raw)).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// A lone continuation byte where the second letter of `text` was.
    static func breakText(_ raw: inout [UInt8], of text: String) throws {
        let found = try #require(raw.firstRange(of: Array(text.utf8)))
        raw[found.lowerBound + 1] = 0x80
    }

    @Test("a damaged snapshot naming another history is damage, not a note of another history, whatever the timing")
    func damagedOtherHistory() async throws {
        let path = temporaryStorePath("verify-hostile-other")
        defer { removeStore(path) }
        try await Self.storeOfNotes(path)
        // The basis transaction's ID in the header, then text that is not UTF-8.
        let file = try Self.resealNewest(at: path, otherHistory: true) { raw in try Self.breakText(&raw, of: "Gamma17")
        }
        for run in 0..<6 {
            // Half the runs with the log slow to read: the sums are ready when the replay reaches the snapshot.
            let report = try Store.verify(at: path, fileSystem: Self.slowLog(run.isMultiple(of: 2)))
            let problem = report.problems.first { $0.file == file }
            #expect(problem?.reason.contains("UTF-8") == true, "run \(run): \(report.problems), \(report.notes)")
        }
        // What a read says: damaged.
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(SnapshotChunkTests.skippedSnapshot(reopened.warnings), "\(reopened.warnings)")
        try await reopened.close()
    }

    @Test("of two kinds of damage in a snapshot, verify names the one a read meets first")
    func firstDamageNamed() async throws {
        let path = temporaryStorePath("verify-hostile-first")
        defer { removeStore(path) }
        try await Self.storeOfNotes(path)
        let file = try Self.resealNewest(at: path) { raw in
            try Self.breakText(&raw, of: "Gamma17")
            // Later, a value tag no value has (after "Gamma250", field b's).
            let later = try #require(raw.firstRange(of: Array("Gamma250".utf8)))
            raw[later.upperBound + 1] = 0xEE
        }
        for run in 0..<4 {
            let report = try Store.verify(at: path, fileSystem: Self.slowLog(run.isMultiple(of: 2)))
            let reason = report.problems.first { $0.file == file }?.reason ?? "none"
            #expect(reason.contains("UTF-8"), "run \(run): \(report.problems)")
        }
    }

    @Test("snapshots past the log's end are not summed for nothing: the block files' check does not wait for them")
    func pastTheLogNotSummed() async throws {
        let path = temporaryStorePath("verify-hostile-past")
        defer { removeStore(path) }
        try await Self.storeOfNotes(path)
        let (file, bytes, _) = try SnapshotLayout.newest(in: path)
        let directory = (file as NSString).deletingLastPathComponent
        let past = [1_000, 2_000, 3_000, 4_000, 5_000, 6_000].map { basis in
            directory + "/snapshot-" + String(repeating: "0", count: 20 - String(basis).count) + "\(basis).strata"
        }
        for name in past { try Data(bytes).write(to: URL(fileURLWithPath: name)) }
        // A block file (sound or not, it is read after the sums queued before it).
        let block = path + "/blocks/block-L1-00000000000000000001.strata"
        if !FileManager.default.fileExists(atPath: block) {
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: block))
        }
        // Each snapshot slow to read whole, so that the replay ends while the first ones are summed.
        let counting = ReadCountingFileSystem(slowWholeReads: { $0.contains("/snapshots/") }, delay: 0.3)
        let report = try Store.verify(at: path, fileSystem: counting)
        #expect(report.problems.filter { $0.reason.contains("is beyond the log") }.count == past.count)
        // Summing stops once the replay ends: at most the one summed then, and one started before.
        let read = counting.bytesRead.withLock { reads in past.filter { reads[$0, default: 0] > 0 } }
        #expect(read.count <= 2, "\(read)")
    }
}
