import Foundation

/// Dates as the commands write them: ISO 8601 in UTC, milliseconds.
package enum JSONDates {
    /// Seconds since 1970 of 1583-01-01 and 10000-01-01: ISO 8601 with
    /// four-digit years in the Gregorian calendar every reader agrees on.
    private static let writable: Range<Int> = -12_212_553_600..<253_402_300_800

    /// 2001-01-01 (where `Date` counts from) in seconds since 1970.
    private static let secondsFrom1970To2001 = 978_307_200

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
        withText(date.timeIntervalSinceReferenceDate) { text in
            guard let text else { return false }
            prefix.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: text)
            return true
        }
    }

    /// The whole seconds since 1970 and the millisecond of the text that
    /// says the date `seconds` after 2001: the latest millisecond whose text
    /// ``parse(_:)`` reads as a date no later than `seconds` (so `log
    /// --since` with a printed time keeps that transaction), computed with
    /// the arithmetic `parse` uses, so that a text read and written again
    /// is the same text. Computed from the seconds since 2001 that `Date`
    /// stores: through seconds since 1970 (a second rounding) the text of
    /// about half of all millisecond dates drifted a millisecond down.
    /// nil for a number no four-digit year can say.
    private static func split(_ seconds: Double) -> (whole: Int, millis: Int)? {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return nil }
        var whole = Int(seconds.rounded(.down))
        // Exact: a double minus its floor.
        var millis = Int(((seconds - Double(whole)) * 1000).rounded(.down))
        func read(_ millis: Int) -> Double { Double(whole) + Double(millis) / 1000 }
        while millis > 0, read(millis) > seconds { millis -= 1 }
        while millis < 999, read(millis + 1) <= seconds { millis += 1 }
        if millis >= 1000 {
            whole += 1
            millis -= 1000
        }
        return (whole + secondsFrom1970To2001, millis)
    }

    /// The millisecond text of earlier builds, computed through seconds
    /// since 1970 (see ``split(_:)``): the `$date` of files they exported,
    /// still accepted beside its `$seconds`.
    private static func earlierSplit(_ seconds: Double) -> (whole: Int, millis: Int)? {
        let since1970 = seconds + Double(secondsFrom1970To2001)
        guard since1970.isFinite, abs(since1970) < 1e12 else { return nil }
        var whole = Int(since1970.rounded(.down))
        var millis = Int(((since1970 - Double(whole)) * 1000).rounded(.down))
        if millis >= 1000 {
            whole += 1
            millis -= 1000
        }
        return (whole, millis)
    }

    /// Calls `body` with the 24 bytes ``iso8601(_:)`` writes for
    /// the date `seconds` after 2001, or nil; allocates nothing (an export
    /// writes, and an import checks, a date per record).
    private static func withText<R>(_ seconds: Double, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let (whole, millis) = split(seconds), writable.contains(whole) else { return body(nil) }
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
    package static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
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
    /// beside `$seconds` must: the millisecond ``iso8601(_:)`` writes for
    /// it (or earlier builds wrote), in any form ``parse(_:)`` reads (an
    /// offset, fewer or more fraction digits); nil when `text` is no such
    /// date. A hand-edited
    /// `$date` that the seconds would silently override is refused this
    /// way. O(text length); allocates nothing.
    package static func text(_ text: UnsafeBufferPointer<UInt8>, agreesWith seconds: Double) -> Bool? {
        guard let parsed = instant(text) else { return nil }
        for expected in [split(seconds), earlierSplit(seconds)] {
            if let expected, parsed.whole == expected.whole, parsed.millis == expected.millis { return true }
        }
        return false
    }

    /// ``text(_:agreesWith:)`` for a string.
    package static func text(_ text: String, agreesWith seconds: Double) -> Bool? {
        var text = text
        return text.withUTF8 { Self.text($0, agreesWith: seconds) }
    }

    /// Reads `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`, what
    /// ``iso8601(_:)`` writes and the same with any number of fraction
    /// digits or an offset; nil for anything else, including a field out
    /// of range (`T24:00:00`, February 30th: never moved to a valid date).
    /// Dates are proleptic Gregorian, as ISO 8601 has them (also before
    /// 1582, where Foundation's readers switch to the Julian calendar).
    /// The result is the double nearest the time, up to nine fraction
    /// digits (a nanosecond).
    package static func parse(_ text: String) -> Date? {
        var text = text
        guard let parsed = text.withUTF8({ instant($0) }) else { return nil }
        return Date(timeIntervalSinceReferenceDate: Double(parsed.whole - secondsFrom1970To2001) + parsed.fraction)
    }

    /// A date given on the command line: what ``parse(_:)`` reads, the
    /// same without a zone (UTC), with a space for the `T` (as `log`
    /// prints times), or a day alone (`2026-11-24`, its midnight UTC);
    /// nil for anything else.
    package static func commandLine(_ text: String) -> Date? {
        var text = text
        if text.utf8.count == 10 { text += "T00:00:00" }
        let utf8 = Array(text.utf8)
        if utf8.count > 10, utf8[10] == UInt8(ascii: " ") {
            text = String(decoding: utf8[..<10] + [UInt8(ascii: "T")] + utf8[11...], as: UTF8.self)
        }
        return parse(text) ?? parse(text + "Z")
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM|±HH)` read strictly (every
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
            // Every digit is read; the first nine (a nanosecond) count.
            while position < text.count, (48...57).contains(text[position]) {
                let digit = Int(text[position]) - 48
                if digits < 9 {
                    value = value * 10 + digit
                    scale *= 10
                }
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
            // `±HH:MM`, `±HHMM`, or `±HH` alone.
            var minutes = 0
            if position < text.count {
                _ = expect(":")
                guard let found = number(2), found < 60 else { return nil }
                minutes = found
            }
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
