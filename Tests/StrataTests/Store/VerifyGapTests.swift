import Foundation
import Strata
import Testing

/// `Store.verify(at:)` on logs with a missing segment, alone or beside
/// damage: each finding is named, and a snapshot the replay no longer
/// reaches says that it was not compared with the log.
@Suite("Verify: gaps in the log")
struct VerifyGapTests {
    /// A store of one transaction per segment (t 1...5), with a snapshot at t 3.
    static func store(_ label: String) async throws -> (path: String, segments: [String]) {
        let path = temporaryStorePath(label)
        var options = testOptions()
        options.segmentSize = 1_024
        let store = try await Store.open(at: path, options: options)
        for n in 1...5 {
            try await store.transact(message: "t \(n)") { builder in
                try builder.insert(
                    ["title": .string("MARKER-\(n)"), "pad": .string(String(repeating: "x", count: 2_000))],
                    id: RecordID(Int64(n)),
                    into: "songs"
                )
            }
            if n == 3 { try await store.snapshot() }
        }
        try await store.close()
        let log = path + "/log"
        let segments = try FileManager.default.contentsOfDirectory(atPath: log).filter { $0.hasSuffix(".log") }.sorted()
            .map { log + "/" + $0 }
        return (path, segments)
    }

    /// The segment holding `marker`.
    static func segment(holding marker: String, in segments: [String]) throws -> String {
        let needle = Array(marker.utf8)
        return try #require(
            try segments.first { file in
                guard FileManager.default.fileExists(atPath: file) else { return false }
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
                return bytes.firstRange(of: needle) != nil
            }
        )
    }

    @Test("a missing segment is named, also when the segment after it is damaged")
    func gapBeforeDamage() async throws {
        let (path, segments) = try await Self.store("verify-gap-damage")
        defer { removeStore(path) }
        try #require(segments.count >= 5, "\(segments)")
        try FileManager.default.removeItem(atPath: try Self.segment(holding: "MARKER-2", in: segments))
        // A letter of t 3's record flipped: its frame's checksum fails.
        let third = try Self.segment(holding: "MARKER-3", in: segments)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: third)))
        let at = try #require(bytes.firstRange(of: Array("MARKER-3".utf8))).lowerBound
        bytes[at] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: third))

        let report = try Store.verify(at: path)
        let reasons = report.problems.filter { $0.file == third }.map(\.reason)
        #expect(reasons.contains { $0.contains("a segment before it is missing") }, "\(report.problems)")
        #expect(reasons.count == 2, "\(report.problems)")
        #expect(report.transactions == 1)
    }

    @Test("a snapshot past a gap is checked against its own records and says it was not compared with the log")
    func snapshotPastAGap() async throws {
        let (path, segments) = try await Self.store("verify-gap-snapshot")
        defer { removeStore(path) }
        try FileManager.default.removeItem(atPath: try Self.segment(holding: "MARKER-2", in: segments))
        let report = try Store.verify(at: path)
        #expect(report.problems.contains { $0.reason.contains("a segment before it is missing") }, "\(report.problems)")
        #expect(
            report.notes.contains {
                $0.contains("snapshot-00000000000000000003") && $0.contains("not compared with the log")
            },
            "\(report.notes)"
        )
        #expect(!report.problems.contains { $0.file.contains("snapshots/") }, "\(report.problems)")
    }
}
