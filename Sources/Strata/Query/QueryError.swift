/// Why a query cannot run. Names the table, path or order at fault.
///
/// A query with several mistakes reports one: the last found while it was
/// built (an invalid path, a second range), else a negative limit or
/// offset (of the last `limit` given: a later one replaces it), else a
/// range and an equality on one path, else what running it finds (no
/// such table, no index).
public enum QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The table has no records and no declared index in this value.
    case unknownTable(Key)
    /// A field path with an empty field or key.
    case invalidPath(FieldPath)
    /// A second range, or a range and an equality on one path.
    case conflictingConditions(FieldPath)
    /// No declared index serves these conditions and order, and the query
    /// has no `filter` (which opts into a scan).
    case noIndex(table: Key, conditions: [FieldPath], order: FieldPath?, indexes: [IndexDefinition])
    /// A negative limit or offset.
    case invalidLimit(limit: Int?, offset: Int)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .unknownTable(let table): return "no table \(table) in this database value"
        case .invalidPath(let path): return "invalid field path '\(path)': fields and keys cannot be empty"
        case .conflictingConditions(let path): return "more than one range, or a range and an equality, on \(path)"
        case let .noIndex(table, conditions, order, indexes):
            // A path asked for that prints as a declared one but is not
            // (a field named in another Unicode normalization): every path
            // is shown exactly.
            let asked = conditions + (order.map { [$0] } ?? [])
            let exact = asked.contains { path in
                indexes.contains { $0.fields.contains { $0 != path && $0.description == path.description } }
            }
            let render = { (path: FieldPath) in exact ? path.exactDescription : path.description }
            let wanted = conditions.map(render).joined(separator: ", ")
            let ordered = order.map { ", ordered by \(render($0))" } ?? ""
            let declared = indexes.isEmpty ? "none" : indexes.map { $0._rendered(exact: exact) }.joined(separator: "; ")
            return "no index of \(table) serves (\(wanted))\(ordered); declared: \(declared). "
                + "Declare one with these fields first (equalities, then the range or order field), or add a filter to scan"
        case let .invalidLimit(limit, offset):
            return "limit \(limit.map(String.init) ?? "none") and offset \(offset) must not be negative"
        }
    }
}
