/// A question about one table of one database value — current or past —
/// answered through its declared indexes:
///
///     let tracks = try library.query("songs")
///         .where("album", equals: "Blue River")
///         .order(by: "track")
///         .records()
///
/// Conditions are equalities on a prefix of an index's fields and at most
/// one range on the next field; the order is that field's (or an equal
/// field's), ascending or descending; `limit`/`offset` page in O(log n).
/// ``explain()`` names the index. A ``filter(_:)`` adds a predicate on
/// records (applied to what the index yields, or to a scan of the table
/// when no index serves the conditions). A query is a value: each method
/// returns a refined copy, and nothing runs until a result is asked for.
public struct Query: Sendable {
    /// A bound of a range condition.
    struct Bound: Sendable {
        var value: Value
        var inclusive: Bool
    }

    /// An equality condition. A struct, not a tuple: an array of tuples is
    /// destroyed through the runtime's generic tuple witness, a struct's
    /// through its own (every query frees its conditions).
    struct Equality: Sendable {
        var path: FieldPath
        var value: Value
    }

    /// A range condition on one path.
    struct Range: Sendable {
        var path: FieldPath
        var lower: Bound?
        var upper: Bound?
    }

    /// The value queried.
    public let database: Database
    /// The table queried.
    public let table: Key
    var equalities: [Equality] = []
    var range: Range?
    var ordering: (path: FieldPath, descending: Bool)?
    var isReversed = false
    var limitCount: Int?
    var offsetCount = 0
    var filters: [@Sendable (Record) -> Bool] = []
    /// A mistake found while the query was built, thrown when it runs.
    var deferredError: QueryError?

    init(database: Database, table: Key) {
        self.database = database
        self.table = table
    }

    /// Records whose value at `path` equals `value` (a missing field equals
    /// `.null`).
    public consuming func `where`(_ path: FieldPath, equals value: Value) -> Query {
        // A range on the same path is refused when the query runs
        // (`plan()`): testing it here (`range?.path == path`, then an
        // assignment) made the compiler return a copy of the query and
        // destroy the original, on every condition of every query.
        check(path)
        equalities.append(Equality(path: path, value: value))
        return self
    }

    /// Records whose value at `path` lies in `range` (``Value``'s order).
    public consuming func `where`(_ path: FieldPath, in range: ClosedRange<Value>) -> Query {
        ranged(path, Bound(value: range.lowerBound, inclusive: true), Bound(value: range.upperBound, inclusive: true))
    }

    /// Records whose value at `path` lies in `range`, its upper bound excluded.
    public consuming func `where`(_ path: FieldPath, in range: Swift.Range<Value>) -> Query {
        ranged(path, Bound(value: range.lowerBound, inclusive: true), Bound(value: range.upperBound, inclusive: false))
    }

    /// Records whose value at `path` is at least `range.lowerBound`.
    public consuming func `where`(_ path: FieldPath, in range: PartialRangeFrom<Value>) -> Query {
        ranged(path, Bound(value: range.lowerBound, inclusive: true), nil)
    }

    /// Records whose value at `path` is at most `range.upperBound`.
    public consuming func `where`(_ path: FieldPath, in range: PartialRangeThrough<Value>) -> Query {
        ranged(path, nil, Bound(value: range.upperBound, inclusive: true))
    }

    /// Records whose value at `path` is below `range.upperBound`.
    public consuming func `where`(_ path: FieldPath, in range: PartialRangeUpTo<Value>) -> Query {
        ranged(path, nil, Bound(value: range.upperBound, inclusive: false))
    }

    /// Records whose value at `path` is above `value`.
    public consuming func `where`(_ path: FieldPath, greaterThan value: Value) -> Query {
        ranged(path, Bound(value: value, inclusive: false), nil)
    }

    /// Results ordered by the value at `path` (then by the index's later
    /// fields and the record ID), ascending unless `descending`.
    public consuming func order(by path: FieldPath, descending: Bool = false) -> Query {
        check(path)
        ordering = (path, descending)
        return self
    }

    /// The same results in the opposite order.
    public consuming func reversed() -> Query {
        isReversed.toggle()
        return self
    }

    /// At most `count` results, after skipping `offset`. O(log n) to skip
    /// on an index without filters.
    public consuming func limit(_ count: Int, offset: Int = 0) -> Query {
        // Checked when the query runs (`plan()`): a later `limit` replaces
        // this one, mistake included.
        limitCount = count
        offsetCount = offset
        return self
    }

    /// Only records for which `isIncluded` is true. Not indexed: it is
    /// checked on every record the index yields, or on every record of the
    /// table when no index serves the other conditions (``explain()``
    /// says "scan").
    public consuming func filter(_ isIncluded: @escaping @Sendable (Record) -> Bool) -> Query {
        filters.append(isIncluded)
        return self
    }

    // The refinements consume the query they refine: a chain of them moves
    // one value along instead of copying it (and its arrays) at each step.

    mutating func check(_ path: FieldPath) {
        if !path.isNameable { deferredError = .invalidPath(path) }
    }

    consuming func ranged(_ path: FieldPath, _ lower: Bound?, _ upper: Bound?) -> Query {
        check(path)
        // An equality on the same path is refused by `plan()`.
        if range != nil { deferredError = .conflictingConditions(path) }
        range = Range(path: path, lower: lower, upper: upper)
        return self
    }
}

extension Database {
    /// A query on table `table` of this value. O(1); see ``Query``.
    public func query(_ table: Key) -> Query {
        Query(database: self, table: table)
    }
}
