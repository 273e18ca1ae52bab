import Foundation

/// One measured figure, with the baseline it is judged against when there
/// is one. Ratios are value / baseline: they travel between machines where
/// absolute times do not.
struct Figure: Codable, Sendable {
    var scenario: String
    var section: String
    var subject: String
    var value: Double
    var unit: String
    var baselineName: String?
    var baselineValue: Double?
    var note: String?

    var ratio: Double? {
        guard let baselineValue, baselineValue != 0 else { return nil }
        return value / baselineValue
    }
}

/// A same-run ratio that CI holds above a floor or below a ceiling.
struct GateCheck: Codable, Sendable {
    enum Direction: String, Codable, Sendable {
        case atLeast = ">="
        case atMost = "<="
    }

    var name: String
    var measured: Double
    var direction: Direction
    var limit: Double

    var passed: Bool {
        switch direction {
        case .atLeast: return measured >= limit
        case .atMost: return measured <= limit
        }
    }

    /// How far inside (positive) or outside (negative) the limit, as a fraction of it.
    var margin: Double {
        let m = (measured - limit) / limit
        return direction == .atLeast ? m : -m
    }
}

/// Collects figures as scenarios produce them, prints them as tables and
/// writes them as JSON.
final class Report {
    private(set) var figures: [Figure] = []
    private(set) var gates: [GateCheck] = []

    /// Records a gate on a ratio measured in this run.
    func gate(_ name: String, measured: Double, _ direction: GateCheck.Direction, _ limit: Double) {
        gates.append(GateCheck(name: name, measured: measured, direction: direction, limit: limit))
    }

    /// Prints every gate with its margin; returns whether all passed.
    /// `only`: the names to print (all when nil).
    func printGates(only names: Set<String>? = nil) -> Bool {
        var table: [[String]] = [["gate (same-run ratio)", "measured", "limit", "margin", "result"]]
        let shown = gates.filter { names?.contains($0.name) ?? true }
        for gate in shown {
            table.append([
                gate.name,
                Self.format(gate.measured) + "x",
                gate.direction.rawValue + " " + Self.format(gate.limit) + "x",
                String(format: "%+.0f%%", gate.margin * 100),
                gate.passed ? "pass" : "FAIL",
            ])
        }
        print("\n## perf gates")
        print(Self.render(table))
        return shown.allSatisfy(\.passed)
    }

    /// Records `figure` as it is.
    func add(_ figure: Figure) { figures.append(figure) }

    func add(
        _ scenario: String,
        section: String,
        subject: String,
        value: Double,
        unit: String,
        baseline: (name: String, value: Double)? = nil,
        note: String? = nil
    ) {
        figures.append(
            Figure(
                scenario: scenario,
                section: section,
                subject: subject,
                value: value,
                unit: unit,
                baselineName: baseline?.name,
                baselineValue: baseline?.value,
                note: note
            )
        )
    }

    /// Prints the figures of `section` as an aligned table.
    func printSection(_ section: String) {
        let rows = figures.filter { $0.section == section }
        guard !rows.isEmpty else { return }
        var table: [[String]] = [["case", "value", "unit", "baseline", "baseline value", "ratio"]]
        for figure in rows {
            table.append([
                figure.subject,
                Self.format(figure.value),
                figure.unit,
                figure.baselineName ?? "",
                figure.baselineValue.map(Self.format) ?? "",
                figure.ratio.map { Self.format($0) + "x" } ?? "",
            ])
        }
        print("\n## \(section)")
        print(Self.render(table))
        for note in Set(rows.compactMap(\.note)).sorted() {
            print("  note: \(note)")
        }
    }

    /// Writes every figure to `url` as pretty-printed JSON.
    func writeJSON(to url: URL, metadata: [String: String]) throws {
        struct Document: Codable {
            var metadata: [String: String]
            var figures: [Figure]
            var gates: [GateCheck]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(Document(metadata: metadata, figures: figures, gates: gates))
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try data.write(to: url)
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "n/a" }
        let magnitude = abs(value)
        if magnitude >= 100 { return String(format: "%.0f", value).withThousandsSeparators }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 || magnitude == 0 { return String(format: "%.2f", value) }
        if magnitude >= 0.001 { return String(format: "%.3g", value) }
        return String(format: "%.2e", value)
    }

    static func render(_ rows: [[String]]) -> String {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines: [String] = []
        for (index, row) in rows.enumerated() {
            let cells = row.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            lines.append("| " + cells.joined(separator: " | ") + " |")
            if index == 0 {
                lines.append("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate var withThousandsSeparators: String {
        let negative = hasPrefix("-")
        let digits = negative ? String(dropFirst()) : self
        var out = ""
        for (i, c) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (negative ? "-" : "") + String(out.reversed())
    }
}

/// Prints a progress line for long phases, overwritten in place on a terminal.
struct Progress {
    let enabled: Bool

    func update(_ message: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K… \(message)".utf8))
    }

    func done() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
