import Foundation

#if canImport(Glibc)
import Glibc
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { Glibc.write(fd, bytes, count) }
#elseif canImport(Darwin)
import Darwin
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { Darwin.write(fd, bytes, count) }
#endif

/// Where a command's output goes: standard output, buffered (an export
/// writes megabytes), and standard error for progress and errors. Colours
/// only when standard output is a terminal, `NO_COLOR` is unset and
/// `TERM` is not `dumb`.
final class Console {
    private var buffer: [UInt8] = []
    let colors: Bool
    /// Whether standard error is a terminal (progress bars go there only then).
    let errorIsTerminal: Bool

    init() {
        let environment = ProcessInfo.processInfo.environment
        colors =
            isatty(STDOUT_FILENO) == 1 && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        errorIsTerminal = isatty(STDERR_FILENO) == 1
        buffer.reserveCapacity(Self.chunk)
    }

    deinit { flush() }

    private static let chunk = 1 << 20

    /// Writes `text` and a newline.
    func line(_ text: String = "") {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= Self.chunk { flush() }
    }

    /// Writes bytes as they are.
    func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.chunk { flush() }
    }

    /// Writes a JSON document and a newline.
    func json(_ document: JSON) {
        var writer = JSONWriter()
        writer.write(document)
        write(writer.bytes)
        buffer.append(0x0A)
    }

    /// The first failure to write standard output (a full disk, a closed
    /// file): the command then fails, whatever it computed. A reader that
    /// went away (`strata log | head`) is no failure: output stops.
    nonisolated(unsafe) static var writeFailure: Int32?
    private var closed = false

    func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        send(buffer)
    }

    /// Writes a large block of bytes (an export's chunk) after what is
    /// buffered, without copying it into the buffer.
    func writeLarge(_ bytes: [UInt8]) {
        flush()
        send(bytes)
    }

    /// Whether standard output has gone (its reader closed it, `| head`,
    /// or a write failed): nothing more is written, and a long output can
    /// stop making what no one reads.
    var isClosed: Bool { closed }

    /// Whether any byte went to standard output: a failure's JSON object
    /// is printed only on an output that holds nothing else.
    nonisolated(unsafe) static var hasWritten = false

    private func send(_ bytes: [UInt8]) {
        guard !closed else { return }
        if !bytes.isEmpty { Self.hasWritten = true }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { systemWrite(STDOUT_FILENO, $0.baseAddress! + written, $0.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let code = n < 0 ? errno : EIO
                closed = true
                if code != EPIPE, Self.writeFailure == nil { Self.writeFailure = code }
                return
            }
            written += n
        }
    }

    /// Writes a line to standard error at once.
    func error(_ text: String) {
        flush()
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    // MARK: Styles

    enum Style: String {
        case bold = "1"
        case dim = "2"
        case red = "31"
        case green = "32"
        case yellow = "33"
        case blue = "34"
        case cyan = "36"
    }

    /// `text` in `style` on a terminal; as is otherwise.
    func styled(_ text: String, _ style: Style) -> String {
        colors ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }
}
