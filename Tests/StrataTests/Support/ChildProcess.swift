#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process whose standard output is a pipe, started with
/// `posix_spawn` rather than Foundation's `Process`: `Process` keeps a weak
/// reference's side table it never frees, which the leak checker of the
/// AddressSanitizer run reports from wherever it happens to be called.
struct ChildProcess {
    /// The child's process ID.
    let pid: pid_t
    private let output: Int32

    struct SpawnError: Error, CustomStringConvertible {
        let path: String
        let code: Int32
        var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
    }

    /// Starts `path` with `arguments` (argv[1...]) and the parent's environment.
    init(path: String, arguments: [String]) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SpawnError(path: path, code: errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, path, &actions, nil, argv, environ)
        close(fds[1])
        guard code == 0 else {
            close(fds[0])
            throw SpawnError(path: path, code: code)
        }
        pid = child
        output = fds[0]
    }

    /// Sends SIGKILL.
    func kill() {
        _ = SignalSending.kill(pid, SIGKILL)
    }

    /// Reads standard output to its end, then reaps the child, on a thread
    /// of its own.
    /// - Returns: the output, and whether a signal ended the child.
    func finish() async throws -> (output: String, killedBySignal: Bool) {
        try await onOwnThread { finishBlocking() }
    }

    /// Sends SIGKILL and reaps the child at once (it dies within moments:
    /// for a `defer`, which cannot await).
    func killAndReap() {
        kill()
        _ = finishBlocking()
    }

    private func finishBlocking() -> (output: String, killedBySignal: Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: buffer[0..<count])
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        close(output)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFSIGNALED, which Swift does not import: the low 7 bits name the
        // signal; 0 is a normal exit and 0x7f a stop.
        let signal = status & 0x7f
        return (String(decoding: bytes, as: UTF8.self), signal != 0 && signal != 0x7f)
    }
}

/// `kill(2)` under a name the struct's own `kill()` does not shadow.
private enum SignalSending {
    static func kill(_ pid: pid_t, _ signal: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.kill(pid, signal)
        #else
        Darwin.kill(pid, signal)
        #endif
    }
}
