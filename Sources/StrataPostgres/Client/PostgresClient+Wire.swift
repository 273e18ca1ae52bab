import CLibPQ
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Everything here runs on the client's queue (see PostgresClient): the
// C calls, and the pointers into Swift arrays that libpq reads during a
// call and never keeps.

extension PostgresClient {
    /// How long one poll waits before the request looks at its time limit
    /// and its cancellation again.
    static let pollSlice: Int32 = 20

    /// Connects with `settings`: libpq's non-blocking connect, each wait
    /// within the request's limit. `addresses`: the host name's, resolved
    /// (libpq tries each in turn; the name still serves TLS and messages).
    func connect(_ settings: PostgresSettings, addresses: [String]?) throws {
        var parameters: [(String, String)] = [
            ("port", String(settings.port)), ("user", settings.user),
            ("sslmode", settings.tls.rawValue), ("application_name", "strata"), ("client_encoding", "UTF8"),
            // GSSAPI's negotiation may block on the network outside the
            // request's time limit; Strata's logins are passwords.
            ("gssencmode", "disable"),
            // A link that died silently (no reset, no FIN) is found within
            // about a minute, also by a listener that only waits.
            ("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"),
            ("keepalives_count", "3"),
        ]
        if let addresses {
            parameters.append(("host", Array(repeating: settings.host, count: addresses.count).joined(separator: ",")))
            parameters.append(("hostaddr", addresses.joined(separator: ",")))
        } else {
            parameters.append(("host", settings.host))
        }
        if let password = settings.password { parameters.append(("password", password)) }
        if let database = settings.database { parameters.append(("dbname", database)) }
        let keywords = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer { for pointer in keywords + values { free(pointer) } }
        let started = (keywords.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keys in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { values in
                PQconnectStartParams(keys.baseAddress, values.baseAddress, 0)
            }
        }
        guard let started else { throw ClientFailure.lost("libpq could not allocate a connection") }
        connection = started
        // The server's notices (CREATE TABLE IF NOT EXISTS skipping one)
        // are not errors; libpq would print them on standard error.
        _ = PQsetNoticeProcessor(started, { _, _ in }, nil)
        var status = PQstatus(started) == CONNECTION_BAD ? PGRES_POLLING_FAILED : PGRES_POLLING_WRITING
        while status != PGRES_POLLING_OK {
            switch status {
            case PGRES_POLLING_READING: try wait(for: Int16(POLLIN))
            case PGRES_POLLING_WRITING: try wait(for: Int16(POLLOUT))
            case PGRES_POLLING_FAILED:
                let failure = ClientFailure.connectionRefused(
                    errorMessage(),
                    needsPassword: PQconnectionNeedsPassword(started) != 0
                )
                abandon()
                throw failure
            default: break
            }
            status = PQconnectPoll(started)
        }
        guard PQsetnonblocking(started, 1) == 0 else { throw lostConnection() }
    }

    /// Runs `sql` with `parameters` (`$1`, `$2`, … in the text; each sent
    /// in binary with its type) and returns its rows.
    func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresRows {
        let connection = try liveConnection()
        try send(parameters) { types, values, lengths, formats in
            PQsendQueryParams(connection, sql, Int32(parameters.count), types, values, lengths, formats, 1)
        }
        return try result()
    }

    /// Runs the statement `sql`, prepared once per connection under `name`
    /// (planned once, then one round trip per call). `parameters` must
    /// have the same types at every call.
    func executePrepared(_ name: String, _ sql: String, _ parameters: [PostgresValue]) throws -> PostgresRows {
        let connection = try liveConnection()
        if !prepared.contains(name) {
            let types = parameters.map(\.typeOID)
            guard PQsendPrepare(connection, name, sql, Int32(types.count), types) != 0 else {
                throw lostConnection()
            }
            try flush()
            _ = try result()
            prepared.insert(name)
        }
        try send(parameters) { _, values, lengths, formats in
            PQsendQueryPrepared(connection, name, Int32(parameters.count), values, lengths, formats, 1)
        }
        do {
            return try result()
        } catch ClientFailure.refused(let state, let message) {
            // Forgotten by the server (a pooler's reset, DEALLOCATE ALL):
            // prepared again next time.
            if state == "26000" { prepared.remove(name) }
            throw ClientFailure.refused(sqlState: state, message: message)
        }
    }

    /// The payloads of the notifications that arrive next on a connection
    /// that LISTENs; waits (until cancelled or lost) for at least one.
    func awaitNotifications() throws -> [String] {
        let connection = try liveConnection()
        while true {
            guard PQconsumeInput(connection) != 0 else { throw lostConnection() }
            var payloads: [String] = []
            while let notification = PQnotifies(connection) {
                payloads.append(String(cString: notification.pointee.extra))
                PQfreemem(notification)
            }
            if !payloads.isEmpty { return payloads }
            try wait(for: Int16(POLLIN))
        }
    }

    /// Before a request: when the server closed the connection while it
    /// was idle (a restart, an idle timeout), throws
    /// ``ClientFailure/lostBeforeSending(_:)``, so that the caller sends on
    /// a new connection instead of finding out halfway.
    func checkIdleConnection() throws {
        guard let connection else { return }
        // A server closing a connection sends its reason, then the end of
        // the stream; libpq sees the end only on a read after the reason
        // (the reason itself goes to the notice processor): read while
        // there is something to read.
        var sound = true
        for _ in 0..<8 where sound {
            var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
            guard descriptor.fd >= 0 else {
                sound = false
                break
            }
            guard poll(&descriptor, 1, 0) > 0 else { break }
            sound = PQconsumeInput(connection) != 0 && PQstatus(connection) != CONNECTION_BAD
        }
        if sound { return }
        let message = errorMessage()
        abandon()
        throw ClientFailure.lostBeforeSending(message)
    }

    // MARK: Sending and receiving

    private func liveConnection() throws -> OpaquePointer {
        dispatchPrecondition(condition: .onQueue(queue))
        if isClosing { throw ClientFailure.closed }
        guard let connection, !isLost else { throw ClientFailure.lost("the connection was closed") }
        return connection
    }

    /// Sends with `start` given the parameters laid out for libpq: one
    /// buffer holds every value (and a spare byte, so that no value's
    /// pointer is nil: nil is SQL NULL), all in binary.
    private func send(
        _ parameters: [PostgresValue],
        _ start: (
            UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?
        ) -> Int32
    ) throws {
        // libpq's and the protocol's limits, refused before anything is
        // sent (the session stays usable).
        guard parameters.count <= 65_535 else {
            throw ClientFailure.refused(
                sqlState: "54000",
                message: "\(parameters.count) parameters in one statement (at most 65,535)"
            )
        }
        var bytes: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int32] = []
        for parameter in parameters {
            let encoded = parameter.binaryEncoding
            guard encoded.count < 1 << 30 else {
                throw ClientFailure.refused(
                    sqlState: "54000",
                    message: "a parameter of \(encoded.count) bytes (PostgreSQL takes under 1 GiB)"
                )
            }
            offsets.append(bytes.count)
            lengths.append(Int32(encoded.count))
            bytes += encoded
        }
        bytes.append(0)
        let types = parameters.map(\.typeOID)
        let formats = [Int32](repeating: 1, count: parameters.count)
        let sent = bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
            return start(types, values, lengths, formats)
        }
        // Refused by libpq itself: nothing reached the server, but the
        // connection's state is libpq's to know; it is given up.
        guard sent != 0 else { throw lostConnection() }
        try flush()
    }

    /// Waits until everything sent has left libpq's buffer, reading
    /// meanwhile (a server may answer before it has read it all).
    private func flush() throws {
        let connection = try liveConnection()
        while true {
            let pending = PQflush(connection)
            if pending == 0 { return }
            guard pending > 0 else { throw lostConnection() }
            if try wait(for: Int16(POLLIN | POLLOUT)), PQconsumeInput(connection) == 0 {
                throw lostConnection()
            }
        }
    }

    /// Reads every result of the request sent last; the rows of the last
    /// one, or the server's refusal.
    private func result() throws -> PostgresRows {
        let connection = try liveConnection()
        var rows = PostgresRows(columnNames: [], rows: [])
        var failure: ClientFailure?
        while true {
            while PQisBusy(connection) != 0 {
                try wait(for: Int16(POLLIN))
                guard PQconsumeInput(connection) != 0 else { throw lostConnection() }
            }
            guard let result = PQgetResult(connection) else { break }
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                do { rows = try PostgresRows(result) } catch let error as ClientFailure { failure = error }
            case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR:
                failure = .refused(
                    sqlState: Self.field(result, PG_DIAG_SQLSTATE),
                    message: Self.field(result, PG_DIAG_MESSAGE_PRIMARY)
                )
            case PGRES_EMPTY_QUERY:
                break
            default:
                // COPY and other modes this client does not speak: libpq
                // would hand out a result per call for ever.
                let status = String(cString: PQresStatus(PQresultStatus(result)))
                abandon()
                throw ClientFailure.malformed("an answer of status \(status), which this client does not take")
            }
        }
        if PQstatus(connection) == CONNECTION_BAD { throw lostConnection() }
        if let failure { throw failure }
        return rows
    }

    /// Waits until the socket is ready for `events` (POLLIN, POLLOUT);
    /// whether it can be read. Throws (closing the connection) when the
    /// request's time is up or it was cancelled.
    @discardableResult
    private func wait(for events: Int16) throws -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection else { throw ClientFailure.lost("the connection was closed") }
        while true {
            if cancellation?.isCancelled == true {
                abandon()
                throw ClientFailure.cancelled
            }
            if isClosing {
                abandon()
                throw ClientFailure.closed
            }
            var slice = Self.pollSlice
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else {
                    abandon()
                    throw ClientFailure.expired
                }
                slice = Int32(min(Int64(slice), left.saturatingNanoseconds / 1_000_000 + 1))
            }
            let socket = PQsocket(connection)
            guard socket >= 0 else { throw lostConnection() }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, slice)
            if ready > 0 { return descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 }
            if ready < 0 && errno != EINTR {
                let reason = String(cString: strerror(errno))
                abandon()
                throw ClientFailure.lost("poll: \(reason)")
            }
        }
    }

    /// The connection's error as a lost connection, and the connection
    /// closed.
    private func lostConnection() -> ClientFailure {
        let failure = ClientFailure.lost(errorMessage())
        abandon()
        return failure
    }

    /// libpq's last message on the connection, its lines joined.
    private func errorMessage() -> String {
        guard let connection, let message = PQerrorMessage(connection) else { return "the connection was closed" }
        let lines = String(cString: message).split(whereSeparator: \.isNewline)
        let text = lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
        return text.isEmpty ? "the connection was lost" : text
    }

    private static func field(_ result: OpaquePointer, _ code: Int32) -> String {
        guard let value = PQresultErrorField(result, code) else { return "" }
        return String(cString: value)
    }
}

/// libpq's field codes are character macros, which Swift does not import.
private let PG_DIAG_SQLSTATE = Int32(UInt8(ascii: "C"))
private let PG_DIAG_MESSAGE_PRIMARY = Int32(UInt8(ascii: "M"))
