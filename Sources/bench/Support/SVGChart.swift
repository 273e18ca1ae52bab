import Foundation

/// A scatter chart written as a standalone SVG file: linear x axis,
/// logarithmic y axis (latencies spread over orders of magnitude), one
/// colour per series, a legend.
struct SVGChart {
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var series: [Series] = []

    private let width = 860.0
    private let height = 500.0
    private let left = 80.0
    private let right = 30.0
    private let top = 50.0
    private let bottom = 60.0

    init(title: String, xLabel: String, yLabel: String) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
    }

    func svg() -> String {
        let points = series.flatMap(\.points).filter { $0.y > 0 }
        let xMax = max(points.map(\.x).max() ?? 1, 1)
        let yLow = floor(log10(points.map(\.y).min() ?? 0.001))
        let yHigh = max(ceil(log10(points.map(\.y).max() ?? 1)), yLow + 1)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        func px(_ x: Double) -> Double { left + x / xMax * plotWidth }
        func py(_ y: Double) -> Double { top + (yHigh - log10(y)) / (yHigh - yLow) * plotHeight }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        }

        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(number(width / 2))" y="24" text-anchor="middle" font-size="15">\(escaped(title))</text>

            """
        // Grid and y ticks: one per decade.
        var decade = yLow
        while decade <= yHigh {
            let y = py(pow(10, decade))
            let label = Report.format(pow(10, decade))
            out += "<line x1=\"\(number(left))\" y1=\"\(number(y))\" x2=\"\(number(width - right))\" "
            out += "y2=\"\(number(y))\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(number(left - 6))\" y=\"\(number(y + 4))\" text-anchor=\"end\">\(label)</text>\n"
            decade += 1
        }
        // x ticks: five even steps.
        for step in 0...5 {
            let value = xMax * Double(step) / 5
            let x = px(value)
            out += "<line x1=\"\(number(x))\" y1=\"\(number(height - bottom))\" x2=\"\(number(x))\" "
            out += "y2=\"\(number(height - bottom + 5))\" stroke=\"#333\"/>\n"
            out += "<text x=\"\(number(x))\" y=\"\(number(height - bottom + 18))\" text-anchor=\"middle\">"
            out += "\(Report.format(value.rounded()))</text>\n"
        }
        out += "<rect x=\"\(number(left))\" y=\"\(number(top))\" width=\"\(number(plotWidth))\" "
        out += "height=\"\(number(plotHeight))\" fill=\"none\" stroke=\"#333\"/>\n"
        out += "<text x=\"\(number(left + plotWidth / 2))\" y=\"\(number(height - 18))\" text-anchor=\"middle\">"
        out += "\(escaped(xLabel))</text>\n"
        out += "<text transform=\"translate(18 \(number(top + plotHeight / 2))) rotate(-90)\" "
        out += "text-anchor=\"middle\">\(escaped(yLabel))</text>\n"
        for (index, one) in series.enumerated() {
            for point in one.points where point.y > 0 {
                out += "<circle cx=\"\(number(px(point.x)))\" cy=\"\(number(py(point.y)))\" r=\"2.5\" "
                out += "fill=\"\(one.color)\" fill-opacity=\"0.6\"/>\n"
            }
            let y = top + 16 + Double(index) * 18
            out += "<circle cx=\"\(number(left + 14))\" cy=\"\(number(y - 4))\" r=\"5\" fill=\"\(one.color)\"/>\n"
            out += "<text x=\"\(number(left + 26))\" y=\"\(number(y))\">\(escaped(one.name))</text>\n"
        }
        out += "</svg>\n"
        return out
    }

    func write(to url: URL) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try Data(svg().utf8).write(to: url)
    }
}
