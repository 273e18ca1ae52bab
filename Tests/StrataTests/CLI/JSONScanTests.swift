import Foundation
import Strata
import StrataCommands
import Testing

/// The shortcuts of the JSON reader's fast paths against the plain
/// readings they stand for: a double read without `Double(_:)`, and a
/// string scanned eight bytes at a time.
@Suite("JSON reader: short doubles and word-at-a-time strings")
struct JSONScanTests {
    /// A JSON number with a fraction or an exponent: sign, digits, point,
    /// digits, exponent, each drawn to reach the fast path's edges (19
    /// digits, 2^53, 10^22) and past them.
    static func randomNumber(_ random: inout SeededRandom) -> String {
        let digits = String((0..<(1 + random.int(below: 22))).map { _ in "0123456789".randomElement(using: &random)! })
        let integral = digits.drop { $0 == "0" }.isEmpty ? "0" : String(digits.drop { $0 == "0" })
        var text = random.chance(30) ? "-" : ""
        let point = random.int(below: integral.count + 1)
        if point == integral.count || random.chance(20) {
            text += integral
            if random.chance(50) { text += "." + String(repeating: "0", count: random.int(below: 4)) + "1" }
        } else {
            let split = integral.index(integral.startIndex, offsetBy: max(1, point))
            text += integral[..<split] + "." + (integral[split...].isEmpty ? "0" : integral[split...])
        }
        if random.chance(40) || !text.contains(".") {
            text += ["e", "E"][random.int(below: 2)] + ["", "+", "-"][random.int(below: 3)]
            text += String(random.int(below: 30))
        }
        return text
    }

    @Test("a short double is the double Double(_:) reads, bit for bit (random numbers near the fast path's edges)")
    func shortDoubles() {
        var random = SeededRandom(seed: 0xD0B1E)
        var fast = 0
        let fixed = [
            "0.0", "-0.0", "0e5", "1e22", "1e23", "9007199254740992.0", "9007199254740993.0", "398.005",
            "0.1", "-2.5e-3", "1234567890123456789.0", "12345678901234567890.0", "4.9e-324", "1.7976931348623157e308",
            "0.30000000000000004", "1E+2", "100e-22", "1e-22", "1e-23",
        ]
        for (round, text) in (fixed + (0..<50_000).map { _ in Self.randomNumber(&random) }).enumerated() {
            let bytes = Array(text.utf8)
            let short = bytes.withUnsafeBufferPointer { JSONReader.shortDouble($0) }
            guard let short else { continue }
            fast += 1
            let plain = Double(text)
            #expect(
                plain?.bitPattern == short.bitPattern,
                "round \(round): \(text) read \(short), Double(_:) \(plain as Any)"
            )
        }
        // Most of them take the fast path, and some do not.
        #expect(fast > 20_000 && fast < 50_000, "\(fast) of 50,019 on the fast path")
        // Out of its reach: more than 19 digits, past 2^53, past 10^22.
        for text in ["12345678901234567890.5", "9007199254740993.0", "1e23", "1.5e-23"] {
            #expect(Array(text.utf8).withUnsafeBufferPointer { JSONReader.shortDouble($0) } == nil, "\(text)")
        }
    }

    @Test("the word-at-a-time test flags exactly the first quote, backslash or control byte of any eight bytes")
    func wordTest() {
        var random = SeededRandom(seed: 0x5CA7)
        let interesting: [UInt8] = [
            0x22, 0x5C, 0x00, 0x01, 0x1F, 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF,
        ]
        for round in 0..<200_000 {
            let bytes = (0..<8).map { _ in
                random.chance(30)
                    ? interesting[random.int(below: interesting.count)] : UInt8(truncatingIfNeeded: random.next())
            }
            let word = bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            let first = bytes.firstIndex { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }
            let flagged = JSONReader.needsLook(word)
            #expect(
                flagged == 0 ? first == nil : first == flagged.trailingZeroBitCount / 8,
                "round \(round): \(bytes.map { String($0, radix: 16) })"
            )
        }
    }

    @Test("a string with an escape, a quote or a control character at any offset reads directly as it reads generally")
    func specialAtEveryOffset() {
        let parser = RecordLineParser(table: "songs", idField: "$id")
        let format = RecordLineFormat(idField: "$id", table: "songs")
        var writer = RecordWriter()
        for special in [#"\""#, #"\\"#, #"\n"#, #"\u0001"#, "\u{01}", "\t", "é", "🎵"] {
            for offset in 0..<26 {
                let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: 25 - offset)
                let line = Array(#"{"$id":1,"title":"\#(text)","tags":["\#(text)"]}"#.utf8)
                let (direct, general) = RecordLineTests.both(line, parser, format, &writer)
                if let direct { #expect(direct == general, "\(special) at \(offset)") }
                // Control characters are no JSON unescaped; the rest reads.
                let raw = special == "\u{01}" || special == "\t"
                #expect((general == nil) == raw, "\(special) at \(offset)")
                // No escape and no control character: read directly.
                if !special.hasPrefix("\\") && !raw { #expect(direct != nil, "\(special) at \(offset)") }
            }
        }
    }
}
