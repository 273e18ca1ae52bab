import Foundation
import Strata

extension PostgresHistoryStorage {
    /// The newest t stored; 0 when none. One query.
    public func latestT() async throws -> Int64 {
        let store = self.store
        return try await withConnection(reading: true) { try $0.latestT(of: store) }
    }

    /// Inserts `transaction` at its `t` when the newest stored is `t - 1`, in
    /// one statement (one round trip, its own PostgreSQL transaction, with
    /// synchronous commit), and notifies the listeners in the same
    /// transaction. ``HistoryAppend/taken`` when another writer stored a
    /// transaction at `t` first.
    /// - Throws: ``HistoryStorageError/invalidTransaction(t:reason:)`` when
    ///   its basis is not `t - 1`, or when the newest stored is below
    ///   `t - 1` (it would leave a gap); ``PostgresStorageError``.
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
        // One prepared statement: one round trip, its own transaction, no
        // planning after the first (planning the conditional insert cost
        // as much as the commit). The insert, its condition and the
        // notification (sent at commit) commit together, synchronously.
        let parameters: [PostgresValue] = [
            .text(store), .int64(t), .uuid(id), .bytes(payload), .int64(checksum), .date(time), .text(channel),
        ]
        let rows = try await withConnection { client in
            try client.executePrepared("strata_append", Self.appendSQL, parameters).rows
        }
        if !rows.isEmpty { return .appended }
        // Not stored: taken by another writer, or the newest stored is
        // below `t - 1` (a history emptied or cut by hand), which no
        // catching up can fill.
        let latest = try await latestT()
        guard latest >= t else {
            throw HistoryStorageError.invalidTransaction(
                t: t,
                reason: "the newest stored is \(latest): it would leave a gap"
            )
        }
        return .taken
    }

    /// Inserts `transactions` (consecutive, numbered from the newest stored
    /// + 1) in one PostgreSQL transaction: all of them or, when another
    /// writer stored anything at their numbers first, none
    /// (``HistoryAppend/taken``). For bringing a history in (a file store's,
    /// another server's); listeners are told once, of the last. O(total
    /// payload), in statements of up to 4,096 rows and 64 MiB, each given
    /// the operation timeout.
    /// - Throws: ``HistoryStorageError/invalidTransaction(t:reason:)`` when
    ///   the transactions are not consecutive or would leave a gap after the
    ///   newest stored; ``PostgresStorageError``.
    public func append(contentsOf transactions: [Transaction]) async throws -> HistoryAppend {
        guard let first = transactions.first, let last = transactions.last else { return .appended }
        for (previous, transaction) in zip(transactions, transactions.dropFirst())
        where transaction.t != previous.t + 1 || transaction.basis != previous.t {
            throw HistoryStorageError.invalidTransaction(
                t: transaction.t,
                reason: "it does not follow transaction \(previous.t) (basis \(transaction.basis))"
            )
        }
        guard first.t >= 1, first.basis == first.t - 1 else {
            throw HistoryStorageError.invalidTransaction(
                t: first.t,
                reason: "its basis is \(first.basis), not \(first.t - 1)"
            )
        }
        // Statements of at most 4,096 rows and 64 MiB of payload (one
        // message to the server stays far below its 1 GiB limit).
        var statements: [[(Int64, UUID, [UInt8], Int64, Date)]] = [[]]
        var bytes = 0
        for transaction in transactions {
            let payload = BinaryCodec.encode(transaction)
            if statements[statements.count - 1].count == 4_096 || (bytes + payload.count > 64 << 20 && bytes > 0) {
                statements.append([])
                bytes = 0
            }
            bytes += payload.count
            statements[statements.count - 1].append(
                (transaction.t, transaction.id, payload, Int64(CRC32C.checksum(payload)), transaction.timestamp)
            )
        }
        let store = self.store
        let channel = self.channel
        let parts = statements
        let outcome: Int64?
        do {
            outcome = try await withConnection(requests: parts.count + 3) { client in
                try client.transaction { () -> Int64? in
                    _ = try client.execute("SET LOCAL synchronous_commit = on")
                    let latest = try client.latestT(of: store)
                    guard latest == first.t - 1 else { return latest }
                    // A writer storing one of these numbers meanwhile makes
                    // an insert fail on the primary key: all is undone.
                    for rows in parts {
                        var parameters: [PostgresValue] = []
                        parameters.reserveCapacity(rows.count * 6)
                        var sql = "INSERT INTO strata_log (store, t, id, payload, checksum, time) VALUES "
                        for (n, row) in rows.enumerated() {
                            let p = n * 6
                            sql += n == 0 ? "" : ", "
                            sql += "($\(p + 1), $\(p + 2), $\(p + 3), $\(p + 4), $\(p + 5), $\(p + 6))"
                            parameters += [
                                .text(store), .int64(row.0), .uuid(row.1), .bytes(row.2), .int64(row.3), .date(row.4),
                            ]
                        }
                        _ = try client.execute(sql, parameters)
                    }
                    _ = try client.execute("SELECT pg_notify($1, $2)", [.text(channel), .text(String(last.t))])
                    return nil
                }
            }
        } catch PostgresStorageError.server(let state, _) where state == "23505" {
            return .taken
        }
        guard let latest = outcome else { return .appended }
        guard latest >= first.t else {
            throw HistoryStorageError.invalidTransaction(
                t: first.t,
                reason: "the newest stored is \(latest): it would leave a gap"
            )
        }
        return .taken
    }

    /// The ID of transaction `t` (nil when none is stored there), read
    /// without its payload. One query.
    public func transactionID(at t: Int64) async throws -> UUID? {
        let store = self.store
        return try await withConnection(reading: true) { client in
            try client.execute("SELECT id FROM strata_log WHERE store = $1 AND t = $2", [.text(store), .int64(t)])
                .scalar?.uuid
        }
    }

    /// At most `limit` transactions from `t` on, each checked (checksum,
    /// number, encoding). Read in requests of about
    /// ``readBudget`` bytes of payload each (one transaction at least),
    /// each given the operation timeout: a batch of large transactions on a
    /// slow link still arrives.
    public func transactions(from t: Int64, limit: Int) async throws -> [Transaction] {
        guard limit > 0 else { return [] }
        let store = self.store
        var read: [Transaction] = []
        var next = max(t, 1)
        while read.count < limit {
            // Rows a request considers are bounded too: the window sums
            // every row the inner query selects, and a request with no
            // row limit (a full read) would sum the rest of the log each
            // time.
            let wanted = min(limit - read.count, Self.rowsPerRequest)
            let parameters: [PostgresValue] = [
                .text(store), .int64(next), .int64(Int64(wanted)), .int64(Int64(Self.readBudget)),
            ]
            // Rows while the payload read before them stays under the
            // budget; `reached`: the budget was reached (more may follow).
            let result = try await withConnection(reading: true) { client in
                try client.execute(
                    """
                    SELECT t, payload, checksum, before + octet_length(payload) >= $4 AS reached, id FROM (
                        SELECT t, payload, checksum, id,
                            COALESCE(sum(octet_length(payload)) OVER (ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING
                                AND 1 PRECEDING), 0) AS before
                        FROM strata_log WHERE store = $1 AND t >= $2 ORDER BY t LIMIT $3) AS batch
                    WHERE before < $4 ORDER BY t
                    """,
                    parameters
                )
            }
            let rows = result.rows
            read += try rows.map { try Self.decodeLogRow($0, store: store) }
            // Fewer rows than wanted, and not for the budget: the end.
            let budgetReached = rows.last.flatMap { $0.count > 3 ? $0[3] : nil } == .bool(true)
            guard let last = read.last, !rows.isEmpty, rows.count == wanted || budgetReached else { break }
            next = last.t + 1
        }
        return read
    }

    /// Bytes of payload one request of ``transactions(from:limit:)`` reads
    /// (one transaction at least), as a snapshot's chunk.
    static let readBudget = 1 << 20

    /// Rows one request of ``transactions(from:limit:)`` considers.
    static let rowsPerRequest = 4_096

    /// A row of the log (t, payload, checksum, and at index 4, when there,
    /// the id column) as its transaction, checked: the id column is what
    /// ``transactionID(at:)`` answers, which a peer settles commits by.
    static func decodeLogRow(_ row: [PostgresValue?], store: String) throws -> Transaction {
        guard row.count >= 3, let t = row[0]?.int64, let payload = row[1]?.bytes, let checksum = row[2]?.int64
        else {
            throw PostgresStorageError.damaged(store: store, what: "a log row does not decode: \(row.prefix(1))")
        }
        guard Int64(CRC32C.checksum(payload)) == checksum else {
            throw PostgresStorageError.damaged(store: store, what: "transaction \(t): checksum mismatch")
        }
        let transaction: Transaction
        do {
            transaction = try BinaryCodec.decodeTransaction(payload)
        } catch {
            throw PostgresStorageError.undecodable(error, store: store, what: "transaction \(t)")
        }
        guard transaction.t == t else {
            throw PostgresStorageError.damaged(store: store, what: "row \(t) holds transaction \(transaction.t)")
        }
        if row.count >= 5, row[4]?.uuid != transaction.id {
            throw PostgresStorageError.damaged(
                store: store,
                what:
                    "row \(t) names transaction \(row[4]?.uuid.map(\.uuidString) ?? "none") but holds \(transaction.id)"
            )
        }
        return transaction
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
        let task = Task { [weak self] in
            defer { continuation.finish() }
            guard let client = try? await PostgresClient.open(settings, limit: settings.operationTimeout) else {
                return
            }
            let listen = "LISTEN \(channel)"
            if (try? await client.perform(limit: settings.operationTimeout, { try $0.execute(listen) })) != nil {
                // Listening: what was stored before is read once.
                if let latest = try? await self?.latestT() { continuation.yield(latest) }
                // Waits for ever: ends when the connection is lost or the
                // task is cancelled.
                while let payloads = try? await client.perform(limit: .zero, { try $0.awaitNotifications() }) {
                    for payload in payloads {
                        if let t = Int64(payload) { continuation.yield(t) }
                    }
                }
            }
            // Before the task ends: close() waits for it.
            await client.close()
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

extension PostgresClient {
    /// The newest t stored for `store`; 0 when none. One query.
    func latestT(of store: String) throws -> Int64 {
        try execute("SELECT COALESCE(max(t), 0)::bigint FROM strata_log WHERE store = $1", [.text(store)])
            .scalar?.int64 ?? 0
    }
}

extension PostgresHistoryStorage {
    /// The conditional insert of one transaction at `t` (when the newest
    /// stored is `t - 1`) with its notification, prepared once per
    /// connection (planning it cost as much as the commit); a row back
    /// when it was stored. Parameters: store, t, id, payload, checksum,
    /// time, channel.
    static let appendSQL = """
        WITH inserted AS (
            INSERT INTO strata_log (store, t, id, payload, checksum, time)
            SELECT $1::text, $2::bigint, $3::uuid, $4::bytea, $5::bigint, $6::timestamptz
            WHERE COALESCE((SELECT max(t) FROM strata_log WHERE store = $1::text), 0) = $2::bigint - 1
            ON CONFLICT DO NOTHING
            RETURNING t)
        SELECT t, pg_notify($7::text, t::text) IS NULL FROM inserted
        """
}
