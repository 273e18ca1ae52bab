/// Rows of cells printed as aligned columns for people: each column as
/// wide as its widest cell (in characters), numbers right-aligned.
struct TextTable {
    enum Alignment { case left, right }

    var headers: [String]
    var alignments: [Alignment]
    var rows: [[String]] = []

    init(_ columns: [(String, Alignment)]) {
        headers = columns.map(\.0)
        alignments = columns.map(\.1)
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    /// The lines, the header first (in bold on a terminal); the last column
    /// is not padded.
    func lines(_ console: Console) -> [String] {
        var widths = headers.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        func render(_ cells: [String]) -> String {
            var parts: [String] = []
            for (column, cell) in cells.enumerated() {
                let padding = String(repeating: " ", count: max(0, widths[column] - cell.count))
                let isLast = column == cells.count - 1
                switch alignments[column] {
                case .right: parts.append(padding + cell)
                case .left: parts.append(isLast ? cell : cell + padding)
                }
            }
            return parts.joined(separator: "  ")
        }
        return [console.styled(render(headers), .bold)] + rows.map(render)
    }

    func print(to console: Console) {
        for line in lines(console) { console.line(line) }
    }
}
