import Foundation

/// A field of a record, optionally followed by keys into nested maps:
/// `FieldPath("rss", "feeds", "42", "editedName")` names the value at
/// `record["rss"]["feeds"]["42"]["editedName"]`. Its parts are ``Key``s,
/// compared by their UTF-8 bytes.
public struct FieldPath: Hashable, Sendable, CustomStringConvertible {
    /// The record field the path starts at.
    public var field: Key
    /// Keys into nested maps below the field; empty for the field itself.
    public var keys: [Key]

    /// A path from a field and nested keys.
    public init(_ field: Key, _ keys: Key...) {
        self.field = field
        self.keys = keys
    }

    /// A path from a field and nested keys.
    public init(field: Key, keys: [Key]) {
        self.field = field
        self.keys = keys
    }

    /// Parses `a.b.c` (no escaping: names containing dots need the other
    /// initializers). Nil for an empty string or an empty component.
    public init?(dotted text: String) {
        // Most paths name a field: no split, no array of parts.
        if !Self.containsDot(text) {
            guard !text.isEmpty else { return nil }
            self.init(field: Key(text), keys: [])
            return
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { Key(String($0)) }
        guard let first = parts.first, !parts.contains(where: { $0.utf8Count == 0 }) else { return nil }
        self.init(field: first, keys: Array(parts.dropFirst()))
    }

    /// Whether `text` has a dot: one `memchr` over contiguous bytes (a
    /// literal or a native string), where the UTF-8 view's `contains` steps
    /// through a generic iterator (a few hundred instructions for a field
    /// name, on every query condition).
    static func containsDot(_ text: String) -> Bool {
        let dot = UInt8(ascii: ".")
        let found = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(base, Int32(dot), bytes.count) != nil
        }
        return found ?? text.utf8.contains(dot)
    }

    /// Whether the path names a whole field.
    public var isField: Bool { keys.isEmpty }

    /// Whether the two paths name the same field and keys. O(length); a
    /// field's path (no keys) compares without the arrays' equality.
    @inline(__always)
    public static func == (lhs: FieldPath, rhs: FieldPath) -> Bool {
        guard lhs.field == rhs.field else { return false }
        return lhs.keys.isEmpty ? rhs.keys.isEmpty : lhs.keys == rhs.keys
    }

    /// Hashes the field, then the keys. O(length).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(field)
        hasher.combine(keys)
    }

    /// Whether queries can name the path: its field and keys are not empty.
    var isNameable: Bool { field.utf8Count > 0 && !keys.contains { $0.utf8Count == 0 } }

    /// The dotted form, `a.b.c`, as written (an empty part is empty:
    /// `a..b`); a part holding a dot, a quote, a backslash or a character
    /// that would not show is quoted and escaped: the field `a.b` prints
    /// `"a.b"`, the path from `a` to `b` prints `a.b`.
    public var description: String { _rendered(exact: false) }

    /// As ``description``, with every part outside printable ASCII quoted
    /// and its other scalars escaped (`"cafe\u{301}"`): two different
    /// paths never print alike. What messages show when two paths they
    /// name would otherwise print alike. O(length).
    public var exactDescription: String { _rendered(exact: true) }

    private func _rendered(exact: Bool) -> String {
        ([field] + keys).map { part in
            let text = part.string
            let plain = text.unicodeScalars.allSatisfy { scalar in
                switch scalar {
                case ".", "\"", "\\": return false
                case " "..."~": return true
                default: return !exact && !scalar.properties.generalCategory.isInvisible
                }
            }
            guard !plain else { return text }
            return Value.quoted(text, exact: exact)
        }.joined(separator: ".")
    }
}

extension Unicode.GeneralCategory {
    /// Control, format, separator, space (the ASCII space aside, which
    /// callers take first), private-use, surrogate and unassigned scalars:
    /// what a message must not print raw (a no-break space would pass for
    /// a space).
    var isInvisible: Bool {
        switch self {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse,
            .unassigned:
            return true
        default:
            return false
        }
    }
}

extension FieldPath: ExpressibleByStringLiteral {
    /// A path from a dotted literal, `"rss.feeds"`. A literal with an empty
    /// part (`""`, `"a..b"`, `"a."`) names the empty field or key there, as
    /// ``init(field:keys:)`` would; a query or index declaration given such
    /// a path throws (``QueryError/invalidPath(_:)``,
    /// ``ApplyError/invalidIndex(table:index:reason:)``), naming it as written.
    public init(stringLiteral value: String) {
        if let path = FieldPath(dotted: value) {
            self = path
            return
        }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false).map { Key(String($0)) }
        self.init(field: parts[0], keys: Array(parts.dropFirst()))
    }
}
