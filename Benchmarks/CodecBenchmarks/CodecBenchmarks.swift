import Benchmark
import Strata

/// Allocation gates for the codec: with reused contexts and buffers, a
/// compress or decompress of a steady-size input must not allocate.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.mallocCountTotal],
        warmupIterations: 2,
        scalingFactor: .one,
        // Malloc counts repeat exactly: a few iterations decide the gate.
        maxDuration: .seconds(2),
        maxIterations: 20,
        thresholds: [
            .mallocCountTotal: .init(absolute: [.p90: 2])
        ]
    )

    let input = Array((0..<256_000).map { UInt8(truncatingIfNeeded: ($0 * 7) ^ ($0 >> 5)) })

    Benchmark("zstd_compress_reused_buffer_256KB") { benchmark in
        let compressor = try ZstdCompressor(level: 1)
        var frame: [UInt8] = []
        try input.withUnsafeBytes { try compressor.compress($0, into: &frame) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try input.withUnsafeBytes { try compressor.compress($0, into: &frame) }
            blackHole(frame.count)
        }
    }

    Benchmark("zstd_decompress_reused_buffer_256KB") { benchmark in
        let frame = try ZstdCompressor(level: 1).compress(input)
        let decompressor = try ZstdDecompressor()
        var output: [UInt8] = []
        try frame.withUnsafeBytes { try decompressor.decompress($0, into: &output) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try frame.withUnsafeBytes { try decompressor.decompress($0, into: &output) }
            blackHole(output.count)
        }
    }

    Benchmark("crc32c_1MB") { benchmark in
        let bytes = [UInt8](repeating: 0x5A, count: 1 << 20)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(CRC32C.checksum(bytes))
        }
    }
}
