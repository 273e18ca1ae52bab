import Foundation

/// Runs `body`, which blocks its thread (it waits for a child process),
/// on a thread of its own while the caller is suspended. On the
/// cooperative pool (as many jobs at a time as processors), a few such
/// waits at once stop every other test of the process until a child ends.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
