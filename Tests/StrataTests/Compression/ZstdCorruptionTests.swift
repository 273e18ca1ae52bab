import Strata
import Testing

/// Decompression is total: whatever the bytes, it returns the original data
/// or throws a CompressionError. These tests feed it everything else.
@Suite("zstd damaged input")
struct ZstdCorruptionTests {
    static func frame(_ input: [UInt8], level: Int32 = 3) throws -> [UInt8] {
        try ZstdCompressor(level: level).compress(input)
    }

    @Test("empty input")
    func empty() throws {
        #expect(throws: CompressionError.empty) { try ZstdDecompressor().decompress([UInt8]()) }
    }

    @Test("every truncation of a small frame throws, one-shot and streamed")
    func everyTruncation() throws {
        var random = SeededRandom(seed: 1)
        let input = random.recordLikeBytes(3_000)
        let frame = try Self.frame(input)
        let decompressor = try ZstdDecompressor()
        for length in 0..<frame.count {
            let prefix = Array(frame[..<length])
            #expect(throws: CompressionError.self, "one-shot, length \(length)") {
                try decompressor.decompress(prefix)
            }
            var out: [UInt8] = []
            #expect(throws: CompressionError.self, "streamed, length \(length)") {
                try decompressor.beginStream()
                try decompressor.feed(prefix, into: &out)
                try decompressor.finishStream()
            }
            decompressor.cancelStream()
        }
        // Truncations inside the frame report truncation, not garbage.
        let cut = Array(frame[..<(frame.count / 2)])
        do {
            _ = try decompressor.decompress(cut)
            Issue.record("a half frame decoded")
        } catch let error as CompressionError {
            guard case .truncated = error else {
                Issue.record("half frame reported \(error), expected .truncated")
                return
            }
        }
    }

    @Test("random bit flips never yield wrong data", arguments: [UInt64(1), 2, 3, 4])
    func bitFlips(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let input = seed.isMultiple(of: 2) ? random.recordLikeBytes(5_000) : random.bytes(2_000)
        let frame = try Self.frame(input)
        let decompressor = try ZstdDecompressor()
        for trial in 0..<1_500 {
            var damaged = frame
            let flips = 1 + Int(random.next() % 3)
            for _ in 0..<flips {
                let bit = Int(random.next() % UInt64(frame.count * 8))
                damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            }
            do {
                let output = try decompressor.decompress(damaged)
                #expect(output == input, "seed \(seed) trial \(trial): damaged frame decoded to different bytes")
            } catch is CompressionError {
                // Detected, as it should be.
            }
        }
    }

    @Test("every single-bit flip of a tiny frame is detected or harmless")
    func exhaustiveFlips() throws {
        let input = Array("a small record: title=Blue River, plays=12".utf8)
        let frame = try Self.frame(input)
        let decompressor = try ZstdDecompressor()
        var detected = 0
        for bit in 0..<(frame.count * 8) {
            var damaged = frame
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            do {
                #expect(try decompressor.decompress(damaged) == input, "bit \(bit)")
            } catch is CompressionError {
                detected += 1
            }
        }
        #expect(detected > frame.count * 8 / 2)
    }

    @Test("foreign files are named as not zstd")
    func foreign() throws {
        let decompressor = try ZstdDecompressor()
        let samples: [[UInt8]] = [
            Array("hello, world\n".utf8),
            [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0],  // gzip
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],  // PNG
            [0x00],
            [0x28, 0xB5, 0x2F, 0xFC, 0, 0, 0],  // off by one in the magic
            [0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4],  // a skippable frame, not data
        ]
        for sample in samples {
            #expect(throws: CompressionError.notZstd(firstBytes: Array(sample.prefix(8)))) {
                try decompressor.decompress(sample)
            }
        }
    }

    @Test("bytes after the frame are reported with their offset")
    func trailing() throws {
        let frame = try Self.frame(Array("payload".utf8))
        let decompressor = try ZstdDecompressor()
        #expect(throws: CompressionError.trailingData(offset: frame.count, count: 3)) {
            try decompressor.decompress(frame + [1, 2, 3])
        }
        #expect(throws: CompressionError.trailingData(offset: frame.count, count: frame.count)) {
            try decompressor.decompress(frame + frame)
        }
    }

    /// A hand-made frame: magic, descriptor 0x20 (single segment, 1-byte
    /// content size, no checksum), size 3, one last raw block of 3 bytes.
    static let uncheckedFrame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x03, 0x19, 0x00, 0x00, 0x61, 0x62, 0x63]

    @Test("frames without a checksum are refused unless allowed")
    func missingChecksum() throws {
        #expect(throws: CompressionError.missingChecksum) {
            try ZstdDecompressor().decompress(Self.uncheckedFrame)
        }
        let lenient = try ZstdDecompressor(requiresChecksum: false)
        #expect(try lenient.decompress(Self.uncheckedFrame) == Array("abc".utf8))
    }

    @Test("a frame whose declared size disagrees with its content is refused")
    func declaredSizeWrong() throws {
        var frame = Self.uncheckedFrame
        frame[5] = 4  // declares 4 bytes, holds 3
        #expect(throws: CompressionError.self) {
            try ZstdDecompressor(requiresChecksum: false).decompress(frame)
        }
    }

    @Test("output beyond the limit is refused before allocating it")
    func tooLarge() throws {
        let frame = try Self.frame([UInt8](repeating: 0, count: 10_000))
        let small = try ZstdDecompressor(maximumOutputSize: 1_000)
        #expect(throws: CompressionError.tooLarge(size: 10_000, limit: 1_000)) { try small.decompress(frame) }

        // A streamed frame with no declared size is cut off as it grows.
        let compressor = try ZstdCompressor()
        var streamed: [UInt8] = []
        try compressor.beginStream()
        try compressor.feed([UInt8](repeating: 0, count: 500_000), into: &streamed)
        try compressor.finishStream(into: &streamed)
        let limited = try ZstdDecompressor(maximumOutputSize: 200_000)
        #expect(throws: CompressionError.self) { try limited.decompress(streamed) }
    }

    @Test("errors read well when printed")
    func descriptions() {
        #expect(CompressionError.notZstd(firstBytes: [0x1F, 0x8B]).description.contains("1f 8b"))
        #expect(CompressionError.truncated(available: 10, needed: 18).description.contains("10 bytes"))
        #expect(CompressionError.trailingData(offset: 40, count: 2).description.contains("offset 40"))
    }
}
