import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A serial queue of jobs run on one thread of its own, at a lower
/// scheduling priority than the writers: the store's upkeep (building
/// compaction blocks, measuring checkpoints) takes what the cores leave,
/// instead of time slices from the thread a commit runs on. Jobs run in
/// order; the thread starts with the first job and lives with the process.
///
/// A dispatch queue's QoS does not lower a thread's priority on Linux, and
/// its worker threads are shared; here the thread is ours, so its nice
/// value (Linux: per thread) can be raised.
final class BackgroundQueue: @unchecked Sendable {
    /// The default nice value of the thread on Linux (0 normal, 19
    /// lowest): it still progresses under load, about a tenth of a busy core.
    static let niceness: Int32 = 10

    private let name: String
    /// Whether the thread runs below the writers (else at their priority).
    private let lowered: Bool
    // `@unchecked Sendable`: `jobs`, `head` and `started` are only touched
    // with `condition` locked.
    private let condition = NSCondition()
    /// The jobs waiting are `jobs[head...]`; those before `head` ran and
    /// were let go of (nil), so that a job's captures are freed when it
    /// has run, and taking the next job costs O(1) however long the queue.
    private var jobs: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var started = false

    /// A queue named `name`; `lowered: false` for short jobs whose results
    /// the writers depend on (measurements a memory limit waits for).
    init(name: String, lowered: Bool = true) {
        self.name = name
        self.lowered = lowered
    }

    /// Jobs queued and not yet started. O(1).
    var backlog: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count - head
    }

    /// Runs `job` after the jobs already queued. O(1).
    func async(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        jobs.append(job)
        if !started {
            started = true
            let thread = Thread { [self] in serve() }
            thread.name = name
            thread.start()
        }
        condition.signal()
    }

    private func serve() {
        if lowered {
            #if os(Linux)
            // On Linux the nice value belongs to the calling thread alone.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
            #else
            _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
            #endif
        }
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head].unsafelyUnwrapped
            jobs[head] = nil
            head += 1
            // The slots of jobs that ran go once they are half the array
            // (`removeFirst()` for each job moved every job behind it: a
            // backlog of thousands cost O(n) a job).
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}
