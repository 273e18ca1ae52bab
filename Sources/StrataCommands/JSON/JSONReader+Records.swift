import Foundation
import Strata

/// What a line of `strata import` holds besides its fields: the member
/// naming the record's ID, and the table when `--table` gave it (else the
/// line's `$table` member does).
package struct RecordLineFormat {
    let idField: Key
    let table: Key?
    /// `idField`'s bytes, compared with each member's name.
    let idFieldBytes: [UInt8]

    package init(idField: Key, table: Key?) {
        self.idField = idField
        self.table = table
        idFieldBytes = Array(idField.string.utf8)
    }
}

extension JSONReader {
    /// The record a line of `format` holds, read straight into `writer`'s
    /// packed form (no `Value` per field), or nil when the line is not in
    /// the shape this reads; the caller then reads it with ``object(_:)``,
    /// which also words any error. Nil never means the line is wrong.
    ///
    /// The shape is the common part of what `strata export` writes: every
    /// member once, none named `$map`, names and strings without escapes;
    /// values that are null, booleans, numbers, strings, lists of these,
    /// `{"$date": …, "$seconds": …}` (either or both) and
    /// `{"$ref": {"table": …, "id": …}}` to a table some record of the
    /// process already names; IDs (the record's and references') that are
    /// integers or strings. Maps, bytes, `$double` and UUIDs are left to
    /// the general reading. What this reads, it reads as ``object(_:)`` and
    /// `Record(fields:)` do: the same record, byte for byte. O(n).
    package static func record(
        _ text: UnsafeBufferPointer<UInt8>,
        _ format: RecordLineFormat,
        into writer: inout RecordWriter
    ) -> ParsedRecord? {
        var reader = JSONReader(text)
        guard let line = reader.recordLine(format, &writer) else {
            writer.discard()
            return nil
        }
        return line
    }

    private mutating func recordLine(
        _ format: RecordLineFormat,
        _ writer: inout RecordWriter
    ) -> ParsedRecord? {
        index = Self.byteOrderMarkLength(bytes)
        skipSpace()
        guard peek == UInt8(ascii: "{") else { return nil }
        index += 1
        var id: RecordID?
        var lineTable: Key?
        skipSpace()
        if peek == UInt8(ascii: "}") {
            index += 1
        } else {
            members: while true {
                skipSpace()
                // A member named `$map` is left to the general reading (a
                // plain member there too, wherever it stands).
                guard let name = quoted(), !Self.same(name, "$map"), separator() else { return nil }
                if Self.same(name, format.idFieldBytes) {
                    guard id == nil, let recordID = plainRecordID() else { return nil }
                    id = recordID
                } else if Self.same(name, "$table") {
                    guard format.table == nil, lineTable == nil, let text = quoted(),
                        let table = Key(utf8: text)
                    else { return nil }
                    lineTable = table
                } else {
                    guard writer.field(utf8: name), fieldValue(&writer, depth: 0) else { return nil }
                }
                guard let more = next(closing: UInt8(ascii: "}")) else { return nil }
                if !more { break members }
            }
        }
        skipSpace()
        guard index == bytes.count, let id, let table = format.table ?? lineTable, let record = writer.record()
        else { return nil }
        return ParsedRecord(table: table, id: id, record: record)
    }

    /// Writes the value here (of a field or a list item `depth` lists
    /// down); false when it is not of the shape ``record(_:_:into:)`` reads.
    private mutating func fieldValue(_ writer: inout RecordWriter, depth: Int) -> Bool {
        skipSpace()
        switch peek {
        case UInt8(ascii: "\"")?:
            guard let text = quoted() else { return false }
            return writer.string(text)
        case UInt8(ascii: "[")?:
            // Deeper than a store takes: the general reader words the error.
            guard depth < Value.maximumNesting else { return false }
            index += 1
            let start = writer.beginList()
            var count = 0
            skipSpace()
            if peek == UInt8(ascii: "]") {
                index += 1
            } else {
                items: while true {
                    guard fieldValue(&writer, depth: depth + 1) else { return false }
                    count += 1
                    guard let more = next(closing: UInt8(ascii: "]")) else { return false }
                    if !more { break items }
                }
            }
            writer.endList(start, count: count)
            return true
        case UInt8(ascii: "{")?:
            return specialForm(&writer)
        case UInt8(ascii: "t")?:
            guard (try? literal("true")) != nil else { return false }
            writer.bool(true)
        case UInt8(ascii: "f")?:
            guard (try? literal("false")) != nil else { return false }
            writer.bool(false)
        case UInt8(ascii: "n")?:
            guard (try? literal("null")) != nil else { return false }
            writer.null()
        default:
            switch try? number() {
            case .int(let value)?: writer.int(value)
            case .double(let value)?: writer.double(value)
            default: return false
            }
        }
        return true
    }

    /// Writes a date or a reference in the form `strata export` writes
    /// them; false for any other object (a map, another special form).
    private mutating func specialForm(_ writer: inout RecordWriter) -> Bool {
        index += 1
        skipSpace()
        guard let first = quoted(), separator() else { return false }
        if Self.same(first, "$ref") {
            guard let (table, id) = referenceBody(), writer.reference(tableUTF8: table, id: id) == true else {
                return false
            }
            return closing()
        }
        // `$date`, `$seconds` or both, each once; the seconds are the exact
        // value, and a `$date` beside them must say the same time.
        var date: UnsafeBufferPointer<UInt8>?
        var seconds: Double?
        var name = first
        while true {
            if Self.same(name, "$date"), date == nil {
                guard let text = quoted() else { return false }
                date = text
            } else if Self.same(name, "$seconds"), seconds == nil {
                skipSpace()
                switch try? number() {
                // Not exact as a double: the general reading refuses it.
                case .int(let value)?:
                    guard let exact = Double(exactly: value) else { return false }
                    seconds = exact
                case .double(let value)?: seconds = value
                default: return false
                }
            } else {
                return false
            }
            skipSpace()
            guard peek == UInt8(ascii: ",") else { break }
            index += 1
            skipSpace()
            guard let next = quoted(), separator() else { return false }
            name = next
        }
        guard closing() else { return false }
        if let seconds {
            // Any other text goes the general way, which names the problem.
            guard date.map({ JSONDates.text($0, agreesWith: seconds) == true }) ?? true else { return false }
            writer.date(seconds)
            return true
        }
        guard let date, let text = String(validating: date, as: UTF8.self), let parsed = JSONDates.parse(text) else {
            return false
        }
        writer.date(parsed.timeIntervalSinceReferenceDate)
        return true
    }

    /// `{"table": name, "id": id}`, each once, in either order.
    private mutating func referenceBody() -> (table: UnsafeBufferPointer<UInt8>, id: RecordID)? {
        skipSpace()
        guard peek == UInt8(ascii: "{") else { return nil }
        index += 1
        var table: UnsafeBufferPointer<UInt8>?
        var id: RecordID?
        for position in 0..<2 {
            skipSpace()
            guard let name = quoted(), separator() else { return nil }
            if Self.same(name, "table"), table == nil {
                guard let text = quoted() else { return nil }
                table = text
            } else if Self.same(name, "id"), id == nil {
                guard let recordID = plainRecordID() else { return nil }
                id = recordID
            } else {
                return nil
            }
            skipSpace()
            guard peek == UInt8(ascii: position == 0 ? "," : "}") else { return nil }
            index += 1
        }
        guard let table, let id else { return nil }
        return (table, id)
    }

    /// An integer or a string (not `{"$uuid": …}`), as a record ID.
    private mutating func plainRecordID() -> RecordID? {
        skipSpace()
        if peek == UInt8(ascii: "\"") {
            guard let text = quoted(), let string = String(validating: text, as: UTF8.self) else { return nil }
            return RecordID(string)
        }
        guard case .int(let value)? = try? number() else { return nil }
        return RecordID(value)
    }

    /// The bytes of the string here, without its quotes; nil when there
    /// is none or it has an escape or a control character (or is not
    /// closed). Non-ASCII bytes are left to the caller to check.
    private mutating func quoted() -> UnsafeBufferPointer<UInt8>? {
        skipSpace()
        guard peek == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        // Eight bytes at a time up to the first that needs a look (see
        // `needsLook`), which the loop below then reads.
        if let base = bytes.baseAddress {
            while end &+ 8 <= bytes.count {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + end).loadUnaligned(as: UInt64.self))
                let flagged = Self.needsLook(word)
                if flagged != 0 {
                    end &+= flagged.trailingZeroBitCount &>> 3
                    break
                }
                end &+= 8
            }
        }
        while end < bytes.count {
            let unit = bytes[end]
            if unit == UInt8(ascii: "\"") {
                index = end + 1
                return UnsafeBufferPointer(rebasing: bytes[start..<end])
            }
            if unit == UInt8(ascii: "\\") || unit < 0x20 { return nil }
            end += 1
        }
        return nil
    }

    /// The high bit of each byte of `word` (eight bytes of text, the first
    /// in the low bits) that is a quote, a backslash or a control character
    /// (below 0x20), and possibly of bytes after such a byte: the lowest bit
    /// set, if any, marks the first such byte exactly. (A byte's test
    /// subtracts from it; a borrow out of a byte that passes can only flag
    /// the bytes above it.)
    package static func needsLook(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let zeroQuote = (quotes &- ones) & ~quotes
        let zeroBackslash = (backslashes &- ones) & ~backslashes
        let control = (word &- ones &* 0x20) & ~word
        return (zeroQuote | zeroBackslash | control) & (ones &* 0x80)
    }

    /// After a member or an item: true past a `,` (another follows), false
    /// past `close` (the object or list ends), nil at anything else.
    private mutating func next(closing close: UInt8) -> Bool? {
        skipSpace()
        switch peek {
        case UInt8(ascii: ",")?:
            index += 1
            return true
        case close?:
            index += 1
            return false
        default: return nil
        }
    }

    /// The `:` after a member's name.
    private mutating func separator() -> Bool {
        skipSpace()
        guard peek == UInt8(ascii: ":") else { return false }
        index += 1
        return true
    }

    /// The `}` closing an object.
    private mutating func closing() -> Bool {
        skipSpace()
        guard peek == UInt8(ascii: "}") else { return false }
        index += 1
        return true
    }

    /// Whether `text` is `word`'s bytes (a length test, then one `memcmp`).
    private static func same(_ text: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        text.count == word.utf8CodeUnitCount
            && (text.isEmpty || memcmp(text.baseAddress!, word.utf8Start, text.count) == 0)
    }

    private static func same(_ text: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8]) -> Bool {
        text.count == bytes.count
            && (text.isEmpty
                || bytes.withUnsafeBufferPointer { memcmp(text.baseAddress!, $0.baseAddress!, text.count) == 0 })
    }
}
