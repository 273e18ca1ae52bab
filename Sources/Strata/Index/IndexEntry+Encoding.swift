import Foundation

// The order-preserving encoding of index entries. Every value begins with a
// type byte, in the order of `Value.indexOrder`, and is self-delimiting, so
// the bytes of a tuple of values compare as the tuple does, and a tuple's
// encoding is a prefix of every longer tuple that starts with it. No
// encoding begins with 0xFF, so `prefix + [0xFF]` is above every entry
// that starts with `prefix`.
//
//     null 0x01 · false 0x02 · true 0x03
//     int  0x0C…0x1C: 0x14 for zero; 0x14 + n then n big-endian bytes for a
//          positive value of n significant bytes; 0x14 − n then the n low
//          bytes of its ones' complement for a negative one
//     double 0x20, date 0x23: 8 bytes, the bit pattern with the sign bit
//          flipped (non-negative) or every bit flipped (negative)
//     string 0x21, bytes 0x22: the bytes with 0x00 written 0x00 0xFF, then 0x00
//     reference 0x24: table name as a string body, then the record ID
//     list 0x25: the elements, then 0x00
//     map 0x26: per key in byte order, 0x01, the key as a string body, the value; then 0x00
//     record ID: an int, a string (0x21) or 0x27 and the UUID's 16 bytes

enum _IndexTag {
    static let null: UInt8 = 0x01
    static let `false`: UInt8 = 0x02
    static let `true`: UInt8 = 0x03
    static let intZero: UInt8 = 0x14
    static let double: UInt8 = 0x20
    static let string: UInt8 = 0x21
    static let bytes: UInt8 = 0x22
    static let date: UInt8 = 0x23
    static let reference: UInt8 = 0x24
    static let list: UInt8 = 0x25
    static let map: UInt8 = 0x26
    static let uuid: UInt8 = 0x27
    static let end: UInt8 = 0x00
}

/// Appends order-preserving encodings.
struct IndexEntryWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 32) { bytes.reserveCapacity(capacity) }

    /// Appends `value`, or null for a missing one.
    mutating func value(_ value: Value?, depth: Int = 0) {
        guard let value else { return bytes.append(_IndexTag.null) }
        switch value {
        case .null: bytes.append(_IndexTag.null)
        case .bool(let v): bytes.append(v ? _IndexTag.true : _IndexTag.false)
        case .int(let v): int(v)
        case .double(let v): ordered(v.bitPattern, tag: _IndexTag.double)
        case .date(let v): ordered(v.timeIntervalSinceReferenceDate.bitPattern, tag: _IndexTag.date)
        case .string(let v):
            bytes.append(_IndexTag.string)
            body(v.utf8)
        case .bytes(let v):
            bytes.append(_IndexTag.bytes)
            body(v)
        case .reference(let v):
            bytes.append(_IndexTag.reference)
            body(v.table.string.utf8)
            recordID(v.id)
        case .list(let v):
            guard depth < Value.recursionLimit else { return deepValue(value) }
            bytes.append(_IndexTag.list)
            for element in v { self.value(element, depth: depth + 1) }
            bytes.append(_IndexTag.end)
        case .map(let v):
            guard depth < Value.recursionLimit else { return deepValue(value) }
            bytes.append(_IndexTag.map)
            for key in v.keys.sorted() {
                bytes.append(0x01)
                body(key.string.utf8)
                self.value(v[key]!, depth: depth + 1)
            }
            bytes.append(_IndexTag.end)
        }
    }

    /// The bytes ``value(_:depth:)`` writes for `value`, with the work still
    /// to do kept on the heap instead of the stack. O(size).
    mutating func deepValue(_ value: Value) {
        value._walk { part in
            switch part {
            case .scalar(let scalar): self.value(scalar)
            case .list: bytes.append(_IndexTag.list)
            case .map: bytes.append(_IndexTag.map)
            case .key(let key):
                bytes.append(0x01)
                body(key.string.utf8)
            case .end: bytes.append(_IndexTag.end)
            }
        }
    }

    mutating func recordID(_ id: RecordID) {
        switch id.kind {
        case .integer(let v): int(v)
        case .string(let v):
            bytes.append(_IndexTag.string)
            body(v.utf8)
        case .uuid(let v):
            bytes.append(_IndexTag.uuid)
            withUnsafeBytes(of: v.uuid) { bytes.append(contentsOf: $0) }
        }
    }

    mutating func int(_ value: Int64) {
        if value == 0 { return bytes.append(_IndexTag.intZero) }
        let magnitude = value.magnitude
        let length = (64 - magnitude.leadingZeroBitCount + 7) / 8
        let payload: UInt64
        if value > 0 {
            bytes.append(_IndexTag.intZero + UInt8(length))
            payload = magnitude
        } else {
            // The ones' complement of the magnitude in `length` bytes: a larger
            // magnitude gives a smaller payload, and more bytes a smaller tag.
            bytes.append(_IndexTag.intZero - UInt8(length))
            let mask = length == 8 ? UInt64.max : (1 << UInt64(8 * length)) - 1
            payload = mask - magnitude
        }
        for shift in stride(from: (length - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: payload >> UInt64(shift)))
        }
    }

    /// An IEEE bit pattern in total order: non-negative values with the sign
    /// flipped, negative ones with every bit flipped.
    mutating func ordered(_ bits: UInt64, tag: UInt8) {
        bytes.append(tag)
        let key = bits & (1 << 63) == 0 ? bits | (1 << 63) : ~bits
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: key >> UInt64(shift)))
        }
    }

    /// Bytes with 0x00 escaped, then the 0x00 terminator.
    mutating func body(_ source: some Sequence<UInt8>) {
        // Contiguous bytes (native strings, arrays, slices) without a zero
        // go in one copy: a title or a megabyte value, not a byte at a time.
        let copied: Bool? = source.withContiguousStorageIfAvailable { buffer in
            if let base = buffer.baseAddress, memchr(base, 0, buffer.count) != nil { return false }
            bytes.append(contentsOf: buffer)
            return true
        }
        if copied != true {
            for byte in source {
                bytes.append(byte)
                if byte == 0 { bytes.append(0xFF) }
            }
        }
        bytes.append(_IndexTag.end)
    }
}
