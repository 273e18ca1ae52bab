/// A session of its own on a PostgreSQL server, beside the storages': for
/// a tool, a test or a benchmark that runs its own statements (holds a
/// lock, looks at the tables, measures the server).
///
///     let session = try await PostgresSession.connect(settings)
///     try await session.execute("DELETE FROM strata_stores WHERE store = $1", .text("old"))
///     let rows = try await session.execute("SELECT count(*) FROM strata_log")
///     await session.close()
///
/// One statement at a time; each is given ``PostgresSettings/operationTimeout``.
/// A statement given up (its time passed, its task cancelled) closes the
/// session: every later one throws.
public final class PostgresSession: Sendable {
    /// The server and login.
    public let settings: PostgresSettings
    let client: PostgresClient

    private init(settings: PostgresSettings, client: PostgresClient) {
        self.settings = settings
        self.client = client
    }

    /// A new session with `settings`, with synchronous commit on.
    /// - Throws: ``PostgresStorageError``: unreachable, bad login, no
    ///   database.
    public static func connect(_ settings: PostgresSettings) async throws -> PostgresSession {
        try settings.checkPort()
        do {
            let client = try await PostgresClient.open(settings, limit: settings.operationTimeout)
            return PostgresSession(settings: settings, client: client)
        } catch {
            throw PostgresStorageError.mapping(error, settings)
        }
    }

    /// Runs `sql`, its parameters `$1`, `$2`, … taken from `parameters`,
    /// and returns its rows. O(rows returned).
    /// - Throws: ``PostgresStorageError``: the server's refusal (with its
    ///   SQLSTATE), unreachable, the session closed; `CancellationError`.
    @discardableResult
    public func execute(_ sql: String, _ parameters: PostgresValue...) async throws -> PostgresRows {
        try await execute(sql, parameters: parameters)
    }

    /// Runs `sql` with the parameters `parameters` and returns its rows.
    /// O(rows returned).
    /// - Throws: as ``execute(_:_:)``.
    @discardableResult
    public func execute(_ sql: String, parameters: [PostgresValue]) async throws -> PostgresRows {
        do {
            return try await client.perform(limit: settings.operationTimeout) { try $0.execute(sql, parameters) }
        } catch {
            throw PostgresStorageError.mapping(error, settings)
        }
    }

    /// Whether the session was closed or lost. O(1).
    public var isClosed: Bool { client.isLost }

    /// Closes the session; a statement running now is cut off (it throws
    /// ``PostgresStorageError/sessionClosed(server:)``), as is every later one.
    public func close() async {
        await client.close()
    }
}
