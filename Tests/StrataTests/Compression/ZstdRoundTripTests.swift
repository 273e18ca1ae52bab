import Strata
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("zstd round trips")
struct ZstdRoundTripTests {
    @Test("small inputs round trip at several levels", arguments: [Int32(1), 3, 9, 19])
    func smallInputs(level: Int32) throws {
        let compressor = try ZstdCompressor(level: level)
        let decompressor = try ZstdDecompressor()
        var random = SeededRandom(seed: UInt64(level))
        let inputs: [[UInt8]] = [
            [], [0x2A], random.bytes(2), random.bytes(1000), random.recordLikeBytes(10_000),
            [UInt8](repeating: 7, count: 100_000), random.bytes(300_000),
        ]
        for input in inputs {
            let frame = try compressor.compress(input)
            #expect(try decompressor.decompress(frame) == input, "size \(input.count) at level \(level)")
        }
    }

    @Test("random and record-like data round trip with reused buffers")
    func reusedBuffers() throws {
        let compressor = try ZstdCompressor(level: 1)
        let decompressor = try ZstdDecompressor()
        var random = SeededRandom(seed: 99)
        var frame: [UInt8] = []
        var restored: [UInt8] = []
        for round in 0..<60 {
            let size = Int(random.next() % 70_000)
            let input = round.isMultiple(of: 2) ? random.bytes(size) : random.recordLikeBytes(size)
            try input.withUnsafeBytes { try compressor.compress($0, into: &frame) }
            try frame.withUnsafeBytes { try decompressor.decompress($0, into: &restored) }
            #expect(restored == input, "round \(round), size \(size)")
        }
    }

    @Test("100 MB of record-like data round trips")
    func hundredMegabytes() throws {
        var random = SeededRandom(seed: 100)
        let block = random.recordLikeBytes(1 << 20)
        var input: [UInt8] = []
        input.reserveCapacity(100 << 20)
        for index in 0..<100 {
            input.append(contentsOf: block)
            input[input.count - 1 - index] = UInt8(truncatingIfNeeded: index)  // no two blocks equal
        }
        let compressor = try ZstdCompressor(level: 1)
        let frame = try compressor.compress(input)
        #expect(frame.count < input.count / 3)
        let restored = try ZstdDecompressor().decompress(frame)
        #expect(restored.count == input.count)
        let same = restored.withUnsafeBytes { a in
            input.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
        #expect(same)
    }

    @Test("streamed frames decode one-shot and streamed, in any chunking")
    func streaming() throws {
        let compressor = try ZstdCompressor(level: 3)
        let decompressor = try ZstdDecompressor()
        var random = SeededRandom(seed: 5)
        for round in 0..<20 {
            let input = random.recordLikeBytes(Int(random.next() % 300_000))
            let pledged: Int? = round.isMultiple(of: 2) ? input.count : nil
            var frame: [UInt8] = []
            try compressor.beginStream(pledgedSize: pledged)
            var offset = 0
            while offset < input.count {
                let step = min(input.count - offset, 1 + Int(random.next() % 100_000))
                try compressor.feed(input[offset..<(offset + step)], into: &frame)
                offset += step
            }
            try compressor.finishStream(into: &frame)
            #expect(try decompressor.decompress(frame) == input, "one-shot, round \(round)")

            var restored: [UInt8] = []
            try decompressor.beginStream()
            offset = 0
            while offset < frame.count {
                let step = min(frame.count - offset, 1 + Int(random.next() % 5_000))
                try decompressor.feed(frame[offset..<(offset + step)], into: &restored)
                offset += step
            }
            try decompressor.finishStream()
            #expect(restored == input, "streamed, round \(round)")
        }
    }

    @Test("a pledged size that is not met fails the stream")
    func pledgeBroken() throws {
        let compressor = try ZstdCompressor(level: 1)
        var frame: [UInt8] = []
        try compressor.beginStream(pledgedSize: 100)
        try compressor.feed([UInt8](repeating: 1, count: 10), into: &frame)
        #expect(throws: CompressionError.self) { try compressor.finishStream(into: &frame) }
        // The compressor is usable again afterwards.
        #expect(try ZstdDecompressor().decompress(try compressor.compress([1, 2, 3])) == [1, 2, 3])
    }

    @Test("levels outside zstd's range are refused")
    func badLevel() {
        #expect(throws: CompressionError.self) { try ZstdCompressor(level: 1000) }
    }

    @Test("stream calls out of order throw")
    func streamMisuse() throws {
        let compressor = try ZstdCompressor()
        var out: [UInt8] = []
        #expect(throws: CompressionError.self) { try compressor.feed([1], into: &out) }
        #expect(throws: CompressionError.self) { try compressor.finishStream(into: &out) }
        let decompressor = try ZstdDecompressor()
        #expect(throws: CompressionError.self) { try decompressor.feed([1], into: &out) }
        #expect(throws: CompressionError.self) { try decompressor.finishStream() }
    }
}
