import Strata
import Testing

/// `ZstdDecompressor.check` decodes a frame a window at a time without
/// keeping it: it must accept exactly the inputs `decompress` accepts.
@Suite("zstd check without keeping the content")
struct ZstdCheckTests {
    /// Both calls succeed with the same size, or both throw.
    static func expectAgreement(
        _ input: [UInt8],
        _ decompressor: ZstdDecompressor,
        _ context: @autoclosure () -> String
    ) {
        let decoded = Result { try decompressor.decompress(input) }
        let checked = Result { try input.withUnsafeBytes { try decompressor.check($0) } }
        switch (decoded, checked) {
        case (.success(let bytes), .success(let size)):
            #expect(bytes.count == size, "size, \(context())")
        case (.failure, .failure):
            break
        case (.success, .failure(let error)):
            Issue.record("check refused what decompress accepts (\(error)), \(context())")
        case (.failure(let error), .success):
            Issue.record("check accepted what decompress refuses (\(error)), \(context())")
        }
    }

    @Test("whole frames of many windows, with and without a declared size")
    func wholeFrames() throws {
        var random = SeededRandom(seed: 7)
        let decompressor = try ZstdDecompressor()
        for size in [0, 1, 1_000, 131_072, 131_073, 1_000_000, 3_000_000] {
            let input = random.recordLikeBytes(size)
            let frame = try ZstdCompressor(level: 1).compress(input)
            #expect(try frame.withUnsafeBytes { try decompressor.check($0) } == size, "size \(size)")
            // Streamed: no content size in the header.
            let compressor = try ZstdCompressor()
            var streamed: [UInt8] = []
            try compressor.beginStream()
            try compressor.feed(input, into: &streamed)
            try compressor.finishStream(into: &streamed)
            Self.expectAgreement(streamed, decompressor, "streamed, size \(size)")
            #expect(try streamed.withUnsafeBytes { try decompressor.check($0) } == size, "streamed, size \(size)")
        }
    }

    @Test("every truncation, and bytes after the frame")
    func truncations() throws {
        var random = SeededRandom(seed: 8)
        let frame = try ZstdCompressor().compress(random.recordLikeBytes(300_000))
        let decompressor = try ZstdDecompressor()
        for length in stride(from: 0, to: frame.count, by: max(1, frame.count / 400)) {
            Self.expectAgreement(Array(frame[..<length]), decompressor, "length \(length)")
            #expect(throws: CompressionError.self, "length \(length)") {
                try Array(frame[..<length]).withUnsafeBytes { try decompressor.check($0) }
            }
        }
        Self.expectAgreement(frame + [0], decompressor, "one byte after")
        Self.expectAgreement(frame + frame, decompressor, "two frames")
        #expect(throws: CompressionError.trailingData(offset: frame.count, count: 3)) {
            try (frame + [1, 2, 3]).withUnsafeBytes { try decompressor.check($0) }
        }
        // The window is reused: a sound frame after a failure still checks.
        #expect(try frame.withUnsafeBytes { try decompressor.check($0) } == 300_000)
    }

    @Test("random bit flips and random bytes", arguments: [UInt64(1), 2, 3])
    func flips(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let input = seed == 1 ? random.bytes(200_000) : random.recordLikeBytes(200_000)
        let frame = try ZstdCompressor().compress(input)
        let decompressor = try ZstdDecompressor()
        for trial in 0..<300 {
            var damaged = frame
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let bit = Int(random.next() % UInt64(frame.count * 8))
                damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            }
            Self.expectAgreement(damaged, decompressor, "seed \(seed) trial \(trial)")
        }
        for trial in 0..<200 {
            var bytes = ZstdFrameHeaderBytes.magic + random.bytes(Int(random.next() % 64))
            if trial.isMultiple(of: 2) { bytes = random.bytes(Int(random.next() % 64)) }
            Self.expectAgreement(bytes, decompressor, "seed \(seed) random \(trial)")
        }
    }

    @Test("no checksum, a wrong declared size, output beyond the limit")
    func refusals() throws {
        let unchecked = ZstdCorruptionTests.uncheckedFrame
        #expect(throws: CompressionError.missingChecksum) {
            try unchecked.withUnsafeBytes { try ZstdDecompressor().check($0) }
        }
        let lenient = try ZstdDecompressor(requiresChecksum: false)
        #expect(try unchecked.withUnsafeBytes { try lenient.check($0) } == 3)
        var wrongSize = unchecked
        wrongSize[5] = 4
        Self.expectAgreement(wrongSize, lenient, "declares 4 bytes, holds 3")
        #expect(throws: CompressionError.self) { try wrongSize.withUnsafeBytes { try lenient.check($0) } }

        let zeros = try ZstdCompressor().compress([UInt8](repeating: 0, count: 10_000))
        let small = try ZstdDecompressor(maximumOutputSize: 1_000)
        #expect(throws: CompressionError.tooLarge(size: 10_000, limit: 1_000)) {
            try zeros.withUnsafeBytes { try small.check($0) }
        }
        let compressor = try ZstdCompressor()
        var streamed: [UInt8] = []
        try compressor.beginStream()
        try compressor.feed([UInt8](repeating: 0, count: 500_000), into: &streamed)
        try compressor.finishStream(into: &streamed)
        let limited = try ZstdDecompressor(maximumOutputSize: 200_000)
        #expect(throws: CompressionError.self) { try streamed.withUnsafeBytes { try limited.check($0) } }
        #expect(throws: CompressionError.empty) { try [UInt8]().withUnsafeBytes { try lenient.check($0) } }
    }
}

extension ZstdCheckTests {
    /// A hand-made frame without a checksum: a window of 2^`windowLog`
    /// bytes, a declared content size, and `size` zeros in RLE blocks.
    static func rleFrame(zeros size: Int, windowLog: Int, declaring declared: Int? = nil) -> [UInt8] {
        // Descriptor: a 4-byte content size, not single-segment (so the
        // window byte follows), no checksum, no dictionary.
        var frame = ZstdFrameHeaderBytes.magic + [0x80, UInt8((windowLog - 10) << 3)]
        let stated = UInt32(declared ?? size)
        frame += [UInt8(stated & 0xFF), UInt8(stated >> 8 & 0xFF), UInt8(stated >> 16 & 0xFF), UInt8(stated >> 24)]
        var left = size
        repeat {
            let block = min(left, 1 << 17)
            left -= block
            let header = UInt32(block) << 3 | 1 << 1 | (left == 0 ? 1 : 0)
            frame += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16), 0]
        } while left > 0
        return frame
    }

    @Test("a window beyond the streaming decoder's default, a declared size no frame can hold")
    func windowsAndDeclaredSizes() throws {
        let lenient = try ZstdDecompressor(requiresChecksum: false)
        // zstd's streaming decoder refuses a window over 128 MiB once the
        // content is larger too (a smaller content bounds the window);
        // decoded in one call, as `decompress` does, no window is refused.
        let large = 129 << 20
        for (size, windowLog) in [(1_000, 20), (1_000, 28), (300_000, 30), (1 << 17, 31), (large, 28)] {
            let frame = Self.rleFrame(zeros: size, windowLog: windowLog)
            Self.expectAgreement(frame, lenient, "\(size) bytes, window 2^\(windowLog)")
            #expect(try frame.withUnsafeBytes { try lenient.check($0) } == size, "window 2^\(windowLog)")
        }
        #expect(
            try lenient.decompress(Self.rleFrame(zeros: 300_000, windowLog: 30))
                == [UInt8](repeating: 0, count: 300_000)
        )
        // The check's larger window does not outlive it: a stream still
        // refuses the large window.
        var out: [UInt8] = []
        try lenient.beginStream()
        #expect(throws: CompressionError.self) {
            try lenient.feed(Self.rleFrame(zeros: large, windowLog: 28), into: &out)
            try lenient.finishStream()
        }
        lenient.cancelStream()
        // A header declaring 100 MiB in a frame of a few bytes.
        let lying = Self.rleFrame(zeros: 10, windowLog: 20, declaring: 100 << 20)
        Self.expectAgreement(lying, lenient, "declares 100 MiB")
        #expect(throws: CompressionError.self) { try lying.withUnsafeBytes { try lenient.check($0) } }
    }

    @Test("check and decompress refuse to run inside a stream, which goes on")
    func insideAStream() throws {
        let decompressor = try ZstdDecompressor()
        let input = Array("a frame decoded in pieces".utf8)
        let frame = try ZstdCompressor().compress(input)
        var out: [UInt8] = []
        try decompressor.beginStream()
        try decompressor.feed(frame.prefix(5), into: &out)
        #expect(throws: CompressionError.self) { try frame.withUnsafeBytes { try decompressor.check($0) } }
        #expect(throws: CompressionError.self) { try decompressor.decompress(frame) }
        try decompressor.feed(frame.dropFirst(5), into: &out)
        try decompressor.finishStream()
        #expect(out == input)
    }
}

/// The four bytes that open every zstd frame, so that random tails are
/// read as frames rather than refused at the magic.
private enum ZstdFrameHeaderBytes {
    static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
}
