import Foundation
import Strata

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

    /// The connection, made when first needed and again after it is lost.
    private var client: PostgresClient?
    /// Set by ``close()``: every later call throws.
    var closed = false
    /// Whether a call holds the connection, and who waits for it: one
    /// PostgreSQL transaction at a time on it.
    private var busy = false
    /// Resumed with true when the connection is handed to them, false when
    /// their caller was cancelled while waiting.
    private var waiters: [(id: UUID, continuation: CheckedContinuation<Bool, Never>)] = []
    var listeners: [UUID: Task<Void, Never>] = [:]

    private init(store: String, settings: PostgresSettings) {
        self.store = store
        self.settings = settings
        self.channel = "strata_" + String(CRC32C.checksum(Array(store.utf8)), radix: 16)
    }

    /// Connects to the store `store` on the server.
    /// - Parameter create: make the tables and the store when missing.
    /// - Throws: ``PostgresStorageError``: unreachable, bad login, no
    ///   database, no tables or no such store (without `create`); bad
    ///   settings for a port out of range, or for a database where a table
    ///   of a Strata table's name is another application's (nothing is
    ///   created beside it).
    public static func open(
        store: String,
        settings: PostgresSettings,
        create: Bool = false
    ) async throws -> PostgresHistoryStorage {
        guard !store.isEmpty else { throw PostgresStorageError.badSettings("a store needs a name") }
        // PostgreSQL text cannot hold one: the server would refuse every statement naming the store.
        guard !store.utf8.contains(0) else {
            throw PostgresStorageError.badSettings("a store name cannot hold a NUL character")
        }
        try settings.checkPort()
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
        // A storage dropped without close(): the client closes its
        // connection when it goes.
        for listener in listeners.values { listener.cancel() }
    }

    private func prepare(create: Bool) async throws {
        let store = self.store
        let found = try await withConnection { client in
            // Another application's table of one of these names is not
            // used, nor are the others made beside it.
            try Self.checkTableShapes(client)
            // Tables made already (by an administrator, say) are not made
            // again: CREATE TABLE IF NOT EXISTS needs the right to create
            // in the schema, which an application's role may lack, and a
            // new store in them is one row.
            let tablesExist =
                try client.execute(
                    """
                    SELECT to_regclass('strata_stores') IS NOT NULL AND to_regclass('strata_log') IS NOT NULL
                        AND to_regclass('strata_snapshots') IS NOT NULL
                    """
                ).scalar == .bool(true)
            func storeExists() throws -> Bool {
                try client.execute("SELECT count(*) FROM strata_stores WHERE store = $1", [.text(store)])
                    .scalar?.int64 == 1
            }
            if create && tablesExist {
                // Only when missing: a role that may only read opens too.
                if try !storeExists() {
                    _ = try client.execute(
                        "INSERT INTO strata_stores (store) VALUES ($1) ON CONFLICT DO NOTHING",
                        [.text(store)]
                    )
                }
            } else if create {
                try client.transaction {
                    // One creator at a time: CREATE TABLE IF NOT EXISTS races.
                    _ = try client.execute("SELECT pg_advisory_xact_lock(7415263901)")
                    for statement in Self.schema { _ = try client.execute(statement) }
                    _ = try client.execute(
                        "INSERT INTO strata_stores (store) VALUES ($1) ON CONFLICT DO NOTHING",
                        [.text(store)]
                    )
                }
            }
            return try storeExists()
        }
        guard found else {
            throw PostgresStorageError.noStore(name: store, server: settings.server)
        }
    }

    /// The columns each table has (the schema's), which a table of its
    /// name must have to be taken for it.
    static let columns: [String: [String]] = [
        "strata_stores": ["store", "created"],
        "strata_log": ["store", "t", "id", "payload", "checksum", "time"],
        "strata_snapshots": ["store", "basis", "chunk", "chunks", "payload", "checksum"],
    ]

    /// Refuses a database where a table of one of the schema's names (as
    /// the search path finds it) lacks one of its columns: another
    /// application's. - Throws: ``PostgresStorageError/badSettings(_:)``.
    static func checkTableShapes(_ client: PostgresClient) throws {
        let names = columns.keys.sorted()
        let tables = names.map { "to_regclass('\($0)')" }.joined(separator: ", ")
        let rows = try client.execute(
            "SELECT c.relname::text, a.attname::text FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
                + "WHERE c.oid = ANY (ARRAY[\(tables)]::oid[]) AND a.attnum > 0 AND NOT a.attisdropped"
        ).rows
        var found: [String: Set<String>] = [:]
        for row in rows {
            guard row.count == 2, let table = row[0]?.text, let column = row[1]?.text else { continue }
            found[table, default: []].insert(column)
        }
        for name in names {
            guard let present = found[name], let missing = columns[name]?.first(where: { !present.contains($0) })
            else { continue }
            throw PostgresStorageError.badSettings(
                "the database holds a table \(name) that is not Strata's (it has no column \(missing)): "
                    + "name another database, or a schema first in the search path"
            )
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
    public func isClosed() async -> Bool { closed }

    /// Closes the connections and ends every ``newTransactions()`` stream.
    public func close() async {
        closed = true
        let ending = Array(listeners.values)
        listeners = [:]
        for listener in ending { listener.cancel() }
        if let client {
            self.client = nil
            await client.close()
        }
        // Their connections closed too (within a poll slice) before this
        // returns: nothing of the storage is left on the server.
        for listener in ending { await listener.value }
    }

    // MARK: The connection

    /// Runs `body` on the connection (made anew when lost), one call at a
    /// time; errors come out as ``PostgresStorageError``. A failure that
    /// may have left the connection unusable drops it, so the next call
    /// reconnects.
    ///
    /// A request that has no answer within ``PostgresSettings/operationTimeout``
    /// (connecting included) is given up: its connection is closed and the
    /// call throws ``PostgresStorageError/unreachable(server:reason:)``. A
    /// write given up may still have been stored; whether it was is for the
    /// caller to find out (a ``Peer`` reads the history to tell). A caller
    /// cancelled while its request is out gets `CancellationError` within
    /// a few milliseconds, and the connection is closed; one cancelled
    /// before sends nothing.
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
        _ body: @escaping @Sendable (PostgresClient) throws -> R
    ) async throws -> R {
        try await waitForConnection()
        busy = true
        defer {
            busy = false
            if !waiters.isEmpty { waiters.removeFirst().continuation.resume(returning: true) }
        }
        var attemptsLeft = reading ? 2 : 1
        // A connection the server closed while it was idle is found before
        // anything is sent: a write goes on a new one too, once.
        var unsentAttemptsLeft = 1
        while true {
            guard !closed else { throw PostgresStorageError.closed(store: store) }
            // Given up before anything was sent: the connection is sound.
            try Task.checkCancellation()
            let reused = client.map { !$0.isLost } ?? false
            attemptsLeft -= 1
            do {
                let client = try await connected()
                return try await client.perform(limit: settings.operationTimeout * max(1, requests), body)
            } catch {
                if client?.isLost == true { client = nil }
                switch error {
                case ClientFailure.lostBeforeSending where unsentAttemptsLeft > 0:
                    unsentAttemptsLeft -= 1
                    attemptsLeft += 1
                    continue
                // Lost under a read (not timed out: that would double the
                // limit): once more, on a new connection.
                case ClientFailure.lost where reused && attemptsLeft > 0:
                    continue
                // Closed under the request (or as it began): it may have
                // been carried out.
                case ClientFailure.closed:
                    throw PostgresStorageError.cutOff(store: store)
                default:
                    throw PostgresStorageError.mapping(error, settings)
                }
            }
        }
    }

    /// Returns when no other call holds the connection (at once when none
    /// does); throws `CancellationError` at once when the caller is
    /// cancelled while it waits.
    private func waitForConnection() async throws {
        while busy {
            let id = UUID()
            let handed = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    if Task.isCancelled {
                        continuation.resume(returning: false)
                    } else {
                        waiters.append((id, continuation))
                    }
                }
            } onCancel: {
                Task { await self.cancelWaiter(id) }
            }
            // Not handed the connection: nothing to pass on.
            guard handed else { throw CancellationError() }
        }
    }

    private func cancelWaiter(_ id: UUID) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: false)
    }

    private func connected() async throws -> PostgresClient {
        if let client, !client.isLost { return client }
        let made = try await PostgresClient.open(settings, limit: settings.operationTimeout)
        // Closed while connecting: the new connection goes with it.
        guard !closed else {
            await made.close()
            throw PostgresStorageError.closed(store: store)
        }
        client = made
        return made
    }
}
