import Strata

/// A JSON document the commands print for `--json`: object members keep
/// the order they were added in, so output is stable and diffable.
enum JSON {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])
    /// A record's value, written in the Strata JSON convention (see ``JSONWriter/value(_:)``).
    case value(Strata.Value)
    /// Text already encoded as JSON.
    case encoded([UInt8])

    static func int(_ value: Int) -> JSON { .int(Int64(value)) }
    static func optional(_ text: String?) -> JSON { text.map(JSON.string) ?? .null }
}
