import Foundation

extension Value: CustomStringConvertible {
    /// A literal-like rendering: `null`, `true`, `42`, `"text"`, `[1, 2]`,
    /// `["a": 1, "b": 2]` (a map's entries in key order, so equal values
    /// print alike), a date as `2026-11-24T06:00:00.25Z`. Two different
    /// dates never print alike; two strings equal to a reader but not in
    /// their bytes (`"café"` in NFC and in NFD) do, and so do byte values
    /// of one length: ``exactDescription`` tells them apart. O(size), at
    /// any depth.
    public var description: String { _rendered(exact: false) }

    /// A rendering in which two different values never print alike: as
    /// ``description``, with every scalar of a string or map key outside
    /// printable ASCII escaped (`"cafe\u{301}"`), bytes in hexadecimal
    /// (`<63 61 66>`) and doubles with their NaN payloads. What a change
    /// prints when both sides' descriptions are the same. O(size).
    public var exactDescription: String { _rendered(exact: true) }

    private func _rendered(exact: Bool) -> String {
        switch self {
        case .null: return "null"
        case .bool(let v): return String(v)
        case .int(let v): return String(v)
        case .double(let v): return exact ? v.debugDescription : String(v)
        case .string(let v): return exact ? Self.escaped(v) : String(reflecting: v)
        case .bytes(let v):
            guard exact else { return "<\(v.count) bytes>" }
            return "<" + v.map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ") + ">"
        case .date(let v): return Self.describe(v)
        case .reference(let v):
            guard exact else { return "@\(v)" }
            if case .string(let id) = v.id.kind { return "@\(Self.escaped(v.table.string))/\(Self.escaped(id))" }
            return "@\(Self.escaped(v.table.string))/\(v.id)"
        case .list, .map: return _nestedDescription(exact: exact)
        }
    }

    /// `text` quoted, with `\`, `"` and every scalar outside printable
    /// ASCII escaped.
    static func escaped(_ text: String) -> String { quoted(text, exact: true) }

    /// `text` quoted for a message: `\`, `"` and what would not show or
    /// would pass for something else (control and format characters,
    /// separators and spaces other than the space, private-use,
    /// surrogate and unassigned scalars) escaped; other scalars, accented
    /// and non-Latin letters among them, as they are. `exact`: every
    /// scalar outside printable ASCII escaped, as ``escaped(_:)``.
    static func quoted(_ text: String, exact: Bool = false) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case " "..."~": result.unicodeScalars.append(scalar)
            case "\0" where !exact: result += "\\0"
            case "\n" where !exact: result += "\\n"
            case "\t" where !exact: result += "\\t"
            case "\r" where !exact: result += "\\r"
            default:
                if exact || scalar.properties.generalCategory.isInvisible {
                    result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// The description of a list or map, written without recursion (a
    /// value in memory may nest thousands of levels), a map's entries in
    /// key order; cut short past `limit` UTF-8 bytes, with the number of
    /// its entries. O(size).
    private func _nestedDescription(exact: Bool, limit: Int = .max) -> String {
        var text = ""
        // Per list or map open: whether its next entry is its first.
        var isFirst: [Bool] = []
        var afterKey = false
        var isCut = false
        _walk { part in
            guard !isCut else { return }
            defer { isCut = text.utf8.count > limit }
            if case .end = part {
                text += "]"
                isFirst.removeLast()
                return
            }
            if afterKey {
                afterKey = false  // a map's value follows its key
            } else if let first = isFirst.last {
                if !first { text += ", " }
                isFirst[isFirst.count - 1] = false
            }
            switch part {
            case .scalar(let scalar):
                text += scalar._scalarSummary(exact: exact, limit: Swift.max(16, limit - text.utf8.count))
            case .list:
                text += "["
                isFirst.append(true)
            case .map(let count):
                text += count == 0 ? "[:" : "["
                isFirst.append(true)
            case .key(let key):
                // Rendered as a string value is.
                text +=
                    Value.string(key.string)._scalarSummary(
                        exact: exact,
                        limit: Swift.max(16, limit - text.utf8.count)
                    ) + ": "
                afterKey = true
            case .end: break
            }
        }
        guard isCut else { return text }
        switch self {
        case .list(let elements): return text + "… (a list of \(elements.count))"
        case .map(let entries): return text + "… (a map of \(entries.count))"
        default: return text + "…"
        }
    }

    /// A rendering of about `limit` characters at most: the
    /// ``description`` (``exactDescription`` when `exact`), cut short
    /// with `…` and the value's size when longer. For messages, which stay
    /// short whatever the values they name. O(limit) for a string or
    /// bytes; O(size) for a list or map (walked whole, written in part).
    package func _summary(exact: Bool, limit: Int) -> String {
        switch self {
        case .list, .map: return _nestedDescription(exact: exact, limit: limit)
        default: return _scalarSummary(exact: exact, limit: limit)
        }
    }

    /// `_summary(exact:limit:)` for a value that is not a list or map.
    private func _scalarSummary(exact: Bool, limit: Int) -> String {
        switch self {
        case .string(let text) where text.utf8.count > limit:
            return Self._quotedSummary(text, exact: exact, limit: limit)
        case .bytes(let bytes) where exact && 3 * bytes.count > limit:
            let head = bytes.prefix(Swift.max(1, limit / 3)).map { String($0, radix: 16).leftPadded(to: 2) }
            return "<" + head.joined(separator: " ") + " … (\(bytes.count) bytes)>"
        case .reference:
            // A long table name or string ID is cut in the rendering.
            let text = _rendered(exact: exact)
            return text.utf8.count > limit ? text.prefix(limit) + "… (\(text.utf8.count) bytes)" : text
        default:
            return _rendered(exact: exact)
        }
    }

    /// `text` quoted (escaped when `exact`) and cut to about `limit`
    /// characters, with its size: the whole is never escaped.
    private static func _quotedSummary(_ text: String, exact: Bool, limit: Int) -> String {
        var head = String.UnicodeScalarView()
        head.append(contentsOf: text.unicodeScalars.prefix(limit / 2))
        var quoted = exact ? escaped(String(head)) : String(reflecting: String(head))
        quoted.removeLast()  // the closing quote
        // Escapes take up to 10 characters a scalar.
        if quoted.count > limit { quoted = String(quoted.prefix(limit)) }
        return quoted + "…\" (\(text.utf8.count) bytes)"
    }

    /// Renderings of `a` and `b`, of about `limit` characters each, for a
    /// message that names both: the descriptions, the exact ones when
    /// those print alike but the values differ, and with the CRC32C of each
    /// value's encoding when those print alike too (values that agree in
    /// their first `limit` characters): the same in every run. Nil for nil.
    package static func _contrasting(_ a: Value?, _ b: Value?, limit: Int = 200) -> (String?, String?) {
        var pair = (a?._summary(exact: false, limit: limit), b?._summary(exact: false, limit: limit))
        guard a != b, pair.0 == pair.1 else { return pair }
        pair = (a?._summary(exact: true, limit: limit), b?._summary(exact: true, limit: limit))
        guard pair.0 == pair.1, let a, let b else { return pair }
        let checksum = { (value: Value) in
            "crc32c " + String(CRC32C.checksum(BinaryCodec.encode(value)), radix: 16).leftPadded(to: 8)
        }
        return (pair.0.map { "\($0) (\(checksum(a)))" }, pair.1.map { "\($0) (\(checksum(b)))" })
    }

    /// ISO 8601 in UTC with the fraction digits that tell the date apart
    /// from every other (`2001-01-01T00:00:10.5Z`). As its seconds
    /// (`Date(timeIntervalSinceReferenceDate: 1e+20)`): a date no
    /// four-digit year can say, −0, NaN (with its payload), and one within
    /// 0.0001 s of 2001 whose digits Swift writes with an exponent. A
    /// formatter clamps far dates to its limits, turns NaN into a year and
    /// drops the fraction, so an edit would print as "X → X".
    static func describe(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        let exact = "Date(timeIntervalSinceReferenceDate: \(seconds.debugDescription))"
        // 1583-01-01 ..< 10000-01-01, in seconds since 2001; NaN fails.
        guard seconds >= -13_190_860_800, seconds < 252_423_993_600, seconds != 0 || seconds.sign == .plus,
            case let digits = String(seconds.magnitude), !digits.contains("e"),
            let point = digits.firstIndex(of: ".")
        else { return exact }
        // The shortest digits that read back as this double: two doubles
        // never share them. They never end in a zero, unless they are "0".
        var fraction = Array(digits.utf8[digits.utf8.index(after: point)...])
        let text = Date(timeIntervalSinceReferenceDate: seconds.rounded(.down)).formatted(.iso8601)
        guard text.hasSuffix("Z") else { return exact }
        if fraction == [UInt8(ascii: "0")] { return text }
        if seconds < 0 {
            // The text counts from the second below: 1 − 0.digits, digit by
            // digit (10 − the last, which is not 0; 9 − each other).
            for i in fraction.indices {
                let nine = i == fraction.count - 1 ? UInt8(ascii: "9") + 1 : UInt8(ascii: "9")
                fraction[i] = nine - fraction[i] + UInt8(ascii: "0")
            }
        }
        return text.dropLast() + "." + String(decoding: fraction, as: UTF8.self) + "Z"
    }
}

extension String {
    /// This string with zeros before it, to at least `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
