import Foundation
import PostgresNIO
import Strata

extension PostgresHistoryStorage {
    /// The newest t stored; 0 when none. One query.
    public func latestT() async throws -> Int64 {
        try await withConnection { connection, logger in
            let rows = try await connection.query(
                "SELECT COALESCE(max(t), 0)::bigint FROM strata_log WHERE store = \(self.store)",
                logger: logger
            )
            var latest: Int64 = 0
            for try await (t) in rows.decode(Int64.self) { latest = t }
            return latest
        }
    }

    /// Inserts `transaction` at its `t` when the newest stored is `t - 1`, in
    /// one PostgreSQL transaction with synchronous commit, and notifies the
    /// listeners in the same transaction.
    public func append(_ transaction: Transaction) async throws -> HistoryAppend {
        guard transaction.t >= 1, transaction.basis == transaction.t - 1 else {
            throw HistoryStorageError.invalidTransaction(
                t: transaction.t,
                reason: "its basis is \(transaction.basis), not \(transaction.t - 1)"
            )
        }
        let payload = BinaryCodec.encode(transaction)
        let checksum = Int64(CRC32C.checksum(payload))
        let t = transaction.t
        let id = transaction.id
        let time = transaction.timestamp
        let inserted = try await withConnection { connection, logger in
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SET LOCAL synchronous_commit = on", logger: logger)
                let rows = try await connection.query(
                    """
                    INSERT INTO strata_log (store, t, id, payload, checksum, time)
                    SELECT \(self.store), \(t), \(id), \(ByteBuffer(bytes: payload)), \(checksum), \(time)
                    WHERE COALESCE((SELECT max(t) FROM strata_log WHERE store = \(self.store)), 0) = \(t - 1)
                    ON CONFLICT DO NOTHING
                    RETURNING t
                    """,
                    logger: logger
                )
                var inserted = false
                for try await _ in rows.decode(Int64.self) { inserted = true }
                if inserted {
                    try await connection.query("SELECT pg_notify(\(self.channel), \(String(t)))", logger: logger)
                }
                return inserted
            }
        }
        return inserted ? .appended : .taken
    }

    /// At most `limit` transactions from `t` on, each checked (checksum,
    /// number, encoding).
    public func transactions(from t: Int64, limit: Int) async throws -> [Transaction] {
        guard limit > 0 else { return [] }
        let rows: [(Int64, ByteBuffer, Int64)] = try await withConnection { connection, logger in
            let result = try await connection.query(
                """
                SELECT t, payload, checksum FROM strata_log
                WHERE store = \(self.store) AND t >= \(max(t, 1))
                ORDER BY t LIMIT \(Int64(min(limit, Int(Int32.max))))
                """,
                logger: logger
            )
            var rows: [(Int64, ByteBuffer, Int64)] = []
            for try await row in result.decode((Int64, ByteBuffer, Int64).self) { rows.append(row) }
            return rows
        }
        return try rows.map { t, buffer, checksum in
            let payload = Array(buffer.readableBytesView)
            guard Int64(CRC32C.checksum(payload)) == checksum else {
                throw PostgresStorageError.damaged(store: store, what: "transaction \(t): checksum mismatch")
            }
            let transaction: Transaction
            do {
                transaction = try BinaryCodec.decodeTransaction(payload)
            } catch {
                throw PostgresStorageError.damaged(store: store, what: "transaction \(t) does not decode: \(error)")
            }
            guard transaction.t == t else {
                throw PostgresStorageError.damaged(store: store, what: "row \(t) holds transaction \(transaction.t)")
            }
            return transaction
        }
    }

    /// The newest t now and at every commit, through LISTEN on a connection
    /// of its own. Ends when that connection is lost (a caller reads what is
    /// new, then asks again) or the storage closes.
    public func newTransactions() async -> AsyncStream<Int64> {
        let (stream, continuation) = AsyncStream<Int64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        if closed {
            continuation.finish()
            return stream
        }
        let key = UUID()
        let settings = self.settings
        let channel = self.channel
        let logger = self.logger
        let task = Task { [weak self] in
            defer { continuation.finish() }
            guard let connection = try? await Self.connect(settings, logger: logger) else { return }
            defer { Task { try? await connection.close() } }
            try? await connection.listen(on: channel) { notifications in
                // Listening: what was stored before is read once.
                if let latest = try? await self?.latestT() { continuation.yield(latest) }
                for try await notification in notifications {
                    if let t = Int64(notification.payload) { continuation.yield(t) }
                }
            }
        }
        listeners[key] = task
        continuation.onTermination = { [weak self] _ in
            task.cancel()
            Task { await self?.forgetListener(key) }
        }
        return stream
    }

    private func forgetListener(_ key: UUID) { listeners[key] = nil }
}
