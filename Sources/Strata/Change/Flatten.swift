import Foundation
import PersistentCollections

/// Why a run of transactions could not be combined.
public enum FlattenError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The run has no transactions.
    case emptyRun
    /// Two changes of one record in the run cannot follow each other (the
    /// run did not apply in order).
    case incompatibleChanges(table: Key, id: RecordID, ChangeError)
    /// Two changes of one index declaration cannot follow each other.
    case incompatibleIndexChanges(table: Key, index: Key, ChangeError)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .emptyRun: return "cannot combine an empty run of transactions"
        case let .incompatibleChanges(table, id, error): return "cannot combine changes of \(table)/\(id): \(error)"
        case let .incompatibleIndexChanges(table, index, error):
            return "cannot combine changes of index \(table).\(index): \(error)"
        }
    }
}

/// One transaction with the effect of the whole run, in order:
///
///     apply(P, flatten(run)) == run.reduce(P, apply)
///
/// Each record's changes are combined into one (an insert then updates is
/// an insert of the final record; an insert then a delete is nothing), so
/// the result is as large as the set of records touched, not the run.
/// Associative: runs can be combined in pieces and the pieces combined.
/// The result keeps the summary (ID, t, time, message) of every transaction
/// it covers; its basis is the first one's, its `t` the last one's.
///
/// Each change of a record must replace what the change before it left
/// (the values an update replaces, the record a delete removes): a run
/// that could not have applied in order is refused. The first change of
/// each record is checked when the result applies; a record the run
/// inserts and then deletes is not looked at then.
///
/// - Throws: ``FlattenError`` for an empty run, or for changes that could
///   not have applied in that order.
public func flatten(_ run: some Collection<Transaction>) throws -> Transaction {
    try _flatten(run, checkingValues: true)
}

/// `flatten(_:)`; without `checkingValues`, each record's changes combine
/// without checking that each replaces what the one before left (see
/// `Change._then(_:checkingValues:)`).
func _flatten(_ run: some Collection<Transaction>, checkingValues: Bool) throws -> Transaction {
    guard let first = run.first else { throw FlattenError.emptyRun }
    if run.count == 1 { return first }
    var changes = first.changes
    var indexChanges = first.indexChanges
    var covers = first.coveredSummaries
    var significance = first.significance
    var last = first
    for transaction in run.dropFirst() {
        for (name, tableChanges) in transaction.changes {
            var combined = changes.removeValue(forKey: name) ?? PersistentMap()
            for (id, change) in tableChanges {
                if let earlier = combined[id] {
                    do {
                        combined[id] = try earlier._then(change, checkingValues: checkingValues)
                    } catch let error as ChangeError {
                        throw FlattenError.incompatibleChanges(table: name, id: id, error)
                    }
                } else {
                    combined[id] = change
                }
            }
            if !combined.isEmpty { changes[name] = combined }
        }
        for (table, tableChanges) in transaction.indexChanges {
            var combined = indexChanges[table] ?? [:]
            for (name, change) in tableChanges {
                if let earlier = combined[name] {
                    do {
                        combined[name] = try earlier.then(change)
                    } catch let error as ChangeError {
                        throw FlattenError.incompatibleIndexChanges(table: table, index: name, error)
                    }
                } else {
                    combined[name] = change
                }
            }
            indexChanges[table] = combined.isEmpty ? nil : combined
        }
        covers += transaction.coveredSummaries
        significance = max(significance, transaction.significance)
        last = transaction
    }
    return Transaction(
        id: last.id,
        t: last.t,
        basis: first.basis,
        timestamp: last.timestamp,
        message: "\(covers.count) transactions",
        significance: significance,
        metadata: [:],
        changes: changes,
        indexChanges: indexChanges,
        covers: covers
    )
}

/// The transaction that undoes `transaction`:
///
///     apply(apply(P, T), inverse(T)) == P
///
/// Inserts become deletes of the same record, deletes re-insert what they
/// removed, updates swap old and new field values; its basis is `T.t` and
/// its `t` is `T.basis`. No database is needed. O(changes).
public func inverse(_ transaction: Transaction) -> Transaction {
    Transaction(
        id: UUID(),
        t: transaction.basis,
        basis: transaction.t,
        timestamp: transaction.timestamp,
        message: "Undo: \(transaction.message)",
        significance: transaction.significance,
        metadata: transaction.metadata,
        changes: transaction.changes.mapValues { $0.mapValues(\.inverse) },
        indexChanges: transaction.indexChanges.mapValues { $0.mapValues(\.inverse) },
        reverts: transaction.id
    )
}
