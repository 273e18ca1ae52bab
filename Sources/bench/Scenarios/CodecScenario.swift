import Foundation
import Strata

/// `codec`: zstd compression and decompression throughput of a synthetic
/// record set at levels 1 and 3, beside a plain memory copy and the CRC32C
/// checksum of the same bytes measured in the same run.
struct CodecScenario {
    static let name = "codec"

    func run(_ context: BenchContext) throws {
        let size = context.quick ? 20_000_000 : 100_000_000
        let samples = context.quick ? 3 : 5
        let section = "codec: zstd on \(size / 1_000_000) MB of record-like text (median of \(samples))"
        context.progress.update("codec: generating \(size / 1_000_000) MB")
        let heapBefore = MemoryProbe.allocatedBytes()
        let data = SyntheticRecordText.make(byteCount: size, seed: context.seed)
        let heapForInput = MemoryProbe.allocatedBytes() - heapBefore
        let megabytes = Double(data.count) / 1_000_000

        context.progress.update("codec: memcpy and CRC32C baselines")
        var copy = [UInt8](repeating: 0, count: data.count)
        let copyNs = Measure.median(samples: samples) {
            copy.withUnsafeMutableBytes { target in data.withUnsafeBytes { target.copyMemory(from: $0) } }
            return copy[data.count / 2]
        }
        let copyRate = megabytes / (copyNs / 1e9)
        let crcNs = Measure.median(samples: samples) { CRC32C.checksum(data) }
        let crcRate = megabytes / (crcNs / 1e9)
        let report = context.report
        report.add(Self.name, section: section, subject: "memcpy (baseline)", value: copyRate, unit: "MB/s")
        report.add(
            Self.name,
            section: section,
            subject: "CRC32C" + (CRC32C.isHardwareAccelerated ? " (hardware)" : " (table)"),
            value: crcRate,
            unit: "MB/s",
            baseline: ("memcpy", copyRate)
        )

        if CRC32C.isHardwareAccelerated {
            // The hardware path runs at about half of memcpy; the table path
            // at under a tenth. A floor of 0.15 catches losing the hardware path.
            report.gate("CRC32C throughput / memcpy", measured: crcRate / copyRate, .atLeast, 0.15)
        }

        let memorySection = "codec: memory (jemalloc live heap, kernel peak RSS reset per phase)"
        report.add(
            Self.name,
            section: memorySection,
            subject: "live heap holding the input",
            value: Double(heapForInput) / 1e6,
            unit: "MB",
            baseline: ("input size", Double(data.count) / 1e6)
        )
        let decompressor = try ZstdDecompressor()
        for level: Int32 in [1, 3] {
            context.progress.update("codec: level \(level)")
            let compressor = try ZstdCompressor(level: level)
            var frame: [UInt8] = []
            MemoryProbe.resetPeak()
            let residentBefore = MemoryProbe.residentBytes()
            let compressNs = try Measure.median(samples: samples) {
                try data.withUnsafeBytes { try compressor.compress($0, into: &frame) }
                return frame.count
            }
            var restored: [UInt8] = []
            let decompressNs = try Measure.median(samples: samples) {
                try frame.withUnsafeBytes { try decompressor.decompress($0, into: &restored) }
                return restored.count
            }
            report.add(
                Self.name,
                section: memorySection,
                subject: "level \(level): peak RSS growth during compress + decompress",
                value: Double(MemoryProbe.peakResidentBytes() - residentBefore) / 1e6,
                unit: "MB",
                baseline: ("input size", Double(data.count) / 1e6)
            )
            guard restored == data else {
                throw BenchError.verificationFailed("zstd level \(level) round trip differs from its input")
            }
            report.add(
                Self.name,
                section: section,
                subject: "level \(level) compress",
                value: megabytes / (compressNs / 1e9),
                unit: "MB/s",
                baseline: ("memcpy", copyRate)
            )
            report.add(
                Self.name,
                section: section,
                subject: "level \(level) decompress + verify",
                value: megabytes / (decompressNs / 1e9),
                unit: "MB/s",
                baseline: ("memcpy", copyRate)
            )
            if level == 1 {
                // ~0.07x with a reused output buffer; a fresh buffer per call
                // (page faults on 100 MB) costs about 40%.
                report.gate(
                    "zstd level 1 decompress / memcpy",
                    measured: megabytes / (decompressNs / 1e9) / copyRate,
                    .atLeast,
                    0.025
                )
            }
            report.add(
                Self.name,
                section: section,
                subject: "level \(level) ratio (input / output)",
                value: Double(data.count) / Double(frame.count),
                unit: "x"
            )
        }
        context.progress.done()
        report.printSection(section)
        report.printSection(memorySection)
    }
}
