import Foundation
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
    /// A time as ISO 8601, or its seconds since 2001 when ISO 8601 cannot say it.
    static func time(_ date: Foundation.Date) -> JSON {
        JSONDates.iso8601(date).map(JSON.string) ?? .double(date.timeIntervalSinceReferenceDate)
    }
}
