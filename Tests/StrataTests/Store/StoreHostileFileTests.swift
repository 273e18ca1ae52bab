import Foundation
import Strata
import Testing

/// Files no writer of this engine makes, shaped to hurt: names and headers
/// numbered near the limits, frames that lie about their size, tails that
/// are all candidate frames. Each is refused or ignored, never a trap, an
/// allocation the file asked for, or a search without end.
@Suite("Hostile files: names, headers, frames and tails no writer makes")
struct StoreHostileFileTests {
    static func makeStore(_ path: String, count: Int) async throws -> Database {
        let store = try await Store.open(at: path, options: testOptions())
        for n in 1...count {
            try await store.transact { try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        }
        let value = store.current
        try await store.close()
        return value
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Appends `bytes` to the file at `path` (a tail after the last record).
    static func append(_ bytes: [UInt8], to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(bytes))
        try handle.close()
    }

    @Test("block files named past every level, at the end of the numbers or off their grid are ignored")
    func hostileBlockNames() async throws {
        let path = temporaryStorePath("hostile-blocks")
        defer { removeStore(path) }
        let value = try await Self.makeStore(path, count: 40)
        try FileManager.default.createDirectory(atPath: path + "/blocks", withIntermediateDirectories: true)
        for name in [
            "block-L15-00000000000000000001.strata", "block-L14-09000000000000000000.strata",
            "block-L99-00000000000000000001.strata", "block-L0-00000000000000000002.strata",
            "block-L13-09223372036854775807.strata", "block-L-1-00000000000000000001.strata",
        ] {
            try Self.write([], to: path + "/blocks/" + name)
        }
        let report = try Store.verify(at: path)
        #expect(report.transactions == 40)
        let store = try await Store.open(at: path, options: testOptions())
        #expect(store.current == value)
        #expect(try await store.database(asOf: 17)[table: "t"].count == 17)
        try await store.compact()
        try await store.close()
    }

    @Test("a segment whose header is numbered near 2^62 is reported by verify, not filled in")
    func farSegmentNumber() async throws {
        let path = temporaryStorePath("hostile-segment")
        defer { removeStore(path) }
        _ = try await Self.makeStore(path, count: 5)
        // A second segment, its header (checksum included) saying it starts
        // at record 2^62 - 1.
        let first = Int64(1) << 62 - 1
        var header = Array("STRATLOG".utf8)
        withUnsafeBytes(of: UInt32(1).littleEndian) { header += $0 }
        withUnsafeBytes(of: first.littleEndian) { header += $0 }
        withUnsafeBytes(of: CRC32C.checksum(header).littleEndian) { header += $0 }
        try Self.write(header, to: path + "/log/" + String(format: "%020lld", first) + ".log")
        let report = try Store.verify(at: path)
        #expect(!report.problems.isEmpty, "\(report)")
        #expect(report.transactions == 5)
    }

    @Test("a zstd frame declaring more content than its blocks can hold is refused before anything is allocated")
    func zstdDeclaredSize() throws {
        // Magic, a descriptor (8-byte content size, single segment,
        // checksum), 4 GiB declared, one last RLE block of 128 KiB, a checksum.
        var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0xE4]
        withUnsafeBytes(of: UInt64(4 << 30).littleEndian) { frame += $0 }
        frame += [0x03, 0x00, 0x10, 0x07, 0, 0, 0, 0]
        let decompressor = try ZstdDecompressor(maximumOutputSize: 8 << 30)
        do {
            _ = try decompressor.decompress(frame)
            Issue.record("a 21-byte frame decompressed to 4 GiB")
        } catch let error as CompressionError {
            guard case .corrupted = error else {
                Issue.record("refused after trusting the size: \(error)")
                return
            }
        }
    }

    @Test("the most compressible content a frame can hold (runs of one byte, MBs of them) still reads back")
    func mostCompressibleFrame() throws {
        for size in [0, 1, 131_072, 131_073, 8 << 20] {
            let content = [UInt8](repeating: 0, count: size)
            let frame = try ZstdCompressor(level: 19).compress(content)
            #expect(try ZstdDecompressor(maximumOutputSize: 16 << 20).decompress(frame) == content, "\(size)")
        }
    }

    @Test("a torn tail of megabytes of random bytes (a large commit cut short) is found quickly and cut")
    func randomTornTail() async throws {
        let path = temporaryStorePath("hostile-tail")
        defer { removeStore(path) }
        let value = try await Self.makeStore(path, count: 5)
        let segment = logSegments(path).last!
        var random = SeededRandom(seed: 99)
        try Self.append(random.bytes(4 << 20), to: segment)
        let store = try await Store.open(at: path, options: testOptions())
        #expect(store.current == value)
        #expect(store.warnings.contains { if case .tornTail = $0 { true } else { false } })
        try await store.close()
    }

    @Test("a tail made of candidate frames that never check is damage (the search has a budget), never a hang")
    func candidateFrameTail() async throws {
        let path = temporaryStorePath("hostile-candidates")
        defer { removeStore(path) }
        let value = try await Self.makeStore(path, count: 5)
        let segment = logSegments(path).last!
        // Every 12 bytes: a 1 MiB length, a wrong checksum, "STRT".
        var unit: [UInt8] = []
        withUnsafeBytes(of: UInt32(1 << 20).littleEndian) { unit += $0 }
        unit += [1, 2, 3, 4] + Array("STRT".utf8)
        let tail = Array(repeatElement(unit, count: (8 << 20) / unit.count).joined())
        try Self.append(tail, to: segment)
        await #expect(throws: StoreError.self) { try await Store.open(at: path, options: testOptions()) }
        var options = testOptions()
        options.recovery = .truncateAtDamage
        let store = try await Store.open(at: path, options: options)
        #expect(store.current == value)
        try await store.close()
    }
}
