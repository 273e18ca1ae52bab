import Foundation
import PersistentCollections

/// Which transactions a history query returns.
public struct HistoryFilter: Sendable {
    /// Only transactions at least this significant (nil: all).
    public var minimumSignificance: Significance?
    /// Only transactions at or after this time.
    public var from: Date?
    /// Only transactions before this time.
    public var until: Date?
    /// Only transactions that change this table.
    public var table: String?
    /// Only transactions that change this record (of `table`).
    public var record: RecordID?

    /// A filter; every criterion left nil matches everything.
    public init(
        minimumSignificance: Significance? = nil,
        from: Date? = nil,
        until: Date? = nil,
        table: String? = nil,
        record: RecordID? = nil
    ) {
        self.minimumSignificance = minimumSignificance
        self.from = from
        self.until = until
        self.table = table
        self.record = record
    }

    func matches(_ transaction: Transaction) -> Bool {
        if let minimumSignificance, transaction.significance < minimumSignificance { return false }
        if let from, transaction.timestamp < from { return false }
        if let until, transaction.timestamp >= until { return false }
        if let table {
            guard let changes = transaction.changes[table] else { return false }
            if let record, changes[record] == nil { return false }
        }
        return true
    }
}

/// One version of a record: the transaction that made it and the record
/// after it (nil when the transaction deleted it).
public struct RecordVersion: Sendable, Hashable {
    /// The transaction that produced this version.
    public var transaction: TransactionSummary
    /// The record after the transaction; nil for a delete.
    public var record: Record?
}

extension Store {
    /// Durable transactions matching `filter`, newest first, skipping
    /// `offset` matches and returning at most `limit`. O(history) worst case.
    public func history(_ filter: HistoryFilter = HistoryFilter(), offset: Int = 0, limit: Int = 100) -> [Transaction] {
        var result: [Transaction] = []
        var skipped = 0
        for transaction in durableTransactions.reversed() where filter.matches(transaction) {
            if skipped < offset {
                skipped += 1
                continue
            }
            result.append(transaction)
            if result.count >= limit { break }
        }
        return result
    }

    /// The durable transactions, oldest first (`[i].t == i + 1`).
    var durableTransactions: ArraySlice<Transaction> {
        transactions[..<Int(current.basis)]
    }

    /// The transaction numbered `t`, if durable. O(1).
    public func transaction(at t: Int64) -> Transaction? {
        guard t >= 1, t <= current.basis else { return nil }
        return transactions[Int(t - 1)]
    }

    /// The transaction with `id`, if durable. O(history).
    public func transaction(id: UUID) -> Transaction? {
        durableTransactions.last { $0.id == id }
    }

    /// Every version of record `id` of `table`, newest first, each with the
    /// transaction that made it. O(history).
    public func versions(of id: RecordID, in table: String) -> [RecordVersion] {
        var record: Record?
        var versions: [RecordVersion] = []
        for transaction in durableTransactions {
            guard let change = transaction.change(of: id, in: table) else { continue }
            switch change {
            case .insert(let inserted): record = inserted
            case .delete: record = nil
            case .update(let fields):
                if var updated = record {
                    for (name, field) in fields { updated[name] = field.new }
                    record = updated
                }
            }
            versions.append(RecordVersion(transaction: transaction.summary, record: record))
        }
        return versions.reversed()
    }

    /// The value after transaction `t` (0: the empty database).
    ///
    /// Two steps whatever the distance: the run between the nearer of the
    /// current value (walking back with inverses) and the empty database is
    /// flattened into one transaction and applied once.
    /// - Throws: ``StoreError/outOfRange(t:current:)``.
    public func database(asOf t: Int64) throws -> Database {
        let now = current
        guard t >= 0, t <= now.basis else { throw StoreError.outOfRange(t: t, current: now.basis) }
        if t == now.basis { return now }
        if now.basis - t <= t {
            let run = transactions[Int(t)..<Int(now.basis)]
            return try apply(now, inverse(flatten(run)))
        }
        return try Self.replay(transactions[..<Int(t)], onto: Database())
    }

    /// The value just before the transaction with `id`.
    public func database(before id: UUID) throws -> Database {
        guard let transaction = transaction(id: id) else { throw StoreError.unknownTransaction("\(id)") }
        return try database(asOf: transaction.basis)
    }

    /// The value just after the transaction with `id`.
    public func database(after id: UUID) throws -> Database {
        guard let transaction = transaction(id: id) else { throw StoreError.unknownTransaction("\(id)") }
        return try database(asOf: transaction.t)
    }

    /// The value at `date`: after the last transaction stamped at or before it.
    public func database(at date: Date) throws -> Database {
        let t = durableTransactions.last { $0.timestamp <= date }?.t ?? 0
        return try database(asOf: t)
    }
}
