import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of file `path`, read with POSIX calls: Foundation's
/// `FileManager.contents(atPath:)` leaks its buffer, which the leak checker
/// of the AddressSanitizer run reports.
func readFile(_ path: String) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { return nil }
        if count == 0 { return bytes }
        bytes += chunk[0..<count]
    }
}

/// Runs the built `strata` binary as a user does: a process, its standard
/// output and error captured, its standard input given.
enum StrataRunner {
    struct Outcome: CustomStringConvertible {
        var status: Int32
        var output: String
        var error: String

        var description: String { "exit \(status)\nstdout:\n\(output)\nstderr:\n\(error)" }

        /// Standard output parsed as JSON.
        func json() throws -> Any {
            try JSONSerialization.jsonObject(with: Data(output.utf8), options: [.fragmentsAllowed])
        }

        /// Standard output parsed as a JSON object.
        func object() throws -> [String: Any] {
            guard let object = try json() as? [String: Any] else { throw RunnerError("not a JSON object: \(output)") }
            return object
        }
    }

    struct RunnerError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The binary, built beside the test bundle.
    static var executable: String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return directory.appendingPathComponent("strata").path
    }

    /// Runs `strata arguments`, with `input` on standard input (none:
    /// /dev/null), waiting for it on a thread of its own.
    static func run(_ arguments: [String], input: String? = nil) async throws -> Outcome {
        try await run(bytes: arguments.map { Array($0.utf8) }, input: input)
    }

    /// Runs `strata` with arguments given as bytes (which need not be UTF-8).
    static func run(bytes arguments: [[UInt8]], input: String? = nil) async throws -> Outcome {
        try await onOwnThread { try runBlocking(arguments, input: input) }
    }

    private static func runBlocking(_ arguments: [[UInt8]], input: String?) throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.path + "/strata-runner-\(UUID().uuidString)"
        let inputPath = scratch + ".in"
        let errorPath = scratch + ".err"
        let outputPath = scratch + ".out"
        _ = FileManager.default.createFile(atPath: inputPath, contents: Data((input ?? "").utf8))
        defer {
            for path in [inputPath, errorPath, outputPath] { try? FileManager.default.removeItem(atPath: path) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input == nil ? "/dev/null" : inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] =
            ([Array(executable.utf8)] + arguments).map { bytes in
                let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
                for (i, byte) in bytes.enumerated() { pointer[i] = CChar(bitPattern: byte) }
                pointer[bytes.count] = 0
                return pointer
            } + [nil]
        defer { for pointer in argv { pointer?.deallocate() } }
        // No colours whatever the test's terminal: output is compared as text.
        let environment = ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1"]) { $1 }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard code == 0 else { throw RunnerError("cannot start \(executable): \(String(cString: strerror(code)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7f
        guard signal == 0 else {
            let shown = arguments.map { String(decoding: $0, as: UTF8.self) }
            throw RunnerError("strata \(shown) died of signal \(signal)")
        }
        let read = { (path: String) in
            String(decoding: readFile(path) ?? [], as: UTF8.self)
        }
        return Outcome(status: (status >> 8) & 0xff, output: read(outputPath), error: read(errorPath))
    }
}
