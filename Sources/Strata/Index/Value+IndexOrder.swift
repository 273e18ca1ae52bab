extension Value: Comparable {
    /// The total order indexes sort by: by kind — null, false, true, int,
    /// double, string, bytes, date, reference, list, map — then by value:
    /// integers and dates numerically, doubles in IEEE total order (a NaN
    /// with the sign bit set first, then −∞ … −0, +0 … +∞, then a positive
    /// NaN), strings and bytes by their bytes,
    /// references by table then ID, lists element by element (a prefix
    /// first), maps as their (key, value) pairs in key order. A missing
    /// field sorts as null. Integers and doubles are different kinds:
    /// `.int(2) < .double(1)`. O(size).
    public static func < (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case let (.int(a), .int(b)): return a < b
        case let (.string(a), .string(b)): return a.utf8.lexicographicallyPrecedes(b.utf8)
        default:
            var left = IndexEntryWriter()
            left.value(lhs)
            var right = IndexEntryWriter()
            right.value(rhs)
            return left.bytes.lexicographicallyPrecedes(right.bytes)
        }
    }
}
