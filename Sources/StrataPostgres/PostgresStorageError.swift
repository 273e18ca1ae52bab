import Strata

/// Why a ``PostgresHistoryStorage`` could not do what was asked. Each reads
/// as one line naming what to do.
public enum PostgresStorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The settings cannot be used (a malformed URL, a bad port).
    case badSettings(String)
    /// No server answered at that address.
    case unreachable(server: String, reason: String)
    /// The server refused the user's credentials.
    case authenticationFailed(server: String)
    /// The database named in the settings does not exist.
    case noDatabase(server: String)
    /// The server has no Strata tables: no store was ever created there.
    case missingTables(server: String)
    /// No store of this name exists on the server.
    case noStore(name: String, server: String)
    /// A stored transaction or snapshot does not check (its checksum, its
    /// number, its encoding).
    case damaged(store: String, what: String)
    /// A stored transaction or snapshot was written by a newer build, in an
    /// encoding this one does not read (not damage).
    case newerFormat(store: String, what: String)
    /// The server refused a statement for another reason.
    case server(sqlState: String, message: String)
    /// The storage was closed before the call sent anything: nothing it
    /// asked for was done (an append is refused, nothing stored).
    case closed(store: String)
    /// The storage was closed while the call's request was out: whether
    /// the server carried it out is not known (a peer looks for the
    /// transaction before it commits again).
    case cutOff(store: String)
    /// The ``PostgresSession`` was closed (or lost): connect again.
    case sessionClosed(server: String)

    /// One line: what happened and what to do.
    public var description: String {
        switch self {
        case .badSettings(let reason):
            return "PostgreSQL settings: \(reason)"
        case let .unreachable(server, reason):
            return
                "cannot reach PostgreSQL at \(server) (\(reason)): is the server running? check the URL or PGHOST/PGPORT"
        case .authenticationFailed(let server):
            return "PostgreSQL at \(server) refused the login: check the user and password (PGUSER/PGPASSWORD)"
        case .noDatabase(let server):
            return "PostgreSQL at \(server): the database does not exist: create it or name another (PGDATABASE)"
        case .missingTables(let server):
            return "PostgreSQL at \(server) holds no Strata tables: create a store first (open with create: true)"
        case let .noStore(name, server):
            return "PostgreSQL at \(server) holds no store named \(name): check the name or open with create: true"
        case let .damaged(store, what):
            return "store \(store) on PostgreSQL is damaged: \(what)"
        case let .newerFormat(store, what):
            return "store \(store) on PostgreSQL holds \(what): use a newer build of Strata"
        case let .server(sqlState, message):
            return "PostgreSQL refused: \(message) (SQLSTATE \(sqlState))"
        case .closed(let store):
            return "the storage of \(store) is closed: open it again"
        case .cutOff(let store):
            return
                "the storage of \(store) was closed while a request was out: whether the server carried it out is not known"
        case .sessionClosed(let server):
            return "the session with PostgreSQL at \(server) is closed: connect again"
        }
    }

    /// `error` (a request's failure) as a storage error, for `settings`;
    /// a cancellation as `CancellationError`.
    static func mapping(_ error: any Error, _ settings: PostgresSettings) -> any Error {
        guard let failure = error as? ClientFailure else { return error }
        let server = settings.server
        switch failure {
        case .expired:
            return PostgresStorageError.unreachable(server: server, reason: "no answer in \(settings.operationTimeout)")
        case .cancelled:
            return CancellationError()
        case .closed:
            return PostgresStorageError.sessionClosed(server: server)
        case .lost(let reason), .lostBeforeSending(let reason):
            return PostgresStorageError.unreachable(server: server, reason: reason)
        case let .connectionRefused(message, needsPassword):
            // libpq reports a refused login as text only: the server's
            // messages (in English, as the test server's cluster has no
            // locale) name the cause.
            if needsPassword || message.contains("authentication failed")
                || (message.contains("role \"") && message.contains("does not exist"))
            {
                return PostgresStorageError.authenticationFailed(server: server)
            }
            if message.contains("database \"") && message.contains("does not exist") {
                return PostgresStorageError.noDatabase(server: server)
            }
            return PostgresStorageError.unreachable(server: server, reason: message)
        case let .refused(state, message):
            return refusal(state, message, server)
        case .malformed(let what):
            return PostgresStorageError.unreachable(server: server, reason: "an answer out of protocol: \(what)")
        }
    }

    /// The server's refusal with SQLSTATE `state`.
    private static func refusal(_ state: String, _ message: String, _ server: String) -> PostgresStorageError {
        switch state {
        case "28P01", "28000": return .authenticationFailed(server: server)
        case "3D000": return .noDatabase(server: server)
        case "42P01": return .missingTables(server: server)
        default: return .server(sqlState: state, message: message)
        }
    }
}

extension PostgresStorageError {
    /// A decoding `error` of `what` (a transaction, a snapshot) of `store`:
    /// ``newerFormat(store:what:)`` when a newer build wrote it, else
    /// ``damaged(store:what:)``.
    static func undecodable(_ error: any Error, store: String, what: String) -> PostgresStorageError {
        if let newer = (error as? CodecError)?.newerVersion {
            return .newerFormat(
                store: store,
                what: "\(what) in format version \(newer.found) (this build reads up to \(newer.supported))"
            )
        }
        return .damaged(store: store, what: "\(what) does not decode: \(error)")
    }
}

extension PostgresStorageError: HistoryStorageRefusal {
    /// True for the server's refusal of the statement: an append is one
    /// statement in its own transaction, and a refused statement rolls
    /// that transaction back (a connection lost meanwhile is
    /// ``unreachable(server:reason:)``, not a refusal). False for the
    /// conditions that pass, which a peer settles and sends again: a
    /// serialization failure or deadlock (class 40), resources or locks
    /// not available now (53, 55), a cancelled statement or a server
    /// shutting down (57), an I/O error (58), a connection problem (08),
    /// a standby during a failover (25006).
    public var refusesAppend: Bool {
        switch self {
        case .server(let state, _):
            let passing = ["08", "40", "53", "55", "57", "58"]
            return !(passing.contains { state.hasPrefix($0) } || state == "25006")
        case .missingTables: return true
        // Closed before anything was sent (`cutOff` is the other case).
        case .closed: return true
        default: return false
        }
    }
}
