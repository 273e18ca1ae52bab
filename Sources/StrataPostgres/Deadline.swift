import PostgresNIO
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
                race.attach {
                    work.cancel()
                    timer.cancel()
                }
            }
        } onCancel: {
            if race.finish(.failure(CancellationError())) { abandon() }
        }
    }

    /// The outcome of the request that `send` starts (and returns the
    /// future of), or ``Expired`` once `limit` has passed, or
    /// `CancellationError`, as ``run(limit:abandon:_:)``; nothing is sent
    /// when the calling task is cancelled already. No task is made: the
    /// future's event loop resumes the caller and keeps the timer, so a
    /// request costs two thread switches, as a plain query does.
    static func wait<R: Sendable>(
        limit: Duration,
        abandon: @escaping @Sendable () -> Void,
        _ send: () -> EventLoopFuture<R>
    ) async throws -> R {
        try Task.checkCancellation()
        let race = Race<R>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard race.start(continuation), !Task.isCancelled else { return }
                let future = send()
                if limit > .zero {
                    let timer = future.eventLoop.scheduleTask(in: .nanoseconds(limit.nanoseconds)) {
                        if race.finish(.failure(Expired())) { abandon() }
                    }
                    race.attach { timer.cancel() }
                }
                future.whenComplete { race.finish($0) }
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
            /// What stops the request's helpers (its task, its timer).
            var cancellers: [@Sendable () -> Void] = []
            var finished = false
        }

        private let state = Mutex(State())

        /// Takes the caller's continuation; false when an outcome came
        /// first (the caller was cancelled) and it was resumed with it: no
        /// request should be sent then.
        @discardableResult
        func start(_ continuation: CheckedContinuation<R, any Error>) -> Bool {
            let early: Result<R, any Error>? = state.withLock { state in
                guard let outcome = state.outcome else {
                    state.continuation = continuation
                    return nil
                }
                return outcome
            }
            // Cancelled before the continuation existed.
            guard let early else { return true }
            continuation.resume(with: early)
            return false
        }

        /// Resumes the caller with `outcome` unless another outcome came
        /// first; true when this one was taken.
        @discardableResult
        func finish(_ outcome: Result<R, any Error>) -> Bool {
            let (taken, continuation, cancellers) = state.withLock {
                state -> (Bool, CheckedContinuation<R, any Error>?, [@Sendable () -> Void]) in
                guard !state.finished else { return (false, nil, []) }
                state.finished = true
                let continuation = state.continuation
                state.continuation = nil
                if continuation == nil { state.outcome = outcome }
                let cancellers = state.cancellers
                state.cancellers = []
                return (true, continuation, cancellers)
            }
            continuation?.resume(with: outcome)
            for cancel in cancellers { cancel() }
            return taken
        }

        /// Keeps `cancel` to stop the request's helpers once an outcome
        /// is in (at once when one is in already).
        func attach(_ cancel: @escaping @Sendable () -> Void) {
            let finished = state.withLock { state in
                if !state.finished { state.cancellers.append(cancel) }
                return state.finished
            }
            if finished { cancel() }
        }
    }
}

extension Duration {
    /// The whole nanoseconds, saturating (a time limit of years is "for ever").
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds < Int64.max / 1_000_000_000 else { return .max }
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
