import Foundation

extension Query {
    /// Records whose value at `path` the range contains: `where("price",
    /// in: 1.5...10)` (see ``QueryBound``). O(1); runs nothing.
    public consuming func `where`<B: QueryBound>(_ path: FieldPath, in range: ClosedRange<B>) -> Query {
        swiftRange(path, range.lowerBound.queryValue, range.upperBound.queryValue, upperInclusive: true)
    }

    /// Records whose value at `path` the range contains, its upper bound
    /// excluded. O(1); runs nothing.
    public consuming func `where`<B: QueryBound>(_ path: FieldPath, in range: Swift.Range<B>) -> Query {
        swiftRange(path, range.lowerBound.queryValue, range.upperBound.queryValue, upperInclusive: false)
    }

    /// Records whose value at `path` is at least `range.lowerBound`, of its
    /// kind. O(1); runs nothing.
    public consuming func `where`<B: QueryBound>(_ path: FieldPath, in range: PartialRangeFrom<B>) -> Query {
        swiftRange(path, range.lowerBound.queryValue, nil, upperInclusive: true)
    }

    /// Records whose value at `path` is at most `range.upperBound`, of its
    /// kind. O(1); runs nothing.
    public consuming func `where`<B: QueryBound>(_ path: FieldPath, in range: PartialRangeThrough<B>) -> Query {
        swiftRange(path, nil, range.upperBound.queryValue, upperInclusive: true)
    }

    /// Records whose value at `path` is below `range.upperBound`, of its
    /// kind. O(1); runs nothing.
    public consuming func `where`<B: QueryBound>(_ path: FieldPath, in range: PartialRangeUpTo<B>) -> Query {
        swiftRange(path, nil, range.upperBound.queryValue, upperInclusive: false)
    }

    /// The range condition that selects what a Swift range of doubles or
    /// dates contains, not what lies between its bounds in `Value`'s order.
    /// The two differ on NaN (`Value` puts a NaN below −∞ or above +∞, by
    /// its sign; Swift's double ranges contain none, and a query's date
    /// ranges none either) and on zero (`Value` orders −0 below +0; Swift
    /// holds them equal).
    consuming func swiftRange(_ path: FieldPath, _ lower: Value?, _ upper: Value?, upperInclusive: Bool) -> Query {
        // Both bounds of one floating kind (an adopter's may differ).
        guard let (_, make) = Self.floating(lower ?? upper!), Self.sameKind(lower ?? upper!, upper ?? lower!) else {
            if let lower, let upper { return between(path, lower, upper, upperInclusive: upperInclusive) }
            return ranged(
                path,
                lower.map { Bound(value: $0, inclusive: true) },
                upper.map { Bound(value: $0, inclusive: upperInclusive) }
            )
        }
        let low = lower.flatMap(Self.floating)?.number ?? -.infinity
        let high = upper.flatMap(Self.floating)?.number ?? .infinity
        if low.isNaN || high.isNaN { return between(path, make(0), make(0), upperInclusive: false) }
        let inclusive = upperInclusive || upper == nil
        return between(
            path,
            make(low == 0 ? -0.0 : low),
            make(high == 0 ? (inclusive ? 0.0 : -0.0) : high),
            upperInclusive: inclusive
        )
    }

    static func sameKind(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.double, .double), (.date, .date): true
        default: false
        }
    }

    /// A double or a date as its number, and the way back.
    static func floating(_ value: Value) -> (number: Double, make: (Double) -> Value)? {
        switch value {
        case .double(let number): (number, Value.double)
        case .date(let date): (date.timeIntervalSinceReferenceDate, { .date(Date(timeIntervalSinceReferenceDate: $0)) })
        default: nil
        }
    }

    /// `lower` through (or up to) `upper`, or nothing when `upper` sorts
    /// below `lower` — a range that would trap as a `ClosedRange<Value>`.
    consuming func between(_ path: FieldPath, _ lower: Value, _ upper: Value, upperInclusive: Bool) -> Query {
        let empty = upper < lower
        return ranged(
            path,
            Bound(value: lower, inclusive: true),
            Bound(value: empty ? lower : upper, inclusive: upperInclusive && !empty)
        )
    }
}
