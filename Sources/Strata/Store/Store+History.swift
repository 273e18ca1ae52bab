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
    /// Only transactions that change this table: its records, or its
    /// indexes (created, replaced or dropped).
    public var table: Key?
    /// Only transactions that change this record: of `table`, or, when
    /// `table` is nil, a record with this ID in any table.
    public var record: RecordID?

    /// A filter; every criterion left nil matches everything.
    public init(
        minimumSignificance: Significance? = nil,
        from: Date? = nil,
        until: Date? = nil,
        table: Key? = nil,
        record: RecordID? = nil
    ) {
        self.minimumSignificance = minimumSignificance
        self.from = from
        self.until = until
        self.table = table
        self.record = record
    }

    /// Whether the summary can match (significance and time).
    func matches(_ summary: TransactionSummary) -> Bool {
        if let minimumSignificance, summary.significance < minimumSignificance { return false }
        // On the seconds, so that a timestamp that is not a number (a
        // commit may carry one) lies in no range, not in every one (Date's
        // `>=` is `!(<)`, true for NaN).
        let seconds = summary.timestamp.timeIntervalSinceReferenceDate
        if let from, !(seconds >= from.timeIntervalSinceReferenceDate) { return false }
        if let until, !(seconds < until.timeIntervalSinceReferenceDate) { return false }
        return true
    }

    /// Whether the transaction matches (table and record). An index change
    /// changes its table, not any one record.
    func matches(_ transaction: Transaction) -> Bool {
        switch (table, record) {
        case let (table?, record?): return transaction.changes[table]?[record] != nil
        case let (table?, nil): return transaction.changes[table] != nil || transaction.indexChanges[table] != nil
        case let (nil, record?): return transaction.changes.values.contains { $0[record] != nil }
        case (nil, nil): return true
        }
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
    /// `offset` matches and returning at most `limit`. Significance and
    /// time are checked on the in-memory summaries; a table or record
    /// filter reads the transactions (from the log unless cached).
    /// O(history) worst case.
    /// - Throws: ``StoreError/corruptLog(segment:offset:reason:)`` when a
    ///   record read back no longer checks (``StoreError/historyChanged(segment:offset:reason:)``
    ///   in a read-only store whose writer cut the history since it opened);
    ///   ``StoreError/unsupportedVersion(file:found:supported:)`` when a
    ///   newer build wrote it.
    public func history(_ filter: HistoryFilter = HistoryFilter(), offset: Int = 0, limit: Int = 100) throws
        -> [Transaction]
    {
        guard let log else { throw StoreError.closed }
        return try filter.select(through: current.basis, offset: offset, limit: limit) {
            history.summary($0)
        } read: {
            try history.transaction($0, log: log)
        }
    }

    /// The transaction numbered `t`, if durable. O(its size).
    /// - Throws: as ``history(_:offset:limit:)`` does.
    public func transaction(at t: Int64) throws -> Transaction? {
        guard t >= 1, t <= current.basis else { return nil }
        guard let log else { throw StoreError.closed }
        return try history.transaction(t, log: log)
    }

    /// The number of the durable transaction with `id` (nil: no such
    /// transaction, or its commit is in flight). O(1): nothing is read from
    /// disk, where ``transaction(id:)`` decodes the transaction.
    public func t(of id: UUID) -> Int64? {
        guard let t = history.t(of: id), t <= current.basis else { return nil }
        return t
    }

    /// The transaction with `id`, if durable: nil while its commit is in
    /// flight, and for one that threw (with a caller-supplied ID, what tells
    /// after an error whether a commit landed). O(its size).
    /// - Throws: as ``history(_:offset:limit:)`` does.
    public func transaction(id: UUID) throws -> Transaction? {
        guard let t = history.t(of: id) else { return nil }
        return try transaction(at: t)
    }

    /// Every version of record `id` of `table`, newest first, each with the
    /// transaction that made it. O(history): reads every transaction.
    public func versions(of id: RecordID, in table: Key) throws -> [RecordVersion] {
        guard let log else { throw StoreError.closed }
        return try RecordVersion.versions(of: id, in: table, through: current.basis) {
            try history.transaction($0, log: log)
        }
    }

    /// The value just before the transaction with `id`.
    public func database(before id: UUID) throws -> Database {
        guard let transaction = try transaction(id: id) else { throw StoreError.unknownTransaction("\(id)") }
        return try database(asOf: transaction.basis)
    }

    /// The value just after the transaction with `id`.
    public func database(after id: UUID) throws -> Database {
        guard let transaction = try transaction(id: id) else { throw StoreError.unknownTransaction("\(id)") }
        return try database(asOf: transaction.t)
    }

    /// The value at `date`: after the last transaction stamped at or before
    /// it (one stamped with no number, NaN, is at no date). O(transactions
    /// after it): summaries only.
    public func database(at date: Date) throws -> Database {
        var t = current.basis
        let limit = date.timeIntervalSinceReferenceDate
        while t >= 1, !(history.summary(t).timestamp.timeIntervalSinceReferenceDate <= limit) { t -= 1 }
        return try database(asOf: t)
    }
}

extension RecordVersion {
    /// Every version of record `id` of `table` in transactions `1...last`,
    /// newest first. O(history): reads every transaction.
    static func versions(
        of id: RecordID,
        in table: Key,
        through last: Int64,
        read: (Int64) throws -> Transaction
    ) rethrows -> [RecordVersion] {
        var record: Record?
        var versions: [RecordVersion] = []
        guard last >= 1 else { return [] }
        for t in 1...last {
            let transaction = try read(t)
            guard let change = transaction.change(of: id, in: table) else { continue }
            switch change {
            case .insert(let inserted): record = inserted
            case .delete: record = nil
            case .update(let fields):
                record = record.map { Change.applying(fields, to: $0) }
            }
            versions.append(RecordVersion(transaction: transaction.summary, record: record))
        }
        return versions.reversed()
    }
}

extension HistoryFilter {
    /// The transactions `1...last` that match, newest first, skipping
    /// `offset` matches and returning at most `limit`: summaries are
    /// checked first, transactions read only for a table or record filter
    /// or a match.
    func select(
        through last: Int64,
        offset: Int,
        limit: Int,
        summary: (Int64) -> TransactionSummary,
        read: (Int64) throws -> Transaction
    ) rethrows -> [Transaction] {
        var result: [Transaction] = []
        var skipped = 0
        var t = last
        while t >= 1, result.count < limit {
            defer { t -= 1 }
            guard matches(summary(t)) else { continue }
            let transaction = try read(t)
            guard matches(transaction) else { continue }
            if skipped < offset {
                skipped += 1
                continue
            }
            result.append(transaction)
        }
        return result
    }
}
