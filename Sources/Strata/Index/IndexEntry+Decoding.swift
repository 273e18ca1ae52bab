import Foundation
import PersistentCollections

// Reading entries back: an entry's bytes were written by `IndexEntryWriter`
// in this process (entries are never read from disk), so reads are trusted.

extension IndexEntry {
    /// The record ID that follows the first `valueCount` values. O(count).
    func recordID(after valueCount: Int) -> RecordID {
        recordID(afterPrefix: 0, values: valueCount)
    }

    /// The record ID of an entry that starts with `prefix` bytes holding
    /// whole values (a query's equalities, which every entry between its
    /// bounds shares), then `valueCount` more values. O(count), without
    /// reading the prefix: a query's window decodes an ID per result.
    /// - Precondition: the entry is longer than `prefix` bytes.
    @inline(__always)
    func recordID(afterPrefix prefix: Int, values valueCount: Int) -> RecordID {
        // The common case, an inline entry whose later values have a fixed
        // size (integers, dates, doubles, booleans, nulls) and an integer
        // ID, read from the words without copying them out.
        if case let .inline(w0, w1, w2, w3, w4, storedCount) = storage {
            let words = (w0, w1, w2, UInt64(w3) << 16 | UInt64(w4))
            let count = Int(storedCount)
            var offset = prefix
            var remaining = valueCount
            while remaining > 0, offset < count, let size = Self.fixedSize(Self.byte(offset, of: words)) {
                offset += 1 + size
                remaining -= 1
            }
            if remaining == 0, offset < count {
                let tag = Self.byte(offset, of: words)
                let length = abs(Int(tag) - Int(_IndexTag.intZero))
                if tag >= 0x0C, tag <= 0x1C, offset + 1 + length == count {
                    var payload: UInt64 = 0
                    for i in (offset + 1)..<count { payload = payload << 8 | UInt64(Self.byte(i, of: words)) }
                    return RecordID(Self.int(payload: payload, length: length, tag: tag))
                }
            }
        }
        return withBytes { bytes in
            var offset = prefix
            for _ in 0..<valueCount { Self.skipValue(bytes, &offset) }
            return Self.readRecordID(bytes, &offset)
        }
    }

    /// The bytes after the type byte `tag` of a value of fixed size; nil
    /// for one of variable size.
    @inline(__always)
    static func fixedSize(_ tag: UInt8) -> Int? {
        switch tag {
        case _IndexTag.null, _IndexTag.false, _IndexTag.true: return 0
        case 0x0C...0x1C: return abs(Int(tag) - Int(_IndexTag.intZero))
        case _IndexTag.double, _IndexTag.date: return 8
        default: return nil
        }
    }

    /// Byte `i` (below 30) of the big-endian `words`.
    @inline(__always)
    static func byte(_ i: Int, of words: (UInt64, UInt64, UInt64, UInt64)) -> UInt8 {
        let word = i < 8 ? words.0 : (i < 16 ? words.1 : (i < 24 ? words.2 : words.3 << 16))
        return UInt8(truncatingIfNeeded: word >> UInt64(56 - 8 * (i & 7)))
    }

    /// The first `valueCount` values. O(count).
    func values(_ valueCount: Int) -> [Value] {
        withBytes { bytes in
            var offset = 0
            return (0..<valueCount).map { _ in Self.readValue(bytes, &offset) }
        }
    }

    /// Moves past one value, at any depth: lists and maps deeper than
    /// ``Value/recursionLimit`` levels (a value in memory may nest past what
    /// a stored record may) without recursion. Scalars go through the
    /// checked walk of IndexEntry+Validation, trapping where it fails:
    /// these bytes are trusted.
    static func skipValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, levelsAbove: Int = 0) {
        let tag = bytes[offset]
        guard tag == _IndexTag.list || tag == _IndexTag.map else {
            precondition(checkedSkipValue(bytes, &offset, depth: 0), "a malformed index entry")
            return
        }
        guard levelsAbove < Value.recursionLimit else { return walkValue(bytes, &offset) { _ in } }
        offset += 1
        while bytes[offset] != _IndexTag.end {
            if tag == _IndexTag.map {
                offset += 1
                precondition(checkedSkipBody(bytes, &offset), "a malformed index entry")
            }
            skipValue(bytes, &offset, levelsAbove: levelsAbove + 1)
        }
        offset += 1
    }

    /// Moves past one value, calling `visit` with each of its parts in
    /// order, the lists and maps entered kept on the heap: no recursion,
    /// whatever the depth. Scalars and keys are skipped by the checked walk
    /// of IndexEntry+Validation (trusted bytes: a failure traps). O(size).
    static func walkValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, _ visit: (_IndexPart) -> Void) {
        // Per list or map entered: whether it is a map (its entries start with 0x01 and a key).
        var open: [Bool] = []
        repeat {
            if let isMap = open.last {
                if bytes[offset] == _IndexTag.end {
                    offset += 1
                    open.removeLast()
                    visit(.end)
                    continue
                }
                if isMap {
                    offset += 1
                    visit(.key(at: offset))
                    precondition(checkedSkipBody(bytes, &offset), "a malformed index entry")
                }
            }
            switch bytes[offset] {
            case _IndexTag.list:
                offset += 1
                open.append(false)
                visit(.list)
            case _IndexTag.map:
                offset += 1
                open.append(true)
                visit(.map)
            default:
                visit(.scalar(at: offset))
                precondition(checkedSkipValue(bytes, &offset, depth: 0), "a malformed index entry")
            }
        } while !open.isEmpty
    }

    static func readBody(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> [UInt8] {
        var result: [UInt8] = []
        while true {
            let byte = bytes[offset]
            offset += 1
            if byte == 0 {
                if offset < bytes.count && bytes[offset] == 0xFF {
                    offset += 1
                } else {
                    return result
                }
            }
            result.append(byte)
        }
    }

    static func readInt(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, tag: UInt8) -> Int64 {
        let length = abs(Int(tag) - Int(_IndexTag.intZero))
        var payload: UInt64 = 0
        for _ in 0..<length {
            payload = payload << 8 | UInt64(bytes[offset])
            offset += 1
        }
        return int(payload: payload, length: length, tag: tag)
    }

    /// The integer whose `length` payload bytes, read big-endian, are
    /// `payload`, under type byte `tag`.
    @inline(__always)
    static func int(payload: UInt64, length: Int, tag: UInt8) -> Int64 {
        if tag >= _IndexTag.intZero { return Int64(bitPattern: payload) }
        let mask = length == 8 ? UInt64.max : (1 << UInt64(8 * length)) - 1
        let magnitude = mask - payload
        return Int64(bitPattern: 0 &- magnitude)
    }

    static func readOrdered(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64 {
        var key: UInt64 = 0
        for _ in 0..<8 {
            key = key << 8 | UInt64(bytes[offset])
            offset += 1
        }
        return key & (1 << 63) != 0 ? key & ~(1 << 63) : ~key
    }

    static func readRecordID(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> RecordID {
        let tag = bytes[offset]
        offset += 1
        switch tag {
        case _IndexTag.string: return RecordID(String(decoding: readBody(bytes, &offset), as: UTF8.self))
        case _IndexTag.uuid:
            defer { offset += 16 }
            return RecordID(UUID(bytes: bytes[offset..<(offset + 16)]))
        default: return RecordID(readInt(bytes, &offset, tag: tag))
        }
    }

    /// The value at `offset`, moving past it; lists and maps deeper than
    /// ``Value/recursionLimit`` levels are read without recursion.
    static func readValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, levelsAbove: Int = 0) -> Value {
        let tag = bytes[offset]
        if tag == _IndexTag.list || tag == _IndexTag.map, levelsAbove >= Value.recursionLimit {
            return readDeepValue(bytes, &offset)
        }
        offset += 1
        switch tag {
        case _IndexTag.null: return .null
        case _IndexTag.false: return .bool(false)
        case _IndexTag.true: return .bool(true)
        case 0x0C...0x1C: return .int(readInt(bytes, &offset, tag: tag))
        case _IndexTag.double: return .double(Double(bitPattern: readOrdered(bytes, &offset)))
        case _IndexTag.date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: readOrdered(bytes, &offset))))
        case _IndexTag.string: return .string(String(decoding: readBody(bytes, &offset), as: UTF8.self))
        case _IndexTag.bytes: return .bytes(readBody(bytes, &offset))
        case _IndexTag.reference:
            let table = Key(String(decoding: readBody(bytes, &offset), as: UTF8.self))
            return .reference(RecordReference(table: table, id: readRecordID(bytes, &offset)))
        case _IndexTag.list:
            var elements: [Value] = []
            while bytes[offset] != _IndexTag.end {
                elements.append(readValue(bytes, &offset, levelsAbove: levelsAbove + 1))
            }
            offset += 1
            return .list(PersistentVector(elements))
        case _IndexTag.map:
            var map = PersistentMap<Key, Value>()
            while bytes[offset] != _IndexTag.end {
                offset += 1
                let key = Key(String(decoding: readBody(bytes, &offset), as: UTF8.self))
                map[key] = readValue(bytes, &offset, levelsAbove: levelsAbove + 1)
            }
            offset += 1
            return .map(map)
        default: preconditionFailure("index entry tag \(tag)")
        }
    }
}

extension IndexEntry {
    /// ``readValue(_:_:levelsAbove:)`` without recursion. O(size).
    static func readDeepValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Value {
        var assembler = _ValueAssembler()
        walkValue(bytes, &offset) { part in
            switch part {
            case .scalar(var at): assembler.add(readValue(bytes, &at))
            case .list: assembler.beginList()
            case .map: assembler.beginMap()
            case .key(var at): assembler.key(Key(String(decoding: readBody(bytes, &at), as: UTF8.self)))
            case .end: assembler.end()
            }
        }
        return assembler.result!
    }
}

/// One part of an index entry's value, as ``IndexEntry/walkValue(_:_:_:)``
/// meets it.
enum _IndexPart {
    /// A value that is not a list or map, starting at this offset (its tag).
    case scalar(at: Int)
    /// A list starts; its elements follow, then ``end``.
    case list
    /// A map starts; each entry's key, then its value, follow, then ``end``.
    case map
    /// The key of the map entry whose value comes next, its body starting
    /// at this offset.
    case key(at: Int)
    /// The list or map last started ends.
    case end
}
