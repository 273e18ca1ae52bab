import Foundation

/// A serial dispatch queue for work that blocks its thread on the disk (a
/// log sync, a snapshot compressed and written, a peer's cache file): run
/// there, it leaves the cooperative pool's threads to the tasks.
///
/// On Linux the pool runs as many jobs at a time as the machine has
/// processors, and a job blocked in a system call keeps its place: on two
/// cores, two blocked jobs stop every task of the process until one
/// returns (a slow disk, or a file system that waits, froze whole test
/// runs). A serial queue made here targets dispatch's overcommit threads,
/// which start a new thread whenever none is free.
struct BlockingQueue: Sendable {
    private let queue: DispatchQueue

    /// A queue named `label`, its thread at `qos`.
    init(label: String, qos: DispatchQoS) {
        queue = DispatchQueue(label: label, qos: qos)
    }

    /// Runs `body` on the queue, after the work queued before it, while
    /// the caller is suspended. O(1) besides `body`.
    /// - Returns: what `body` returned or threw.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error> {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { try body() }) }
        }
    }
}
