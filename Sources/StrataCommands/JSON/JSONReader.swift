import Foundation
import PersistentCollections
import Strata

/// Reads one JSON text into Strata values, by hand over its UTF-8 bytes
/// (the import of a million lines costs what reading JSON costs).
///
/// Reads back what ``JSONWriter`` writes (the Strata JSON convention): an
/// object of exactly the members of a special form (`{"$bytes": …}`,
/// `{"$date": …}`, …) is that value; any other object is a map. Integers
/// that fit 64 bits are integers; other numbers are doubles. Strings must
/// be valid UTF-8 (escapes included: a lone surrogate is an error). Nesting
/// deeper than ``Value/maximumNesting`` is refused, so hostile input
/// cannot exhaust the stack.
package struct JSONReader {
    /// Why a text is not JSON, or not a value: the byte offset and what.
    package struct Failure: Error, CustomStringConvertible {
        package var offset: Int
        package var reason: String
        package var description: String { "at byte \(offset + 1): \(reason)" }
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    private var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The length of the byte order mark `text` starts with, 3 or 0 (some
    /// editors start a UTF-8 file with one): readers skip it, and a line
    /// of it alone is blank.
    static func byteOrderMarkLength(_ text: UnsafeBufferPointer<UInt8>) -> Int {
        text.count >= 3 && text[0] == 0xEF && text[1] == 0xBB && text[2] == 0xBF ? 3 : 0
    }

    /// The members of the one object `text` holds (surrounding whitespace
    /// allowed), in order, each value read as a record value.
    package static func object(_ text: UnsafeBufferPointer<UInt8>) throws(Failure) -> [(Key, Value)] {
        var reader = JSONReader(text)
        reader.index = byteOrderMarkLength(text)
        reader.skipSpace()
        guard reader.peek == UInt8(ascii: "{") else { throw reader.failure("expected an object") }
        // The record itself is no level of its fields' nesting, and its
        // members are fields whatever their order: a first one named
        // `$map` (the ID member of `--id-field '$map'`, or a field) is no
        // map's wrapper here, as it is none after another member.
        reader.depth = -1
        let members = try reader.members(wrapper: false)
        reader.skipSpace()
        guard reader.index == text.count else { throw reader.failure("unexpected text after the object") }
        return members
    }

    /// The one value `text` holds.
    package static func value(_ text: UnsafeBufferPointer<UInt8>) throws(Failure) -> Value {
        var reader = JSONReader(text)
        let value = try reader.value()
        reader.skipSpace()
        guard reader.index == text.count else { throw reader.failure("unexpected text after the value") }
        return value
    }

    /// `value` as a record ID: an integer, a string, or `{"$uuid": "…"}`.
    package static func recordID(_ value: Value) -> RecordID? {
        switch value {
        case .int(let number): return RecordID(number)
        case .string(let text): return RecordID(text)
        case .map(let map):
            guard map.count == 1, case .string(let text)? = map["$uuid"], let uuid = uuid(text) else {
                return nil
            }
            return RecordID(uuid)
        default: return nil
        }
    }

    /// The UUID `text` spells in the form UUIDs are written in: 32 hex
    /// digits, either case, in groups of 8-4-4-4-12 joined by hyphens. Nil
    /// for anything else, which `UUID(uuidString:)` may read in part or as
    /// another UUID (a sign or `0x` before a group).
    package static func uuid(_ text: String) -> UUID? {
        var count = 0
        for byte in text.utf8 {
            let isHyphen = byte == UInt8(ascii: "-")
            guard (count == 8 || count == 13 || count == 18 || count == 23) == isHyphen,
                isHyphen || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
            else { return nil }
            count += 1
        }
        return count == 36 ? UUID(uuidString: text) : nil
    }

    /// The bytes base64 `text` spells: groups of four characters of the
    /// standard alphabet, the last group ending in at most two `=`. Nil for
    /// anything else (Foundation's reader takes some such text and makes up
    /// bytes for it).
    static func base64(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 4 == 0 else { return nil }
        let padding = utf8.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return nil }
        for byte in utf8.dropLast(padding) {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                continue
            default: return nil
            }
        }
        return Data(base64Encoded: text).map { Array($0) }
    }

    /// A number's text for a message: whole when short, else its start and
    /// its length (a number of a million digits is not repeated back).
    static func shown(_ number: UnsafeBufferPointer<UInt8>) -> String {
        guard number.count > 40 else { return String(decoding: number, as: UTF8.self) }
        return String(decoding: number.prefix(24), as: UTF8.self) + "… (\(number.count) characters)"
    }

    // MARK: Values

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func failure(_ reason: String) -> Failure { Failure(offset: index, reason: reason) }

    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value() throws(Failure) -> Value {
        skipSpace()
        guard let first = peek else { throw failure("expected a value, found the end") }
        switch first {
        case UInt8(ascii: "{"):
            let members = try members()
            return try special(members)
        case UInt8(ascii: "["):
            try enter()
            defer { depth -= 1 }
            index += 1
            var items: [Value] = []
            skipSpace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return .list([])
            }
            while true {
                items.append(try value())
                skipSpace()
                switch peek {
                case UInt8(ascii: ",")?: index += 1
                case UInt8(ascii: "]")?:
                    index += 1
                    return .list(PersistentVector(items))
                default: throw failure("expected , or ] in an array")
                }
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default:
            // A printable ASCII character as itself, any other byte in hex
            // (never raw bytes on the terminal).
            let shown =
                (0x21...0x7E).contains(first) ? "'\(Unicode.Scalar(first))'" : "byte 0x" + String(first, radix: 16)
            throw failure("unexpected \(shown)")
        }
    }

    /// JSON levels allowed: a value's lists and maps, each possibly inside
    /// a special form's object (a `$map` wrapper), and at the bottom a
    /// reference's `{"$ref": {"id": {"$uuid": …}}}`, three levels that count
    /// none in the store. What the store accepts is checked when the record
    /// is read (``Value/maximumNesting``); this bounds the stack.
    static let maximumDepth = 2 * Value.maximumNesting + 4

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw failure(
                "JSON nested deeper than \(Self.maximumDepth) levels (a value may nest at most \(Value.maximumNesting) lists and maps)"
            )
        }
    }

    /// - Parameter wrapper: whether a first member `$map` wraps a map (not
    /// inside that map's own object, whose members are its keys).
    private mutating func members(wrapper: Bool = true) throws(Failure) -> [(Key, Value)] {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(Key, Value)] = []
        var seen: Set<Key> = []
        skipSpace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let nameOffset = index
            let name = try string()
            // A name given twice: JSON readers differ on which value counts.
            // (A record's own members are checked where its line is known.)
            if depth > 0, Self.repeats(Key(name), in: members, seen: &seen) {
                throw Failure(offset: nameOffset, reason: "two members named \"\(Text.safe(name))\": which value?")
            }
            skipSpace()
            guard peek == UInt8(ascii: ":") else { throw failure("expected : after a member name") }
            index += 1
            if wrapper, members.isEmpty, name == "$map" {
                // The wrapper of a map whose keys start with `$`: its object
                // is that map, never a special form.
                skipSpace()
                guard peek == UInt8(ascii: "{") else { throw failure("$map must be an object") }
                members.append((Key(name), .map(Self.map(try self.members(wrapper: false)))))
            } else {
                members.append((Key(name), try value()))
            }
            skipSpace()
            switch peek {
            case UInt8(ascii: ",")?: index += 1
            case UInt8(ascii: "}")?:
                index += 1
                return members
            default: throw failure("expected , or } in an object")
            }
        }
    }

    mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("expected \(word)") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw failure("expected \(word)")
        }
        index += count
    }

    mutating func number() throws(Failure) -> Value {
        let start = index
        var integral = true
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let lead = peek, lead >= UInt8(ascii: "0"), lead <= UInt8(ascii: "9") else {
            throw failure("expected a digit")
        }
        if lead == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        if peek == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard skipDigits() > 0 else { throw failure("expected a digit after the decimal point") }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            integral = false
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw failure("expected a digit in the exponent") }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if integral {
            guard let number = Self.integer(text) else {
                throw Failure(
                    offset: start,
                    reason: "\(Self.shown(text)) does not fit a 64-bit integer "
                        + "(write it as a string, or as a double with a point to accept rounding)"
                )
            }
            return .int(number)
        }
        if let exact = Self.shortDouble(text) { return .double(exact) }
        let string = String(decoding: text, as: UTF8.self)
        guard let double = Double(string), double.isFinite else {
            throw Failure(
                offset: start,
                reason: "\(Self.shown(text)) is not a finite double (write {\"$double\": \"inf\"} for infinity)"
            )
        }
        // Below the smallest double: read, it would be 0 (a rounding too
        // far to accept unasked, as one past the largest is refused).
        let mantissa = text.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        if double == 0, mantissa.contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) {
            throw Failure(offset: start, reason: "\(Self.shown(text)) is below the smallest double: it would read as 0")
        }
        return .double(double)
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = index
        while let digit = peek, digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    /// The integer `text` spells (an optional minus and digits), nil when
    /// it does not fit 64 bits (it is then read as a double).
    private static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var magnitude: UInt64 = 0
        let negative = text.first == UInt8(ascii: "-")
        for digit in text.dropFirst(negative ? 1 : 0) {
            let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, overflow2) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            magnitude = plus
        }
        if negative {
            if magnitude == UInt64(Int64.max) + 1 { return .min }
            return magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // The common case: no escapes, one copy of the bytes; ASCII needs
        // no validation.
        var ascii = true
        while index < bytes.count {
            let unit = bytes[index]
            if unit == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if ascii { return String(decoding: text, as: UTF8.self) }
                guard let string = String(validating: text, as: UTF8.self) else {
                    throw Failure(offset: start, reason: "a string is not valid UTF-8")
                }
                return string
            }
            if unit >= 0x80 { ascii = false }
            if unit == UInt8(ascii: "\\") { break }
            guard unit >= 0x20 else { throw failure("a control character in a string must be escaped") }
            index += 1
        }
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let unit = bytes[index]
            switch unit {
            case UInt8(ascii: "\""):
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw Failure(offset: start, reason: "a string is not valid UTF-8")
                }
                index += 1
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &utf8)
            default:
                guard unit >= 0x20 else { throw failure("a control character in a string must be escaped") }
                utf8.append(unit)
                index += 1
            }
        }
        throw Failure(offset: start - 1, reason: "a string is not closed")
    }

    private mutating func escape(into utf8: inout [UInt8]) throws(Failure) {
        guard let letter = peek else { throw failure("a string is not closed") }
        index += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(letter)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure("a lone high surrogate \\u escape") }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("a high surrogate without its low half") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw failure("a lone low surrogate \\u escape")
            }
            utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default: throw failure("an unknown escape \\\(Unicode.Scalar(letter))")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
        var scalar: UInt32 = 0
        for _ in 0..<4 {
            let digit = bytes[index]
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = digit - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            scalar = scalar << 4 | UInt32(nibble)
            index += 1
        }
        return scalar
    }

    // MARK: Special forms

    /// The value an object stands for: a special form, else a map.
    private func special(_ members: [(Key, Value)]) throws(Failure) -> Value {
        guard let first = members.first, first.0.string.utf8.first == UInt8(ascii: "$") else {
            return .map(Self.map(members))
        }
        switch (first.0.string, members.count) {
        case ("$bytes", 1):
            guard case .string(let text) = first.1, let bytes = Self.base64(text) else {
                throw failure("$bytes must be a base64 string")
            }
            return .bytes(bytes)
        case ("$date", 1), ("$seconds", 1), ("$date", 2), ("$seconds", 2):
            // `$date`, `$seconds` or both, each once.
            if members.count == 2 {
                let second = members[1].0
                guard second != first.0, second == "$date" || second == "$seconds" else { break }
            }
            if let seconds = members.first(where: { $0.0 == "$seconds" })?.1 {
                let value: Double
                switch seconds {
                case .double(let number): value = number
                case .int(let number):
                    // A date's seconds are a double: an integer it cannot
                    // hold would be rounded.
                    guard let exact = Double(exactly: number) else {
                        throw failure("$seconds \(number) is not exact as a date's seconds (a double)")
                    }
                    value = exact
                default: throw failure("$seconds must be a number")
                }
                // The seconds are exact; a `$date` beside them (hand-edited,
                // say) must not be silently overridden.
                if let date = members.first(where: { $0.0 == "$date" })?.1 {
                    // One reading of the text says both whether it is a date and whether it agrees.
                    guard case .string(let text) = date, let agrees = JSONDates.text(text, agreesWith: value) else {
                        throw failure("$date must be an ISO 8601 date")
                    }
                    guard agrees else {
                        throw failure(
                            "$date and $seconds name different times; give one of them (the seconds are exact)"
                        )
                    }
                }
                return .date(Date(timeIntervalSinceReferenceDate: value))
            }
            guard case .string(let text) = first.1, let date = JSONDates.parse(text) else {
                throw failure("$date must be an ISO 8601 date")
            }
            return .date(date)
        case ("$double", 1):
            let expected = "$double must be nan, nan:<bits in hex>, inf or -inf"
            guard case .string(let text) = first.1 else { throw failure(expected) }
            switch text {
            case "nan": return .double(.nan)
            case "inf": return .double(.infinity)
            case "-inf": return .double(-.infinity)
            default:
                // A NaN with its exact bits (a sign or a payload).
                guard text.hasPrefix("nan:"), text.utf8.count <= 20,
                    let bits = UInt64(text.dropFirst(4), radix: 16), Double(bitPattern: bits).isNaN
                else { throw failure(expected) }
                return .double(Double(bitPattern: bits))
            }
        case ("$ref", 1):
            guard case .map(let reference) = first.1, reference.count == 2,
                case .string(let table)? = reference["table"],
                let idValue = reference["id"], let id = Self.recordID(idValue)
            else { throw failure("$ref must be {\"table\": name, \"id\": id}") }
            return .reference(RecordReference(table: Key(table), id: id))
        case ("$map", 1):
            guard case .map = first.1 else { throw failure("$map must be an object") }
            return first.1
        default: break
        }
        return .map(Self.map(members))
    }

    /// Whether `name` is among `members`' names: compared one by one up to
    /// 16 members, then through `seen`, which holds them all from there.
    private static func repeats(_ name: Key, in members: [(Key, Value)], seen: inout Set<Key>) -> Bool {
        if members.count < 16 { return members.contains { $0.0 == name } }
        if seen.isEmpty { seen = Set(members.lazy.map(\.0)) }
        return !seen.insert(name).inserted
    }

    /// A map of the members (whose names ``members(wrapper:)`` checked are distinct).
    private static func map(_ members: [(Key, Value)]) -> PersistentMap<Key, Value> {
        var map = PersistentMap<Key, Value>()
        for (name, value) in members { map[name] = value }
        return map
    }
}
