import Foundation

/// Dates as the commands write them: ISO 8601 in UTC, milliseconds.
package enum JSONDates {
    /// Seconds since 1970 of 1583-01-01 and 10000-01-01: ISO 8601 with
    /// four-digit years in the Gregorian calendar every reader agrees on.
    private static let writable: Range<Double> = -12_212_553_600..<253_402_300_800

    /// `2026-11-24T06:00:00.123Z`; nil for a date outside 1583...9999 (or
    /// not a number), which JSON then carries as seconds alone.
    static func iso8601(_ date: Date) -> String? {
        var bytes: [UInt8] = []
        guard iso8601(date, into: &bytes, prefix: "") else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `prefix` and the date as ``iso8601(_:)`` writes it, digit by
    /// digit (no string is made); false, appending nothing, when that is nil.
    static func iso8601(_ date: Date, into bytes: inout [UInt8], prefix: StaticString) -> Bool {
        withText(date.timeIntervalSince1970) { text in
            guard let text else { return false }
            prefix.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: text)
            return true
        }
    }

    /// Calls `body` with the 24 bytes ``iso8601(_:)`` writes for
    /// the date `seconds` after 1970, or nil; allocates nothing (an export
    /// writes, and an import checks, a date per record).
    private static func withText<R>(_ seconds: Double, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard writable.contains(seconds) else { return body(nil) }
        var whole = Int(seconds.rounded(.down))
        // Rounded down, so that the text is never later than the date:
        // `log --since` with a printed time keeps that transaction.
        var millis = Int(((seconds - Double(whole)) * 1000).rounded(.down))
        if millis >= 1000 {
            // Only from a product that rounded up to 1000.0; never past
            // 9999-12-31T23:59:59.999 (four digits of year).
            guard writable.contains(Double(whole + 1)) else { return body(nil) }
            whole += 1
            millis -= 1000
        }
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let time = whole - days * 86_400
        let (year, month, day) = civil(days: days)
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &text) { raw in
            let out = raw.bindMemory(to: UInt8.self)
            var position = 0
            func digits(_ number: Int, _ count: Int, then separator: UInt8) {
                var divisor = 1
                for _ in 1..<count { divisor *= 10 }
                while divisor > 0 {
                    out[position] = UInt8(ascii: "0") + UInt8(number / divisor % 10)
                    position += 1
                    divisor /= 10
                }
                out[position] = separator
                position += 1
            }
            digits(year, 4, then: UInt8(ascii: "-"))
            digits(month, 2, then: UInt8(ascii: "-"))
            digits(day, 2, then: UInt8(ascii: "T"))
            digits(time / 3_600, 2, then: UInt8(ascii: ":"))
            digits(time / 60 % 60, 2, then: UInt8(ascii: ":"))
            digits(time % 60, 2, then: UInt8(ascii: "."))
            digits(millis, 3, then: UInt8(ascii: "Z"))
            return body(UnsafeBufferPointer(out))
        }
    }

    /// The proleptic Gregorian year, month and day of `days` after
    /// 1970-01-01 (the civil-from-days algorithm: eras of 400 years,
    /// years starting in March so that the leap day is the last).
    static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468  // days from 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Whether `text` says the date `seconds` (since 2001) as a `$date`
    /// beside `$seconds` must: the same time rounded down to the
    /// millisecond, as ``iso8601(_:)`` writes it, in any ISO 8601 form (an
    /// offset, fewer or more fraction digits); nil when `text` is no date
    /// ``parse(_:)`` reads. A hand-edited `$date` that the seconds would
    /// silently override is refused this way. O(text length), allocating
    /// nothing for the forms ``parse(_:)`` reads itself.
    package static func text(_ text: UnsafeBufferPointer<UInt8>, agreesWith seconds: Double) -> Bool? {
        let expected = milliseconds(seconds + secondsFrom1970To2001)
        if let parsed = instant(text) { return parsed.whole * 1000 + parsed.millis == expected }
        // Other ISO 8601 forms (week dates, …): Foundation's reading, whose
        // fraction may be a hair off the text's milliseconds.
        guard let string = String(validating: text, as: UTF8.self), let date = parse(string) else { return nil }
        return Int((date.timeIntervalSince1970 * 1000).rounded()) == expected
    }

    /// 2001-01-01 in seconds since 1970.
    private static let secondsFrom1970To2001 = 978_307_200.0

    /// The whole milliseconds since 1970 of `seconds` since 1970, rounded
    /// down as ``iso8601(_:)`` rounds them; nil when no four-digit year can say it.
    private static func milliseconds(_ seconds: Double) -> Int? {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return nil }
        var whole = Int(seconds.rounded(.down))
        var millis = Int(((seconds - Double(whole)) * 1000).rounded(.down))
        if millis >= 1000 {
            whole += 1
            millis -= 1000
        }
        return whole * 1000 + millis
    }

    /// ``text(_:agreesWith:)`` for a string.
    static func text(_ text: String, agreesWith seconds: Double) -> Bool? {
        var text = text
        return text.withUTF8 { Self.text($0, agreesWith: seconds) }
    }

    /// Parses what ``iso8601(_:)`` writes, and the forms without
    /// milliseconds or with an offset (`+02:00`); nil for anything else.
    /// Dates are proleptic Gregorian, as ISO 8601 has them (also before
    /// 1582, where Foundation's readers switch to the Julian calendar).
    package static func parse(_ text: String) -> Date? {
        var text = text
        if let parsed = text.withUTF8({ instant($0) }) {
            return Date(timeIntervalSince1970: Double(parsed.whole) + parsed.fraction)
        }
        let styles: [Date.ISO8601FormatStyle] = [
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted),
            .iso8601,
        ]
        for style in styles {
            if let date = try? style.parse(text) { return date }
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)` read strictly (every
    /// field in range, the day in its month): whole seconds since 1970, the
    /// fraction, and its whole milliseconds; nil for any other text.
    static func instant(_ text: UnsafeBufferPointer<UInt8>) -> (whole: Int, fraction: Double, millis: Int)? {
        var position = 0
        func number(_ count: Int) -> Int? {
            guard position + count <= text.count else { return nil }
            var value = 0
            for _ in 0..<count {
                let digit = Int(text[position]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
                position += 1
            }
            return value
        }
        func expect(_ options: StaticString) -> Bool {
            guard position < text.count else { return false }
            let found = options.withUTF8Buffer { $0.contains(text[position]) }
            if found { position += 1 }
            return found
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2), (1...12).contains(month), (1...daysIn(month, of: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        var millis = 0
        if position < text.count, text[position] == UInt8(ascii: ".") {
            position += 1
            var value = 0
            var scale = 1
            var digits = 0
            while position < text.count, (48...57).contains(text[position]), digits < 9 {
                let digit = Int(text[position]) - 48
                value = value * 10 + digit
                scale *= 10
                if digits < 3 { millis = millis * 10 + digit }
                digits += 1
                position += 1
            }
            guard digits > 0 else { return nil }
            // One correctly rounded division: the double nearest the decimal.
            fraction = Double(value) / Double(scale)
            for _ in Swift.min(digits, 3)..<3 { millis *= 10 }
        }
        var offset = 0
        if expect("Zz") {
        } else if position < text.count, text[position] == UInt8(ascii: "+") || text[position] == UInt8(ascii: "-") {
            let sign = text[position] == UInt8(ascii: "-") ? -1 : 1
            position += 1
            guard let hours = number(2), hours < 24 else { return nil }
            _ = expect(":")
            guard let minutes = number(2), minutes < 60 else { return nil }
            offset = sign * (hours * 3_600 + minutes * 60)
        } else {
            return nil
        }
        guard position == text.count else { return nil }
        let days = Self.days(year: year, month: month, day: day)
        return (days * 86_400 + hour * 3_600 + minute * 60 + second - offset, fraction, millis)
    }

    /// Days after 1970-01-01 of a proleptic Gregorian date (the inverse of
    /// ``civil(days:)``).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The days of `month` in `year` (proleptic Gregorian).
    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
