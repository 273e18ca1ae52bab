import Foundation
import PersistentCollections

/// How much a transaction matters to a person looking at the history.
public enum Significance: Int, Hashable, Sendable, Comparable, CaseIterable {
    /// Bookkeeping a user would not look for (play counts, caches).
    case minor = 0
    /// An ordinary edit.
    case normal = 1
    /// A user-visible event: an import, a bulk edit, a revert.
    case significant = 2

    /// Orders by importance.
    public static func < (lhs: Significance, rhs: Significance) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Who, when and why of a transaction, kept for every transaction a
/// combined one stands for. Equality compares the message by its UTF-8
/// bytes, as the encoding does.
public struct TransactionSummary: Hashable, Sendable {
    /// The transaction's ID.
    public var id: UUID
    /// Its number in the history.
    public var t: Int64
    /// When it was committed.
    public var timestamp: Date {
        get { _timestamp.date }
        set { _timestamp = _ExactDate(newValue) }
    }
    /// Its message.
    public var message: String {
        get { _message.string }
        set { _message = Key(newValue) }
    }
    /// Its significance.
    public var significance: Significance
    /// The message, compared by its bytes.
    var _message: Key
    /// The timestamp, compared by its bits.
    var _timestamp: _ExactDate

    init(id: UUID, t: Int64, timestamp: Date, message: String, significance: Significance) {
        self.id = id
        self.t = t
        self._timestamp = _ExactDate(timestamp)
        self._message = Key(message)
        self.significance = significance
    }
}

/// A recorded transaction: its identity and description, and at most one
/// resolved ``Change`` per record, each carrying what it replaced.
///
/// Transactions are values; `apply`, ``flatten(_:)`` and ``inverse(_:)``
/// never need a database beyond the one being changed. Equality compares
/// every string (table and field names, metadata keys, the message) by its
/// UTF-8 bytes, as the encoding does.
public struct Transaction: Hashable, Sendable, Identifiable {
    /// A unique ID. A combined transaction takes the ID of the last one it
    /// covers.
    public var id: UUID
    /// The transaction's number: the basis of the database after it.
    public var t: Int64
    /// The basis of the database it applies to.
    public var basis: Int64
    /// When it was committed.
    public var timestamp: Date {
        get { _timestamp.date }
        set { _timestamp = _ExactDate(newValue) }
    }
    /// A description for the history.
    public var message: String {
        get { _message.string }
        set { _message = Key(newValue) }
    }
    /// How much it matters to a person.
    public var significance: Significance
    /// Anything else: author, device, app version.
    public var metadata: [Key: Value]
    /// The changes, by table name and record ID.
    public var changes: PersistentMap<Key, PersistentMap<RecordID, Change>>
    /// Index declarations created, dropped or replaced, by table and index
    /// name.
    public var indexChanges: [Key: [Key: IndexChange]]
    /// For a combined transaction, the transactions it stands for, in order;
    /// empty for a plain one.
    public var covers: [TransactionSummary]
    /// For an inverse, the ID of the transaction it undoes.
    public var reverts: UUID?
    /// The message, compared by its bytes.
    var _message: Key
    /// The timestamp, compared by its bits.
    var _timestamp: _ExactDate

    /// A transaction with the given description and changes.
    public init(
        id: UUID = UUID(),
        t: Int64,
        basis: Int64,
        timestamp: Date = Date(),
        message: String = "",
        significance: Significance = .normal,
        metadata: [Key: Value] = [:],
        changes: PersistentMap<Key, PersistentMap<RecordID, Change>> = [:],
        indexChanges: [Key: [Key: IndexChange]] = [:],
        covers: [TransactionSummary] = [],
        reverts: UUID? = nil
    ) {
        self.id = id
        self.t = t
        self.basis = basis
        self._timestamp = _ExactDate(timestamp)
        self._message = Key(message)
        self.significance = significance
        self.metadata = metadata
        self.changes = changes
        self.indexChanges = indexChanges
        self.covers = covers
        self.reverts = reverts
    }

    /// This transaction's own summary.
    public var summary: TransactionSummary {
        TransactionSummary(id: id, t: t, timestamp: timestamp, message: message, significance: significance)
    }

    /// The summaries of the plain transactions this one stands for: its
    /// `covers`, or itself when it is plain.
    public var coveredSummaries: [TransactionSummary] { covers.isEmpty ? [summary] : covers }

    /// The number of records changed. O(tables).
    public var changeCount: Int { changes.values.reduce(0) { $0 + $1.count } }

    /// Whether it changes nothing: no record and no index declaration.
    public var isEmpty: Bool { changes.isEmpty && indexChanges.isEmpty }

    /// The change of record `id` in `table`, if any. O(log16 n).
    public func change(of id: RecordID, in table: Key) -> Change? { changes[table]?[id] }
}

/// A date compared and hashed by its bits, as a ``Value/date(_:)`` is: a
/// transaction whose timestamp is NaN (which the codec carries) equals
/// itself, where `Date`'s `==` (the double's) would make it unequal to
/// itself, and a sound history would read as damaged.
struct _ExactDate: Hashable, Sendable {
    var date: Date

    init(_ date: Date) { self.date = date }

    static func == (lhs: _ExactDate, rhs: _ExactDate) -> Bool {
        lhs.date.timeIntervalSinceReferenceDate.bitPattern == rhs.date.timeIntervalSinceReferenceDate.bitPattern
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(date.timeIntervalSinceReferenceDate.bitPattern)
    }
}
