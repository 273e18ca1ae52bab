import CLibPQ
import Dispatch
import Synchronization

/// One connection to a PostgreSQL server through libpq, PostgreSQL's own
/// client library, for the storage and ``PostgresSession``.
///
/// libpq is blocking and allows one thread in a connection at a time, so
/// every call on the connection runs on the client's serial queue: a
/// request is a closure that ``perform(limit:_:)`` runs there while the
/// caller awaits. The closure sends and waits with the socket in
/// non-blocking mode, polling in short slices, so that it sees its time
/// limit pass and its caller's cancellation and gives the connection up
/// (closes it) instead of waiting on a server that stopped answering.
///
/// Invariant: `connection`, `deadline`, `cancellation` and `prepared` are
/// touched only on `queue` (and in `deinit`, when nothing else holds the
/// client). Once a request has failed in a way that may leave the
/// protocol mid-message (a time limit, a cancellation, a lost socket) the
/// connection is closed and `isLost` is true for good.
final class PostgresClient: @unchecked Sendable {
    /// `host:port`, for messages.
    let server: String
    let queue = DispatchQueue(label: "strata.postgres.connection")
    var connection: OpaquePointer?
    /// When the request running now must have its answer; nil for no limit.
    var deadline: ContinuousClock.Instant?
    /// The running request's cancellation.
    var cancellation: Cancellation?
    /// Names of the statements prepared on this connection.
    var prepared: Set<String> = []
    private let lostFlag = Atomic<Bool>(false)
    private let closing = Atomic<Bool>(false)

    private init(server: String) {
        self.server = server
    }

    deinit {
        if let connection { PQfinish(connection) }
    }

    /// Whether the connection failed or was given up: every later request
    /// fails; make a new client.
    var isLost: Bool { lostFlag.load(ordering: .acquiring) }

    /// A connected client, with synchronous commit on for its session.
    /// - Throws: ``ClientFailure``: refused (a bad login, no database),
    ///   lost (no server there), expired (no answer within `limit`), or
    ///   cancelled.
    static func open(_ settings: PostgresSettings, limit: Duration) async throws -> PostgresClient {
        let deadline = limit > .zero ? ContinuousClock.now.advanced(by: limit) : nil
        let addresses = try await addresses(of: settings.host, deadline: deadline)
        let client = PostgresClient(server: settings.server)
        try await client.perform(until: deadline) { client in
            try client.connect(settings, addresses: addresses)
            // Every commit on this session waits for the server's log to be
            // on disk, whatever the server's default.
            _ = try client.execute("SET synchronous_commit = on")
        }
        return client
    }

    /// Runs `request` on the connection's queue, with `limit` for all of
    /// it from now, waiting for the queue included (zero or less: none),
    /// and returns its outcome.
    ///
    /// Cancelling the calling task answers at once with
    /// ``ClientFailure/cancelled`` while the request waits for the queue
    /// (it then never runs), or within a poll slice once it runs (the
    /// connection closed if anything was sent). ``close()`` also ends a
    /// running request within a poll slice.
    func perform<R: Sendable>(
        limit: Duration,
        _ request: @escaping @Sendable (PostgresClient) throws -> R
    ) async throws -> R {
        try await perform(until: limit > .zero ? ContinuousClock.now.advanced(by: limit) : nil, request)
    }

    /// ``perform(limit:_:)`` with the time limit as an instant (nil: none).
    func perform<R: Sendable>(
        until deadline: ContinuousClock.Instant?,
        _ request: @escaping @Sendable (PostgresClient) throws -> R
    ) async throws -> R {
        let pending = PendingRequest<R>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard pending.wait(continuation) else { return }
                queue.async {
                    guard pending.start() else { return }
                    self.deadline = deadline
                    self.cancellation = pending.cancellation
                    let outcome = Result {
                        try self.checkIdleConnection()
                        return try request(self)
                    }
                    self.deadline = nil
                    self.cancellation = nil
                    pending.finish(outcome)
                }
            }
        } onCancel: {
            pending.cancel()
        }
    }

    /// Closes the connection: at once when no request runs, else as soon
    /// as the running one sees it (within a poll slice; it fails with
    /// ``ClientFailure/closed``, as every later one does).
    func close() async {
        closing.store(true, ordering: .releasing)
        await withCheckedContinuation { continuation in
            queue.async {
                self.abandon()
                continuation.resume()
            }
        }
    }

    /// Whether ``close()`` was called.
    var isClosing: Bool { closing.load(ordering: .acquiring) }

    /// Closes the connection at once (on the queue): after a failure that
    /// may have left it mid-message, or at ``close()``.
    func abandon() {
        lostFlag.store(true, ordering: .releasing)
        prepared = []
        if let connection {
            PQfinish(connection)
            self.connection = nil
        }
    }

    /// `body` inside `beginning` (BEGIN, or BEGIN with an isolation level)
    /// and COMMIT; a failure rolls back (when the connection is still
    /// there to be told) and is rethrown.
    func transaction<R>(beginning: String = "BEGIN", _ body: () throws -> R) throws -> R {
        _ = try execute(beginning)
        do {
            let outcome = try body()
            _ = try execute("COMMIT")
            return outcome
        } catch {
            if !isLost { _ = try? execute("ROLLBACK") }
            throw error
        }
    }
}

/// A request's cancellation, set from any thread, read by the request.
final class Cancellation: Sendable {
    private let flag = Atomic<Bool>(false)
    var isCancelled: Bool { flag.load(ordering: .acquiring) }
    func cancel() { flag.store(true, ordering: .releasing) }
}

/// A request on its way through ``PostgresClient/perform(limit:_:)`` (or
/// a host name's lookup): its caller's continuation, resumed exactly once,
/// by whichever comes first of its outcome and a cancellation before it
/// started.
///
/// Invariant: `continuation` is resumed once (a second `finish` does
/// nothing); a request cancelled before `start()` never runs.
final class PendingRequest<R: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<R, any Error>?
        var started = false
        var cancelled = false
    }
    private let state = Mutex(State())
    let cancellation = Cancellation()

    /// Keeps the continuation; false (having resumed it) when the caller
    /// was cancelled already.
    func wait(_ continuation: CheckedContinuation<R, any Error>) -> Bool {
        let cancelled = state.withLock { state in
            if !state.cancelled { state.continuation = continuation }
            return state.cancelled
        }
        if cancelled { continuation.resume(throwing: ClientFailure.cancelled) }
        return !cancelled
    }

    /// Whether the request may run (it was not cancelled while queued).
    func start() -> Bool {
        state.withLock { state in
            state.started = !state.cancelled
            return state.started
        }
    }

    func finish(_ outcome: Result<R, any Error>) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: outcome)
    }

    /// Cancels: answers the caller now when the request has not started,
    /// else tells the running request (it answers within a poll slice).
    func cancel() {
        cancellation.cancel()
        let continuation = state.withLock { state -> CheckedContinuation<R, any Error>? in
            state.cancelled = true
            guard !state.started else { return nil }
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(throwing: ClientFailure.cancelled)
    }
}

/// How a request on a ``PostgresClient`` failed, before the storage names
/// it as a ``PostgresStorageError``.
enum ClientFailure: Error, Equatable {
    /// The time limit passed without an answer; the connection is closed.
    case expired
    /// The caller was cancelled; the connection is closed if anything had
    /// been sent.
    case cancelled
    /// The connection turned out closed by the server (a restart, an idle
    /// timeout) before anything of the request was sent: safe to send on a
    /// new one, a write included.
    case lostBeforeSending(String)
    /// The connection failed or was lost (libpq's message).
    case lost(String)
    /// ``PostgresClient/close()`` was called: the request was cut off, or
    /// came after.
    case closed
    /// The server refused the connection (libpq's message), or asked for a
    /// password none was given for (`needsPassword`).
    case connectionRefused(String, needsPassword: Bool)
    /// The server refused a statement.
    case refused(sqlState: String, message: String)
    /// An answer of a shape the request did not expect.
    case malformed(String)
}

extension Duration {
    /// The whole nanoseconds, saturating (a time limit of years is "for ever").
    var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let limit = Int64.max / 1_000_000_000 - 1
        guard seconds < limit else { return .max }
        guard seconds > -limit else { return .min }
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
