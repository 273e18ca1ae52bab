import Foundation
import PersistentCollections

/// A record's packed fields read as tokens, for code in this package that
/// turns records into another format (the `strata` command's JSON): a
/// string's bytes are handed out as a range of the record's own bytes, so
/// writing a million records builds no `String`, list or `Value` per
/// field. Read in order: ``nextField()``, then that field's value through
/// ``nextValue()`` (a list's items follow its token, one ``nextValue()``
/// each).
package struct RecordTokens {
    /// One value, or the start of a list.
    package enum Token {
        case null
        case bool(Bool)
        case int(Int64)
        case double(Double)
        /// UTF-8 bytes at this range of ``bytes``.
        case string(Range<Int>)
        /// Bytes at this range of ``bytes``.
        case bytes(Range<Int>)
        /// Seconds since 2001-01-01 UTC.
        case date(Double)
        /// The table's name ID (see ``RecordTokens/fieldNames``) and the record.
        case reference(tableID: Int, id: RecordID)
        /// `count` values follow.
        case list(count: Int)
        /// A map, decoded (rare in records: built whole).
        case map(Value)
    }

    private var reader: _PackedReader
    private var remainingFields: Int

    /// The record's packed bytes, which string and bytes tokens index.
    package var bytes: [UInt8] { reader.bytes }

    init(_ record: Record) {
        reader = _PackedReader(record._bytes)
        remainingFields = Int(reader.varint())
    }

    /// The next field's name ID (an index of ``fieldNames``), or nil after
    /// the last field; its value is read next. O(1).
    package mutating func nextField() -> Int? {
        guard remainingFields > 0 else { return nil }
        remainingFields -= 1
        return Int(reader.varint())
    }

    /// The next value's token. O(1), but for a map (O(its size)).
    package mutating func nextValue() -> Token {
        switch reader.valueTag() {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(reader.zigzag())
        case .double: return .double(Double(bitPattern: reader.fixed64()))
        case .string: return .string(span())
        case .bytes: return .bytes(span())
        case .date: return .date(Double(bitPattern: reader.fixed64()))
        case .reference:
            let table = Int(reader.varint())
            return .reference(tableID: table, id: reader.recordID())
        case .list: return .list(count: Int(reader.varint()))
        case .map:
            reader.offset -= 1
            return .map(reader.value())
        }
    }

    private mutating func span() -> Range<Int> {
        let length = Int(reader.varint())
        defer { reader.offset += length }
        return reader.offset..<(reader.offset + length)
    }

    /// Every field and table name this process has numbered, indexed by
    /// the IDs tokens carry. One copy serves every record that existed
    /// when it was taken (a name a record holds keeps its ID). O(1).
    package static var fieldNames: PersistentVector<Key> { FieldNames.all }

    /// The ID records use for the field named `name`, or nil when no
    /// record holds it. O(1).
    package static func fieldID(of name: Key) -> Int? {
        FieldNames.existingID(of: name).map { Int($0) }
    }
}

extension Record {
    /// The packed fields as tokens, in name order. O(1).
    package var tokens: RecordTokens { RecordTokens(self) }
}
