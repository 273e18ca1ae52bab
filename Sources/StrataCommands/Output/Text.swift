import Foundation
import Strata

/// How the commands write things for people.
enum Text {
    /// `1,234,567`.
    static func count(_ number: some BinaryInteger) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (number < 0 ? "-" : "") + result
    }

    /// `1 record`, `2 records`, `1,000 records`.
    static func count(_ number: some BinaryInteger, _ noun: String, plural: String? = nil) -> String {
        "\(count(number)) \(number == 1 ? noun : plural ?? noun + "s")"
    }

    /// `512 B`, `12.3 KB`, `1.5 GB` (powers of 1,000).
    static func bytes(_ count: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1_000, unit < units.count - 1 {
            value /= 1_000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// `2026-11-24 06:00:00` (UTC).
    static func time(_ date: Date) -> String {
        guard let iso = JSONDates.iso8601(date) else { return "\(date.timeIntervalSinceReferenceDate) s after 2001" }
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(8))
    }

    /// A value as the text output shows it: its description (cut short
    /// past `valueLimit` characters, with its size), but a date
    /// that JSON's millisecond text says exactly as JSON writes it. A
    /// finer date keeps its description's digits, so that an edit under a
    /// millisecond does not read as no change.
    static func value(_ value: Value) -> String {
        if case .date(let date) = value, let text = JSONDates.iso8601(date),
            JSONDates.parse(text)?.timeIntervalSinceReferenceDate.bitPattern
                == date.timeIntervalSinceReferenceDate.bitPattern
        {
            return text
        }
        return value._summary(exact: false, limit: valueLimit)
    }

    /// The characters a value takes in text for people at most (about):
    /// a larger one is cut short with its size (`--json` gives it whole).
    static let valueLimit = 1_000

    /// `1.23 s`, `45 ms`.
    static func duration(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds >= 1 ? String(format: "%.2f s", seconds) : String(format: "%.0f ms", seconds * 1_000)
    }

    /// `text` with control characters escaped: a message or a name cannot
    /// move the cursor or recolour the terminal.
    static func safe(_ text: String) -> String {
        // C0 and C1 controls, the bidirectional overrides and isolates
        // (which can make a name read as another), the line and paragraph
        // separators (a line break to a terminal), and the zero-width
        // space, word joiner and byte-order mark, which do not show at all.
        // (The zero-width joiners that emoji and scripts need stay.)
        func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0..<0x20, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
            case 0x2028, 0x2029, 0x200B, 0x2060, 0xFEFF: return true
            default: return false
            }
        }
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                result += scalar == "\n" ? "\\n" : scalar == "\t" ? "\\t" : String(format: "\\u{%02X}", scalar.value)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func significance(_ significance: Significance) -> String {
        switch significance {
        case .minor: return "minor"
        case .normal: return "normal"
        case .significant: return "significant"
        }
    }

    /// Inserts, updates and deletes of a transaction.
    static func changeCounts(_ transaction: Transaction) -> (inserts: Int, updates: Int, deletes: Int) {
        var counts = (inserts: 0, updates: 0, deletes: 0)
        for (_, records) in transaction.changes {
            for (_, change) in records {
                switch change {
                case .insert: counts.inserts += 1
                case .update: counts.updates += 1
                case .delete: counts.deletes += 1
                }
            }
        }
        return counts
    }

    /// `+3 ~1 -2`, or `no changes`.
    static func changeSummary(_ transaction: Transaction) -> String {
        let counts = changeCounts(transaction)
        var parts: [String] = []
        if counts.inserts > 0 { parts.append("+\(count(counts.inserts))") }
        if counts.updates > 0 { parts.append("~\(count(counts.updates))") }
        if counts.deletes > 0 { parts.append("-\(count(counts.deletes))") }
        let indexes = transaction.indexChanges.values.reduce(0) { $0 + $1.count }
        if indexes > 0 { parts.append("\(indexes) index\(indexes == 1 ? "" : "es")") }
        return parts.isEmpty ? "no changes" : parts.joined(separator: " ")
    }

    static func recordID(_ id: RecordID) -> String { safe("\(id)") }

    /// `text` padded with spaces to `width` characters (grapheme clusters,
    /// as the widths are measured).
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
