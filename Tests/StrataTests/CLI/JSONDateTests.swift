import Foundation
import StrataCommands
import Testing

/// `$date` text and the dates it stands for: every millisecond reads back
/// as itself, invalid text is refused, and command-line dates take only
/// the forms the help names.
@Suite("JSON dates: millisecond round trips, strict reading, command-line forms")
struct JSONDateTests {
    static func text(_ date: Date) -> String? {
        var json = JSONWriter()
        json.date(secondsSince2001: date.timeIntervalSinceReferenceDate)
        let written = String(decoding: json.bytes, as: UTF8.self)
        guard written.hasPrefix(#"{"$date":""#) else { return nil }
        return String(written.dropFirst(#"{"$date":""#.count).prefix(24))
    }

    @Test("a millisecond's text reads as a date that writes the same text, and agrees with its seconds")
    func millisecondsRoundTrip() throws {
        var random = SeededRandom(seed: 0x3D47E)
        for round in 0..<20_000 {
            // Whole seconds from 1583 to 9999, and every millisecond often.
            let whole = Int.random(in: -12_212_553_600..<253_402_300_800, using: &random)
            let millis = round < 1_000 ? round : Int.random(in: 0..<1_000, using: &random)
            let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
            let (year, month, day) = JSONDates.civil(days: days)
            let time = whole - days * 86_400
            let text =
                String(
                    format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                    year,
                    month,
                    day,
                    time / 3_600,
                    time / 60 % 60,
                    time % 60,
                    millis
                )
            let date = try #require(JSONDates.parse(text), "\(text)")
            #expect(
                Self.text(date) == text,
                "seed 0x3D47E, round \(round): \(text) → \(date.timeIntervalSinceReferenceDate)"
            )
            #expect(
                JSONDates.text(text, agreesWith: date.timeIntervalSinceReferenceDate) == true,
                "\(text) beside \(date.timeIntervalSinceReferenceDate)"
            )
        }
    }

    @Test("seconds written with a millisecond and their printed text name the same time")
    func secondsAndText() throws {
        for seconds in [817_192_800.001, 817_192_800.123, -0.001, 0.999, 1e9 + 0.5, -1e10 + 0.007, 2.3e11 + 0.857] {
            let text = try #require(Self.text(Date(timeIntervalSinceReferenceDate: seconds)), "\(seconds)")
            #expect(JSONDates.text(text, agreesWith: seconds) == true, "\(seconds): \(text)")
            // Never later than the date, and written again the same.
            let parsed = try #require(JSONDates.parse(text))
            #expect(parsed.timeIntervalSinceReferenceDate <= seconds, "\(seconds): \(text)")
            #expect(Self.text(parsed) == text, "\(seconds): \(text)")
        }
        // Earlier builds wrote `.000` beside these seconds (rounding through
        // seconds since 1970): their exports still import.
        #expect(JSONDates.text("2026-11-24T06:00:00.000Z", agreesWith: 817_192_800.001) == true)
        #expect(JSONDates.text("2026-11-24T06:00:00.002Z", agreesWith: 817_192_800.001) == false)
        // The literal's double is the one `…00.001Z` reads as.
        #expect(JSONDates.parse("2026-11-24T06:00:00.001Z")?.timeIntervalSinceReferenceDate == 817_192_800.001)
        #expect(Self.text(Date(timeIntervalSinceReferenceDate: 817_192_800.001)) == "2026-11-24T06:00:00.001Z")
    }

    @Test(
        "text that is no valid date is refused, never moved to one",
        arguments: [
            "2026-02-30T00:00:00Z", "2026-11-28T24:00:00Z", "2026-11-28T23:60:00Z", "2026-11-28T23:00:60Z",
            "2026-11-28T23:00:00+25:00", "2026-13-01T00:00:00Z", "2026-11-28T23:00:00", "2026-11-28T23:00Z",
            "2026-11-28", "2026-11-28T23:00:00.Z", "2026-11-28T23:00:00.5000000000", "2026-11-28 23:00:00Z",
            "2026-11-28T23:00:00+2", "2026-11-28T23:00:00+02:0", "2026-11-28T23:00:00+02:00:00",
        ]
    )
    func refused(text: String) {
        #expect(JSONDates.parse(text) == nil)
        #expect(JSONDates.text(text, agreesWith: 0) == nil)
    }

    @Test("a fraction of any length: its first nine digits count, its milliseconds are its first three")
    func longFractions() throws {
        let base = try #require(JSONDates.parse("2026-11-28T23:00:00Z")).timeIntervalSinceReferenceDate
        let long = try #require(JSONDates.parse("2026-11-28T23:00:00.5000000000Z"))
        #expect(long.timeIntervalSinceReferenceDate == base + 0.5)
        let longer = try #require(JSONDates.parse("2026-11-28T23:00:00.123456789012Z"))
        #expect(Self.text(longer) == "2026-11-28T23:00:00.123Z")
        #expect(JSONDates.text("2026-11-28T23:00:00.1239Z", agreesWith: longer.timeIntervalSinceReferenceDate) == true)
    }

    @Test("command-line dates: ISO 8601, the time as log prints it, a day; nothing else")
    func commandLine() throws {
        let exact = try #require(JSONDates.parse("2026-11-28T23:59:59Z"))
        #expect(JSONDates.commandLine("2026-11-28 23:59:59") == exact)
        #expect(JSONDates.commandLine("2026-11-28T23:59:59") == exact)
        #expect(JSONDates.commandLine("2026-11-28T23:59:59Z") == exact)
        #expect(JSONDates.commandLine("2026-11-29T01:59:59+02:00") == exact)
        #expect(JSONDates.commandLine("2026-11-29T01:59:59+02") == exact)
        #expect(JSONDates.parse("2026-11-28T21:59:59-0200") == exact)
        #expect(JSONDates.commandLine("2026-11-28") == JSONDates.parse("2026-11-28T00:00:00Z"))
        for text in ["2026-11-28nonsense", "2026-11-28T23:00", "2026-02-30", "28/11/2026", "", "2026-11-28 24:00:00"] {
            #expect(JSONDates.commandLine(text) == nil, "\(text)")
        }
    }
}
