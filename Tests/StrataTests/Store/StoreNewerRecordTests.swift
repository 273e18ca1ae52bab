import Foundation
import Strata
import Testing

/// A log record a newer build wrote (its transaction encoding's version
/// above this build's, inside a segment whose own header this build reads:
/// every codec version so far changed the records, not the segment header)
/// is a newer format, not damage: refused as such by every open, every
/// recovery option and both checks, and never cut away.
@Suite("Store: log records from a newer build")
struct StoreNewerRecordTests {
    static let newerVersion = UInt8(BinaryCodec.formatVersion + 1)

    /// A store of 10 transactions in one segment.
    static func makeStore(_ path: String) async throws {
        let store = try await Store.open(at: path, options: testOptions())
        for n in 1...10 {
            try await store.transact(message: "n\(n)") {
                try $0.upsert(["n": .int(Int64(n))], id: RecordID(n % 3), into: "t")
            }
        }
        try await store.close()
    }

    /// The offset and payload length of each frame of a segment's bytes, in order.
    static func frames(_ bytes: [UInt8]) -> [(offset: Int, length: Int)] {
        var frames: [(offset: Int, length: Int)] = []
        var offset = 24  // the segment header
        while offset + 8 <= bytes.count {
            let length =
                Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16
                | Int(bytes[offset + 3]) << 24
            if length == 0 { break }
            frames.append((offset, length))
            offset += 8 + length
        }
        return frames
    }

    /// Rewrites frame `index` of `segment` as a newer build would have: its
    /// payload's codec version raised, its checksum recomputed.
    static func makeNewer(frame index: Int, of segment: String) throws {
        var bytes = try StoreFileFormatTests.read(segment)
        let (frame, length) = frames(bytes)[index]
        let payload = frame + 8
        // Magic and kind ("STRT"), then the version as a one-byte varint.
        #expect(Array(bytes[payload..<(payload + 4)]) == Array("STRT".utf8))
        #expect(bytes[payload + 4] == UInt8(BinaryCodec.formatVersion))
        bytes[payload + 4] = newerVersion
        var crc = CRC32C()
        crc.update(bytes[frame..<(frame + 4)])
        crc.update(bytes[payload..<(payload + length)])
        for i in 0..<4 { bytes[frame + 4 + i] = UInt8(truncatingIfNeeded: crc.value >> (8 * i)) }
        try StoreFileFormatTests.write(bytes, segment)
    }

    static func isNewerRecord(_ error: any Error, in segment: String) -> Bool {
        guard case .unsupportedVersion(let file, let found, let supported)? = error as? StoreError else { return false }
        return file == segment && found == UInt32(newerVersion) && supported == UInt32(BinaryCodec.formatVersion)
    }

    @Test("every open refuses it as a newer format, and .truncateAtDamage cuts nothing")
    func opens() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        try await Self.makeStore(path)
        let segment = logSegments(path).last!
        try Self.makeNewer(frame: 5, of: segment)
        let sizeBefore = try StoreFileFormatTests.read(segment).count

        var tolerant = testOptions()
        tolerant.recovery = .truncateAtDamage
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        for options in [testOptions(), tolerant, readOnly] {
            await #expect {
                _ = try await Store.open(at: path, options: options)
            } throws: { Self.isNewerRecord($0, in: segment) }
        }
        // The newer build's records are all still there.
        #expect(try StoreFileFormatTests.read(segment).count == sizeBefore)
        #expect(Self.frames(try StoreFileFormatTests.read(segment)).count == 10)
        #expect(throws: StoreError.self) { try Store.verify(at: path) }
        do {
            _ = try Store.verify(at: path)
        } catch {
            #expect(Self.isNewerRecord(error, in: segment), "verify: \(error)")
        }
    }

    @Test("a record read back after open (a summarized segment's) is refused the same way")
    func readBack() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        // Small segments, a snapshot at the end: the sealed segments are
        // known by their summaries, and open does not read their records.
        var options = testOptions()
        options.segmentSize = 256
        let store = try await Store.open(at: path, options: options)
        for n in 1...30 {
            try await store.transact(message: "n\(n)") {
                try $0.upsert(["n": .int(Int64(n))], id: RecordID(n % 4), into: "t")
            }
        }
        try await store.snapshot()
        try await store.close()
        let segments = logSegments(path)
        try #require(segments.count >= 3)
        try Self.makeNewer(frame: 0, of: segments[0])

        let reopened = try await Store.open(at: path, options: options)
        do {
            _ = try await reopened.transaction(at: 1)
            Issue.record("read a newer build's record")
        } catch {
            #expect(Self.isNewerRecord(error, in: segments[0]), "transaction(at:): \(error)")
        }
        do {
            try await reopened.verify()
            Issue.record("verify() passed over a newer build's record")
        } catch {
            #expect(Self.isNewerRecord(error, in: segments[0]), "verify(): \(error)")
        }
        try await reopened.close()
        // Not taken for damage: the segment's summary stays, and the next
        // open still reads the store without its records.
        let again = try await Store.open(at: path, options: options)
        #expect(again.current.basis == 30)
        #expect(again.warnings.isEmpty)
        try await again.close()
    }

    @Test("a segment size of Int.max (never roll over) commits and reopens", arguments: [Int.max, Int.max - 4_094])
    func largestSegmentSize(size: Int) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions(.everyCommit)
        options.segmentSize = size
        let store = try await Store.open(at: path, options: options)
        for n in 1...3 { try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") } }
        try await store.close()
        let reopened = try await Store.open(at: path, options: options)
        #expect(reopened.current.basis == 3)
        #expect(reopened.current.record(RecordID(3), in: "t")?["n"] == .int(3))
        try await reopened.close()
    }
}
