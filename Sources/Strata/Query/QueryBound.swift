import Foundation

/// A Swift type whose values can bound a range condition of a ``Query``:
/// `Int`, `Int64`, `Double` and `Date`.
///
/// A range of them selects what the Swift range contains, of the kind its
/// bounds make: `where("price", in: 1.5...10)` is the doubles from 1.5
/// through 10.0, `where("n", in: low..<high)` takes `Int` variables as they
/// are. One exception: no range selects a NaN, where Swift's date ranges
/// contain dates of NaN seconds (`Date` takes `<=` from `Comparable`). A
/// range of `Value`s must not mix kinds — every int sorts below
/// every double in ``Value``'s order, so `Value.double(1.5)...Value.int(10)`
/// traps in `ClosedRange` — and ints and doubles stay different kinds
/// here too: a range of doubles does not match a field holding `.int(5)`.
///
/// Strings are not bounds: an index orders them by their UTF-8 bytes,
/// and Swift's `<` by canonical equivalence, so a `ClosedRange<String>`
/// could hold what the index does not (`"e\u{301}"..."f"` traps in Swift;
/// as `Value`s it is a valid range). Write string ranges as `Value`s.
///
/// An adopter's ``queryValue`` must be of one `Value` kind for all its
/// values and follow the type's `<`; where it does not, a range selects
/// what lies between its bounds in ``Value``'s order, or nothing when they
/// are the other way round.
public protocol QueryBound: Comparable {
    /// The value a field holds when it equals this one. O(1).
    var queryValue: Value { get }
}

extension Int: QueryBound {
    /// `.int(Int64(self))`. O(1).
    public var queryValue: Value { .int(Int64(self)) }
}

extension Int64: QueryBound {
    /// `.int(self)`. O(1).
    public var queryValue: Value { .int(self) }
}

extension Double: QueryBound {
    /// `.double(self)`. O(1).
    public var queryValue: Value { .double(self) }
}

extension Date: QueryBound {
    /// `.date(self)`. O(1).
    public var queryValue: Value { .date(self) }
}
