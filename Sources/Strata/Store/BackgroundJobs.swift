import Synchronization

/// The jobs one store has handed to the process's shared background
/// threads and not yet seen end: a measurement, until the report it posts
/// back to the store has run. ``Store/close()`` waits for these, so that
/// nothing of a closed store still runs (or holds its value) after close
/// returns, and not for other stores' jobs on the same threads.
final class BackgroundJobs: Sendable {
    private struct State {
        var running = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// A job was handed over. O(1).
    func begin() {
        state.withLock { $0.running += 1 }
    }

    /// A job ended; when it was the last, whoever waits resumes.
    /// O(waiters).
    func end() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once no job runs (at once when none does).
    func settled() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.running > 0 else { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
