import Foundation
import PostgresNIO
import Strata
import Synchronization

/// A ``HistoryStorage`` on a PostgreSQL server: peers on many hosts share
/// one history, ordered by the server's own constraints.
///
/// Tables (made by ``open(store:settings:create:)`` with `create: true`):
///
///     strata_stores    (store text primary key, created timestamptz)
///     strata_log       (store, t bigint, id uuid, payload bytea, checksum bigint, time timestamptz;
///                       primary key (store, t))
///     strata_snapshots (store, basis bigint, chunk int, chunks int, payload bytea, checksum bigint;
///                       primary key (store, basis, chunk))
///
/// An append inserts its transaction at `t` only when the newest stored is
/// `t - 1`, inside one PostgreSQL transaction with synchronous commit; the
/// primary key settles two writers of the same `t` (one inserts, the other
/// gets ``HistoryAppend/taken``). The same transaction sends a `NOTIFY`
/// that ``newTransactions()`` delivers to every listening peer. Payloads
/// are Strata's binary encoding with a CRC32C beside each, checked on read.
///
///     let storage = try await PostgresHistoryStorage.open(
///         store: "library", settings: try PostgresSettings(url: "postgres://app@db.local/music"), create: true)
///     let peer = try await Peer.open(storage)
public actor PostgresHistoryStorage: HistoryStorage {
    /// The store's name on the server.
    public nonisolated let store: String
    /// The server and login.
    public nonisolated let settings: PostgresSettings
    /// The NOTIFY channel of the store (a hash of its name: any name works).
    nonisolated let channel: String

    private var connection: PostgresConnection?
    /// Set by ``close()``: every later call throws.
    var closed = false
    /// Whether a call holds the connection, and who waits for it: one
    /// PostgreSQL transaction at a time on it.
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    var listeners: [UUID: Task<Void, Never>] = [:]
    /// The append statement, prepared on the connection.
    let appendStatements = AppendStatements()
    nonisolated let logger: Logger

    private init(store: String, settings: PostgresSettings) {
        self.store = store
        self.settings = settings
        self.channel = "strata_" + String(CRC32C.checksum(Array(store.utf8)), radix: 16)
        var logger = Logger(label: "strata.postgres")
        logger.logLevel = .error
        self.logger = logger
    }

    /// Connects to the store `store` on the server.
    /// - Parameter create: make the tables and the store when missing.
    /// - Throws: ``PostgresStorageError``: unreachable, bad login, no
    ///   database, no tables or no such store (without `create`).
    public static func open(
        store: String,
        settings: PostgresSettings,
        create: Bool = false
    ) async throws -> PostgresHistoryStorage {
        guard !store.isEmpty else { throw PostgresStorageError.badSettings("a store needs a name") }
        let storage = PostgresHistoryStorage(store: store, settings: settings)
        do {
            try await storage.prepare(create: create)
        } catch {
            await storage.close()
            throw error
        }
        return storage
    }

    deinit {
        // A storage dropped without close(): its connection is closed by a
        // task that keeps it until the server has let it go.
        if let connection {
            Task.detached { try? await connection.close() }
        }
        for listener in listeners.values { listener.cancel() }
    }

    private func prepare(create: Bool) async throws {
        try await withConnection { connection, logger in
            if create {
                try await connection.withTransaction(logger: logger) { connection in
                    // One creator at a time: CREATE TABLE IF NOT EXISTS races.
                    try await connection.query("SELECT pg_advisory_xact_lock(7415263901)", logger: logger)
                    for statement in Self.schema {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        "INSERT INTO strata_stores (store) VALUES (\(self.store)) ON CONFLICT DO NOTHING",
                        logger: logger
                    )
                }
            }
            let rows = try await connection.query(
                "SELECT count(*) FROM strata_stores WHERE store = \(self.store)",
                logger: logger
            )
            var count: Int64 = 0
            for try await (n) in rows.decode(Int64.self) { count = n }
            guard count == 1 else {
                throw PostgresStorageError.noStore(
                    name: self.store,
                    server: self.settings.server
                )
            }
        }
    }

    static let schema = [
        """
        CREATE TABLE IF NOT EXISTS strata_stores (
            store text PRIMARY KEY,
            created timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE IF NOT EXISTS strata_log (
            store text NOT NULL REFERENCES strata_stores (store),
            t bigint NOT NULL CHECK (t >= 1),
            id uuid NOT NULL,
            payload bytea NOT NULL,
            checksum bigint NOT NULL,
            time timestamptz NOT NULL,
            PRIMARY KEY (store, t))
        """,
        """
        CREATE TABLE IF NOT EXISTS strata_snapshots (
            store text NOT NULL REFERENCES strata_stores (store),
            basis bigint NOT NULL,
            chunk integer NOT NULL,
            chunks integer NOT NULL,
            payload bytea NOT NULL,
            checksum bigint NOT NULL,
            PRIMARY KEY (store, basis, chunk))
        """,
    ]

    /// Whether ``close()`` was called. O(1).
    public func isClosed() -> Bool { closed }

    /// Closes the connections and ends every ``newTransactions()`` stream.
    public func close() async {
        closed = true
        for listener in listeners.values { listener.cancel() }
        listeners = [:]
        if let connection {
            try? await connection.close()
            self.connection = nil
        }
    }

    // MARK: The connection

    /// Runs `body` holding the connection (made anew when lost); errors
    /// come out as ``PostgresStorageError``. A failure that may have left
    /// the connection unusable drops it, so the next call reconnects.
    ///
    /// A request that has no answer within ``PostgresSettings/operationTimeout``
    /// (connecting included) is given up: its connection is closed and the
    /// call throws ``PostgresStorageError/unreachable(server:reason:)``. A
    /// write given up may still have been stored; whether it was is for the
    /// caller to find out (a ``Peer`` reads the history to tell).
    ///
    /// - Parameters:
    ///   - reading: `body` only reads, so when the connection it was given
    ///     turns out lost (a server restarted since), it runs once more on
    ///     a new one. A write is never repeated here.
    ///   - requests: how many requests `body` makes: its time limit is
    ///     that many times the operation timeout.
    func withConnection<R: Sendable>(
        reading: Bool = false,
        requests: Int = 1,
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> R
    ) async throws -> R {
        try await onConnection(reading: reading) { connection, logger, limit, abandon in
            try await Deadline.run(limit: limit * max(1, requests), abandon: abandon) {
                try await body(connection, logger)
            }
        }
    }

    /// One request that `send` starts on the connection and returns the
    /// future of, as ``withConnection(reading:requests:_:)`` but without a
    /// task of its own (see ``Deadline/wait(limit:abandon:_:)``): the
    /// commit path.
    func withConnection<R: Sendable>(
        reading: Bool = false,
        sending send: @escaping @Sendable (PostgresConnection, Logger) -> EventLoopFuture<R>
    ) async throws -> R {
        try await onConnection(reading: reading) { connection, logger, limit, abandon in
            try await Deadline.wait(limit: limit, abandon: abandon) { send(connection, logger) }
        }
    }

    /// Runs `request` on the connection (made when there is none), one at
    /// a time, with the time limit and what gives the connection up;
    /// maps its errors (see ``withConnection(reading:requests:_:)``).
    private func onConnection<R: Sendable>(
        reading: Bool,
        _ request: (PostgresConnection, Logger, Duration, @escaping @Sendable () -> Void) async throws -> R
    ) async throws -> R {
        while busy { await withCheckedContinuation { waiters.append($0) } }
        busy = true
        defer {
            busy = false
            if !waiters.isEmpty { waiters.removeFirst().resume() }
        }
        var attemptsLeft = reading ? 2 : 1
        while true {
            guard !closed else { throw PostgresStorageError.closed(store: store) }
            // Given up before anything was sent: the connection is sound.
            try Task.checkCancellation()
            let reused = connection != nil && connection?.isClosed == false
            attemptsLeft -= 1
            do {
                let connection = try await connected()
                return try await request(connection, logger, settings.operationTimeout) {
                    Task { try? await connection.close() }
                }
            } catch is CancellationError {
                // Given up by the caller: the request may be half sent.
                dropConnection()
                throw CancellationError()
            } catch {
                let mapped =
                    error is Deadline.Expired
                    ? PostgresStorageError.unreachable(
                        server: settings.server,
                        reason: "no answer in \(settings.operationTimeout)"
                    )
                    : PostgresStorageError.mapping(error, settings)
                var lost = false
                if case PostgresStorageError.unreachable = mapped {
                    dropConnection()
                    lost = true
                }
                if connection?.isClosed == true { connection = nil }
                // A prepared statement the server no longer knows (a pooler
                // reset, DEALLOCATE ALL) is prepared again next time.
                if case PostgresStorageError.server(let state, _) = mapped, state == "26000" {
                    appendStatements.forget()
                }
                if lost, reused, attemptsLeft > 0 { continue }
                throw mapped
            }
        }
    }

    private func connected() async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        let made = try await Self.connect(settings, logger: logger)
        connection = made
        return made
    }

    private func dropConnection() {
        let old = connection
        connection = nil
        appendStatements.forget()
        Task { try? await old?.close() }
    }

    static let connectionIDs = Mutex(0)

    static func connect(_ settings: PostgresSettings, logger: Logger) async throws -> PostgresConnection {
        let id = connectionIDs.withLock { id in
            id += 1
            return id
        }
        let configuration = try settings.configuration()
        do {
            // A server that accepts and then never answers is given up on;
            // a connection made after that is closed.
            let late = LateConnection()
            return try await Deadline.run(
                limit: settings.operationTimeout,
                abandon: { late.abandon() },
                {
                    let connection = try await PostgresConnection.connect(
                        configuration: configuration,
                        id: id,
                        logger: logger
                    )
                    late.made(connection)
                    // Every commit on this session waits for the server's
                    // log to be on disk, whatever the server's default.
                    try await connection.query("SET synchronous_commit = on", logger: logger)
                    return connection
                }
            )
        } catch is Deadline.Expired {
            throw PostgresStorageError.unreachable(
                server: settings.server,
                reason: "no answer in \(settings.operationTimeout)"
            )
        } catch {
            throw PostgresStorageError.mapping(error, settings)
        }
    }
}

/// A connection still being made when its caller gave up on it: whichever
/// of the two comes second closes it.
private final class LateConnection: Sendable {
    private let state = Mutex<(connection: PostgresConnection?, abandoned: Bool)>((nil, false))

    func made(_ connection: PostgresConnection) {
        let abandoned = state.withLock {
            $0.connection = connection
            return $0.abandoned
        }
        if abandoned { Task { try? await connection.close() } }
    }

    func abandon() {
        let connection = state.withLock {
            $0.abandoned = true
            return $0.connection
        }
        if let connection { Task { try? await connection.close() } }
    }
}
