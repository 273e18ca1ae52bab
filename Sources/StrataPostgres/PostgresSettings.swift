import Foundation

/// Where a PostgreSQL server is and how to log in: from a URL
/// (`postgres://user:password@host:port/database?sslmode=prefer`) or from
/// the standard `PG*` environment variables (`PGHOST`, `PGPORT`, `PGUSER`,
/// `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`), as `psql` reads them.
public struct PostgresSettings: Sendable, Equatable, CustomStringConvertible {
    /// Whether to use TLS: libpq's `sslmode` of the same name, which
    /// does not verify the server's certificate (unless a root
    /// certificate is installed at `~/.postgresql/root.crt`, as for
    /// `psql`). Settings left unset (a password) may come from libpq's
    /// own sources too: `PGPASSWORD`, `~/.pgpass`.
    public enum TLSMode: String, Sendable, Equatable {
        /// Never.
        case disable
        /// When the server offers it (the default).
        case prefer
        /// Always: refuse a server that does not offer it.
        case require
    }

    /// A host name or address, or the directory of a Unix socket (a path
    /// starting with `/`).
    public var host: String
    /// The TCP port (or the number in the socket's name).
    public var port: Int
    /// The role to log in as.
    public var user: String
    /// Its password, if the server asks for one.
    public var password: String?
    /// The database; nil for the server's default (the user's name).
    public var database: String?
    /// TLS use.
    public var tls: TLSMode
    /// How long one request (connecting included) may go unanswered before
    /// its connection is given up as lost: a server that stopped answering
    /// must not stall a peer for ever. 30 seconds by default; zero or less
    /// for no limit.
    public var operationTimeout: Duration = .seconds(30)

    /// Refuses a port outside 1...65535 (a value set in code; a URL's or
    /// PGPORT's is refused where it is read).
    /// - Throws: ``PostgresStorageError/badSettings(_:)``.
    func checkPort() throws {
        guard (1...65_535).contains(port) else {
            throw PostgresStorageError.badSettings("port \(port) is not a port number")
        }
    }

    /// `host:port`, for messages.
    var server: String { "\(host):\(port)" }

    /// Settings given field by field.
    public init(
        host: String = "localhost",
        port: Int = 5432,
        user: String = "postgres",
        password: String? = nil,
        database: String? = nil,
        tls: TLSMode = .prefer
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Settings from a `postgres://` or `postgresql://` URL. O(URL length).
    /// - Throws: ``PostgresStorageError/badSettings(_:)`` naming what is wrong.
    public init(url text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresStorageError.badSettings("\(text): not a postgres:// URL")
        }
        var settings = PostgresSettings()
        // URLComponents decodes host, user and password already.
        if let host = components.host, !host.isEmpty {
            // An IPv6 address comes bracketed ([::1]); libpq takes it bare.
            settings.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        }
        if let port = components.port {
            guard (1...65_535).contains(port) else {
                throw PostgresStorageError.badSettings("port \(port) in the URL is not a port number")
            }
            settings.port = port
        }
        if let user = components.user, !user.isEmpty { settings.user = user }
        settings.password = components.password
        let path = components.path.drop { $0 == "/" }
        if !path.isEmpty { settings.database = String(path) }
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                settings.tls = try Self.tlsMode(item.value ?? "")
            case "host":
                // A socket directory given as a parameter (host part empty).
                if let value = item.value, !value.isEmpty { settings.host = value }
            default:
                throw PostgresStorageError.badSettings("\(text): unknown parameter \(item.name)")
            }
        }
        self = settings
    }

    /// Settings from the `PG*` variables of `environment`, each defaulting as
    /// `psql` does (host localhost, port 5432, user `USER`, TLS preferred).
    /// - Throws: ``PostgresStorageError/badSettings(_:)`` for a port that is
    ///   not a number or an unknown `PGSSLMODE`.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PostgresSettings {
        var settings = PostgresSettings()
        if let host = environment["PGHOST"], !host.isEmpty { settings.host = host }
        if let text = environment["PGPORT"], !text.isEmpty {
            guard let port = Int(text), (1...65_535).contains(port) else {
                throw PostgresStorageError.badSettings("PGPORT=\(text) is not a port number")
            }
            settings.port = port
        }
        settings.user = environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        settings.password = environment["PGPASSWORD"]
        settings.database = environment["PGDATABASE"]
        if let mode = environment["PGSSLMODE"], !mode.isEmpty { settings.tls = try tlsMode(mode) }
        return settings
    }

    private static func tlsMode(_ text: String) throws -> TLSMode {
        switch text {
        case "disable": return .disable
        case "allow", "prefer": return .prefer
        case "require": return .require
        case "verify-ca", "verify-full":
            // Never weakened silently to an unverified connection.
            throw PostgresStorageError.badSettings("sslmode \(text) (certificate verification) is not supported")
        default: throw PostgresStorageError.badSettings("sslmode \(text) is not disable, prefer or require")
        }
    }

    /// `user@host:port/database`, without the password.
    public var description: String { "\(user)@\(host):\(port)/\(database ?? user)" }
}
