import Foundation
import StrataCommands
import Testing

/// The import's line reader: batches end at a line count or a byte budget,
/// a line longer than a read is found whole, numbers count every line.
@Suite("strata: import's line reader")
struct LineReaderTests {
    /// The lines of `text` read from a file in batches of at most `count`
    /// lines and `batchBytes` bytes.
    static func batches(
        _ text: [UInt8],
        count: Int,
        batchBytes: Int,
        lineLimit: Int = 1 << 30
    ) throws -> [LineReader.Batch] {
        let path = temporaryStorePath("line-reader") + ".jsonl"
        defer { unlink(path) }
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        try #require(text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == text.count)
        close(descriptor)
        let input = open(path, O_RDONLY)
        try #require(input >= 0)
        defer { close(input) }
        var reader = LineReader(input, batchBytes: batchBytes, lineLimit: lineLimit)
        var batches: [LineReader.Batch] = []
        while true {
            let batch = try reader.next(count)
            if batch.lines.isEmpty { break }
            batches.append(batch)
        }
        return batches
    }

    static func lines(_ batches: [LineReader.Batch]) -> [[UInt8]] {
        batches.flatMap { batch in batch.lines.map { Array(batch.bytes[$0]) } }
    }

    @Test("a batch ends at its byte budget (at least one line), and line numbers run on")
    func byteBudget() throws {
        let lines = (0..<100).map { n in Array(String(repeating: "x", count: 1 + n % 37).utf8) }
        let text: [UInt8] = lines.flatMap { line in line + [0x0A] }
        let batches = try Self.batches(text, count: 1_000, batchBytes: 100)
        #expect(Self.lines(batches) == lines)
        var next = 1
        for batch in batches {
            #expect(batch.firstLine == next)
            next += batch.lines.count
            // The budget is checked before each line: a batch passes it by
            // at most its last line.
            let bytes = batch.lines.dropLast().reduce(0) { $0 + $1.count + 1 }
            #expect(bytes < 100, "a batch of \(batch.lines.count) lines, \(bytes) bytes before its last")
        }
        let single = try Self.batches(Array(String(repeating: "y", count: 500).utf8), count: 10, batchBytes: 100)
        #expect(single.count == 1 && single[0].lines.count == 1, "a line over the budget is a batch of its own")
    }

    @Test("lines longer than a read (4 MiB) come whole, between short ones, with and without a last newline")
    func longLines() throws {
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 9 << 20)
        for ending: [UInt8] in [[0x0A], []] {
            let text = Array("first\n".utf8) + long + [0x0A] + Array("last".utf8) + ending
            let batches = try Self.batches(text, count: 2, batchBytes: 256 << 20)
            #expect(Self.lines(batches) == [Array("first".utf8), long, Array("last".utf8)])
            #expect(batches.map(\.firstLine) == [1, 3])
        }
    }

    @Test("input without a line break past the limit is refused at its line, not read into memory whole")
    func lineLimit() throws {
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 9 << 20)
        for ending: [UInt8] in [[0x0A], []] {
            let text = Array("first\nsecond\n".utf8) + long + ending + Array("after\n".utf8)
            #expect {
                _ = try Self.batches(text, count: 10, batchBytes: 256 << 20, lineLimit: 8 << 20)
            } throws: { error in
                (error as? LineReader.LineTooLong)?.line == 3 && (error as? LineReader.LineTooLong)?.limit == 8 << 20
            }
            // At the limit exactly (and under it), the line is read.
            let exact = try Self.batches(text, count: 10, batchBytes: 256 << 20, lineLimit: long.count + 5 + 1)
            #expect(Self.lines(exact).count == (ending.isEmpty ? 3 : 4))
        }
    }
}
