import Synchronization

/// A request to the server raced against a time limit, without waiting for
/// the loser.
///
/// A task group would not do: it waits for every child before it returns,
/// so a request whose connection never fails it (a server that stopped
/// answering, a channel closed under a query whose promise is never
/// completed) would hold its caller for ever. Here the request runs in a
/// task of its own and the caller resumes at the first of its answer, the
/// time limit or its own cancellation; a request left behind has its task
/// cancelled and its connection closed by `abandon`. The server may still
/// finish what it was sent (a write may land after the caller gave up),
/// which is why a ``Peer`` settles a failed append by reading the history.
enum Deadline {
    /// What `run` throws when the time is up.
    struct Expired: Error {}

    /// The outcome of `operation`, or ``Expired`` once `limit` has passed
    /// (after calling `abandon`), or `CancellationError` when the calling
    /// task is cancelled first (also after `abandon`; not started at all
    /// when it is cancelled already). A `limit` of zero or less is none.
    static func run<R: Sendable>(
        limit: Duration,
        abandon: @escaping @Sendable () -> Void,
        _ operation: @escaping @Sendable () async throws -> R
    ) async throws -> R {
        try Task.checkCancellation()
        guard limit > .zero else { return try await operation() }
        let race = Race<R>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.start(continuation)
                let work = Task {
                    let outcome: Result<R, any Error>
                    do { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
                    race.finish(outcome)
                }
                let timer = Task {
                    // Cancelled when the work ends first.
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    if race.finish(.failure(Expired())) {
                        work.cancel()
                        abandon()
                    }
                }
                race.attach(work: work, timer: timer)
            }
        } onCancel: {
            if race.finish(.failure(CancellationError())) { abandon() }
        }
    }

    /// The continuation, resumed once by whichever side finishes first.
    ///
    /// Invariant: `continuation` is resumed exactly once; the tasks are
    /// cancelled when it is (a task attached after that is cancelled as it
    /// is attached).
    final class Race<R: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<R, any Error>?
            var outcome: Result<R, any Error>?
            var tasks: [Task<Void, Never>] = []
            var finished = false
        }

        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<R, any Error>) {
            let early: Result<R, any Error>? = state.withLock { state in
                guard let outcome = state.outcome else {
                    state.continuation = continuation
                    return nil
                }
                return outcome
            }
            // Cancelled before the continuation existed.
            if let early { continuation.resume(with: early) }
        }

        /// Resumes the caller with `outcome` unless another outcome came
        /// first; true when this one was taken.
        @discardableResult
        func finish(_ outcome: Result<R, any Error>) -> Bool {
            let (taken, continuation, tasks) = state.withLock {
                state -> (Bool, CheckedContinuation<R, any Error>?, [Task<Void, Never>]) in
                guard !state.finished else { return (false, nil, []) }
                state.finished = true
                let continuation = state.continuation
                state.continuation = nil
                if continuation == nil { state.outcome = outcome }
                let tasks = state.tasks
                state.tasks = []
                return (true, continuation, tasks)
            }
            continuation?.resume(with: outcome)
            for task in tasks { task.cancel() }
            return taken
        }

        func attach(work: Task<Void, Never>, timer: Task<Void, Never>) {
            let finished = state.withLock { state in
                if !state.finished { state.tasks = [work, timer] }
                return state.finished
            }
            // An outcome is in: neither task has a use any more.
            if finished {
                work.cancel()
                timer.cancel()
            }
        }
    }
}
