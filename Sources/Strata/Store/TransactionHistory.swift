import Foundation
import PersistentCollections

/// The store's index of its history: for every transaction a summary and
/// the log position of its record, in memory (~100 bytes each); whole
/// transactions are read from the log when asked for, and a bounded set of
/// them is kept decoded.
///
/// Holding summaries instead of transactions is what lets a store of 100k
/// transactions open without decoding them: a bulk import of 10k records
/// is megabytes decoded and bytes summarized.
struct TransactionHistory {
    /// `summaries[i].t == i + 1`.
    private(set) var summaries: [TransactionSummary] = []
    private(set) var positions: [TransactionLog.Position] = []
    /// `logByteSums[i]`: log bytes of transactions 1...i (`[0] == 0`).
    private var logByteSums: [Int] = [0]
    /// A persistent map, not a `Dictionary`: a dictionary's growth rehashes
    /// every ID at once, which the commit that crosses the threshold waits
    /// for (milliseconds at 100k transactions).
    private var tByID: PersistentMap<UUID, Int64> = [:]
    /// How many summaries `tByID` indexes: the rest are indexed by the
    /// next ``t(of:)``, so that an open (or a history read for `strata log`)
    /// that never looks up an ID does not build the index.
    private var indexed = 0
    private var cache: TransactionCache

    /// The decoded transactions held in memory.
    var cachedTransactions: [Transaction] { cache.transactions }

    /// The estimated bytes of the decoded transactions held in memory.
    var cachedBytes: Int { cache.bytes }

    /// Bounds the decoded transactions held to about `bytes` (the memory
    /// budget's part); what that evicts waits for ``takeEvicted()``.
    mutating func setCachedByteCapacity(_ bytes: Int) { cache.setByteCapacity(bytes) }

    /// - Parameter cachedChanges: how many changes the decoded transactions
    ///   kept in memory may hold together.
    init(cachedChanges: Int) {
        cache = TransactionCache(capacity: cachedChanges)
    }

    /// Transactions in the history.
    var count: Int { summaries.count }

    /// Decoded transactions evicted from the cache since the last call, for
    /// the caller to let go of off the actor.
    mutating func takeEvicted() -> [Transaction] { cache.takeEvicted() }

    /// Makes room for `count` transactions in all (a segment's summary is
    /// about to add its records): a large segment's arrays grow once, not
    /// by doubling, and many small ones still grow geometrically.
    mutating func reserveCapacity(_ count: Int) {
        guard summaries.capacity < count else { return }
        let capacity = Swift.max(count, 2 * summaries.capacity)
        summaries.reserveCapacity(capacity)
        positions.reserveCapacity(capacity)
        logByteSums.reserveCapacity(capacity + 1)
    }

    /// Adds the summary of the next transaction, read from the log at open.
    mutating func append(_ summary: TransactionSummary, at position: TransactionLog.Position) {
        precondition(summary.t == Int64(summaries.count + 1), "history out of order")
        summaries.append(summary)
        positions.append(position)
        logByteSums.append(logByteSums[logByteSums.count - 1] + position.size)
    }

    /// Adds a transaction just appended to the log, keeping it decoded;
    /// what that evicts from the cache waits for ``takeEvicted()``.
    mutating func append(_ transaction: Transaction, at position: TransactionLog.Position) {
        append(transaction.summary, at: position)
        cache.insert(transaction, keepingEvicted: true)
    }

    /// Drops every transaction after `t`.
    mutating func removeAll(after t: Int64) {
        let keep = max(0, min(Int(t), summaries.count))
        for summary in summaries[keep..<max(keep, indexed)] { tByID[summary.id] = nil }
        indexed = min(indexed, keep)
        summaries.removeSubrange(keep...)
        positions.removeSubrange(keep...)
        logByteSums.removeSubrange((keep + 1)...)
        cache.removeAll(after: t)
    }

    /// Log bytes of transactions `a + 1 ... b`: the rebuild cost model's
    /// measure of a run. O(1).
    func logBytes(from a: Int64, to b: Int64) -> Int {
        logByteSums[Int(b)] - logByteSums[Int(a)]
    }

    /// The number of the transaction with `id`, if present. O(1).
    mutating func t(of id: UUID) -> Int64? {
        while indexed < summaries.count {
            tByID[summaries[indexed].id] = summaries[indexed].t
            indexed += 1
        }
        return tByID[id]
    }

    /// The summary of transaction `t` (1...count).
    func summary(_ t: Int64) -> TransactionSummary { summaries[Int(t - 1)] }

    /// The ID of transaction `t`: the zero UUID for t 0 (the empty value,
    /// as snapshots and the manifest name it), nil past the end. O(1).
    func id(of t: Int64) -> UUID? {
        if t == 0 { return UUID(uuid: UUID.zero) }
        return t > 0 && t <= Int64(summaries.count) ? summaries[Int(t - 1)].id : nil
    }

    /// Transaction `t` if it is kept decoded. O(1).
    func cachedTransaction(_ t: Int64) -> Transaction? { cache[t] }

    /// Where transaction `t`'s record is in the log (1...count). O(1).
    func position(_ t: Int64) -> TransactionLog.Position { positions[Int(t - 1)] }

    /// Transaction `t`, from the cache or else the log. O(its size).
    /// - Throws: ``StoreError/corruptLog(segment:offset:reason:)`` when its
    ///   record no longer reads back (``StoreError/historyChanged(segment:offset:reason:)``
    ///   in a read-only store, whose writer may have cut it, or removed
    ///   its segment); ``StoreError/unsupportedVersion(file:found:supported:)`` when a
    ///   newer build wrote it.
    mutating func transaction(_ t: Int64, log: TransactionLog) throws -> Transaction {
        if let cached = cache[t] { return cached }
        let transaction = try log.readingRecord(at: positions[Int(t - 1)]) { try read(t, log: log) }
        cache.insert(transaction)
        return transaction
    }

    /// Transaction `t` read back from the log and checked against what
    /// was read of it before.
    private func read(_ t: Int64, log: TransactionLog) throws -> Transaction {
        let position = positions[Int(t - 1)]
        let segment = log.segments[position.segment].name
        let transaction = try log.decodedRecord(at: position)
        guard transaction.t == t else {
            log.forgetSummary(ofSegment: position.segment)
            throw StoreError.corruptLog(
                segment: segment,
                offset: position.offset,
                reason: "transaction t \(transaction.t) where \(t) was expected"
            )
        }
        // The same number but another transaction: the log was rewritten
        // since it was read (a read-only store's writer truncated and
        // committed again), never to be mixed into this history.
        let expected = summaries[Int(t - 1)].id
        guard transaction.id == expected else {
            throw StoreError.corruptLog(
                segment: segment,
                offset: position.offset,
                reason: "transaction t \(t) is \(transaction.id) where \(expected) was read before: "
                    + "the log was rewritten since (a truncate by the writer?); reopen the store"
            )
        }
        return transaction
    }

    /// Transactions `range` (numbers, 1-based), oldest first.
    mutating func run(_ range: ClosedRange<Int64>, log: TransactionLog) throws -> [Transaction] {
        try range.map { try transaction($0, log: log) }
    }
}

/// Decoded transactions kept by number, bounded by their total change
/// count and estimated bytes; the oldest inserted go first.
struct TransactionCache {
    let capacity: Int
    /// At most about this many bytes (``Transaction/_estimatedBytes``):
    /// the memory budget's part, set as the current value grows or shrinks.
    private(set) var byteCapacity = Int.max
    /// Persistent for the reason `tByID` is: no rehash on growth.
    private var entries: PersistentMap<Int64, Entry> = [:]
    private var order: [Int64] = []
    private var head = 0
    private var changes = 0
    /// The estimated bytes of the transactions kept.
    private(set) var bytes = 0

    struct Entry {
        var transaction: Transaction
        var bytes: Int
    }

    init(capacity: Int) { self.capacity = max(0, capacity) }

    subscript(t: Int64) -> Transaction? { entries[t]?.transaction }

    var transactions: [Transaction] { entries.values.map(\.transaction) }

    /// Transactions evicted since the last ``takeEvicted()``.
    private var evicted: [Transaction] = []

    /// The transactions evicted since the last call, for the caller to let
    /// go of off the actor (freeing a large one takes time).
    mutating func takeEvicted() -> [Transaction] {
        defer { evicted = [] }
        return evicted
    }

    /// Keeps `transaction`, evicting the oldest kept past the capacity;
    /// with `keepingEvicted`, they wait for ``takeEvicted()`` instead of
    /// being let go of here.
    mutating func insert(_ transaction: Transaction, keepingEvicted: Bool = false) {
        defer { if !keepingEvicted { evicted = [] } }
        let size = transaction.changeCount
        guard size <= capacity, entries[transaction.t] == nil else { return }
        let bytes = transaction._estimatedBytes
        guard bytes <= byteCapacity else { return }
        evict(whileOver: capacity - size, bytes: byteCapacity - bytes)
        entries[transaction.t] = Entry(transaction: transaction, bytes: bytes)
        order.append(transaction.t)
        changes += size
        self.bytes += bytes
    }

    /// Changes the byte capacity, evicting the oldest past a lower one
    /// (held for ``takeEvicted()``).
    mutating func setByteCapacity(_ newCapacity: Int) {
        byteCapacity = max(0, newCapacity)
        evict(whileOver: capacity, bytes: byteCapacity)
    }

    /// Evicts the oldest kept while more than `changeLimit` changes or
    /// `byteLimit` bytes are kept.
    private mutating func evict(whileOver changeLimit: Int, bytes byteLimit: Int) {
        while changes > changeLimit || bytes > byteLimit, head < order.count {
            if let old = entries.removeValue(forKey: order[head]) {
                changes -= old.transaction.changeCount
                bytes -= old.bytes
                evicted.append(old.transaction)
            }
            head += 1
        }
        if head > 1_024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    mutating func removeAll(after t: Int64) {
        for (key, entry) in entries where key > t {
            entries[key] = nil
            changes -= entry.transaction.changeCount
            bytes -= entry.bytes
        }
    }
}

extension TransactionLog {
    /// The transaction the record at `position` holds, read back and
    /// decoded.
    /// - Throws: for a record that does not decode, `corruptLog` (and its
    ///   segment's summary is dropped, so that the next open reads the
    ///   segment), or `unsupportedVersion` for a newer build's record (no
    ///   damage: the summary stays); the read's own errors.
    func decodedRecord(at position: Position) throws -> Transaction {
        let payload = try StoreError.mappingFormat { try read(position) }
        do {
            return try BinaryCodec.decodeTransaction(payload)
        } catch {
            if !StoreError.isNewerRecord(error) { forgetSummary(ofSegment: position.segment) }
            throw StoreError.undecodableRecord(
                error,
                segment: segments[position.segment].name,
                file: path(ofSegment: position.segment),
                offset: position.offset
            )
        }
    }

    /// Runs `read` of the record at `position`. In a read-only log, what
    /// its writer's truncate since the store opened leaves is
    /// ``StoreError/historyChanged(segment:offset:reason:)``: a record that
    /// no longer checks (`corruptLog`), or its segment removed (ENOENT).
    func readingRecord<T>(at position: Position, _ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch StoreError.corruptLog(let segment, let offset, let reason) where isReadOnly {
            // Checked when the store opened: its writer has most likely
            // cut the history since.
            throw StoreError.historyChanged(segment: segment, offset: offset, reason: reason)
        } catch let error as FileSystemError where isReadOnly && error.code == ENOENT {
            // Listed when the store opened: a truncate by its writer
            // removes the segments wholly past the cut.
            throw StoreError.historyChanged(
                segment: segments[position.segment].name,
                offset: position.offset,
                reason: "the segment is gone since the store opened (a truncate by its writer?); reopen the store"
            )
        }
    }
}
