/// The first byte of every encoded value, in the codec's bytes and in a
/// record's packed bytes alike (`PackedReader.swift`). The numbers are the
/// format: a new kind of value takes a new number, and an existing number
/// never changes meaning.
enum ValueTag: UInt8 {
    case null = 0
    case `false` = 1
    case `true` = 2
    /// A zigzag varint.
    case int = 3
    /// 8 bytes, the IEEE 754 bit pattern, little-endian.
    case double = 4
    /// A varint length, then UTF-8 bytes.
    case string = 5
    /// A varint length, then the bytes.
    case bytes = 6
    /// 8 bytes, `timeIntervalSinceReferenceDate`'s bit pattern.
    case date = 7
    /// The table's name (codec: interned name; packed: process name ID), then a record ID.
    case reference = 8
    /// A varint count, then the values.
    case list = 9
    /// A varint count, then (length-prefixed key, value) sorted by the keys' bytes.
    case map = 10

    /// The tag whose number is `byte`, or nil. The same as
    /// `init(rawValue:)`, which the compiler keeps out of line: a call per
    /// value read was 2% of an open's time.
    @inline(__always)
    init?(byte: UInt8) {
        switch byte {
        case 0: self = .null
        case 1: self = .false
        case 2: self = .true
        case 3: self = .int
        case 4: self = .double
        case 5: self = .string
        case 6: self = .bytes
        case 7: self = .date
        case 8: self = .reference
        case 9: self = .list
        case 10: self = .map
        default: return nil
        }
    }
}

/// The first byte of an encoded record ID.
enum RecordIDTag: UInt8 {
    /// A zigzag varint.
    case integer = 0
    /// A varint length, then UTF-8 bytes.
    case string = 1
    /// 16 bytes.
    case uuid = 2
}

/// The first byte of an encoded change.
enum ChangeTag: UInt8 {
    /// The record.
    case insert = 0
    /// The record removed.
    case delete = 1
    /// A varint count, then (name, flags, old?, new?) sorted by name.
    case update = 2
}
