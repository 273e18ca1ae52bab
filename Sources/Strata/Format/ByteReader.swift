import Foundation

/// Reads what `ByteWriter` writes, checking every length against the bytes
/// that remain (so no length field can make it allocate more than the input
/// could hold) and throwing ``CodecError`` with the offset on anything else.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    /// Field names seen so far in this encoding, with their process-wide IDs.
    private(set) var names: [Key] = []
    private(set) var nameIDs: [UInt32] = []
    /// Names reserved in the process table for this input: committed when
    /// it is accepted, released when it is rejected.
    private(set) var heldNames: [UInt32] = []
    /// For each name index, a name index known to sort after it: records
    /// repeat the same field sequence, so this spares most comparisons.
    var knownSuccessor: [Int] = []
    /// Reused buffer for transcoding records into their packed form:
    /// allocated by the first record, so that a reader of something else (a
    /// transaction's summary, one per record at open) allocates nothing.
    var scratch = ByteWriter(capacity: 0)
    /// Current nesting depth of lists and maps.
    var depth = 0
    /// The format version of the top-level encoding being read.
    var version: UInt64 = BinaryCodec.formatVersion
    static let maximumDepth = Value.maximumNesting

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    @inline(__always)
    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw CodecError.truncated(offset: offset, needed: 1) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count <= remaining else { throw CodecError.truncated(offset: offset, needed: count - remaining) }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    /// Moves past `count` bytes and returns their range (no slice made).
    @inline(__always)
    mutating func skip(_ count: Int) throws -> Range<Int> {
        guard count <= remaining else { throw CodecError.truncated(offset: offset, needed: count - remaining) }
        defer { offset += count }
        return offset..<(offset + count)
    }

    @inline(__always)
    mutating func varint() throws -> UInt64 {
        // One or two bytes (every tag, most counts, lengths and IDs)
        // inline: the validation of a snapshot reads dozens per record. A
        // second byte of 0 is an overlong encoding, left to the full read.
        if offset < bytes.count {
            let first = bytes[offset]
            if first < 0x80 {
                offset += 1
                return UInt64(first)
            }
            if offset + 1 < bytes.count, case let second = bytes[offset + 1], second > 0, second < 0x80 {
                offset += 2
                return UInt64(first & 0x7F) | UInt64(second) << 7
            }
        }
        return try _longVarint()
    }

    @inline(never)
    private mutating func _longVarint() throws -> UInt64 {
        let start = offset
        do {
            return try Varint.read(bytes, at: &offset)
        } catch {
            switch error {
            case .truncated:
                offset = bytes.count
                throw CodecError.truncated(offset: offset, needed: 1)
            case .malformed: throw CodecError.malformedInteger(offset: start)
            case .overlong: throw CodecError.overlongInteger(offset: start)
            }
        }
    }

    /// A value's tag. - Throws: `CodecError.invalidTag` for a number no kind has.
    @inline(__always)
    mutating func valueTag() throws -> ValueTag {
        let start = offset
        let raw = try byte()
        guard let tag = ValueTag(byte: raw) else {
            throw CodecError.invalidTag(offset: start, tag: raw, context: "value")
        }
        return tag
    }

    mutating func zigzag() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A count of items that take at least `minimumSize` bytes each, checked
    /// against what remains before anything is allocated.
    @inline(__always)
    mutating func count(minimumSize: Int = 1) throws -> Int {
        let start = offset
        let value = try varint()
        guard value <= UInt64(remaining / Swift.max(minimumSize, 1)) else {
            throw CodecError.lengthTooLarge(offset: start, length: value, remaining: remaining)
        }
        return Int(value)
    }

    mutating func fixed64() throws -> UInt64 {
        let slice = try take(8)
        var value: UInt64 = 0
        for (i, b) in slice.enumerated() { value |= UInt64(b) << (8 * UInt64(i)) }
        return value
    }

    mutating func string() throws -> String {
        // ASCII text (most messages) is checked a word at a time and skips
        // `String(validating:as:)`, whose generic validation, with a
        // metadata lookup, ran for every transaction summary read at open.
        let range = try validatedString()
        return String(decoding: bytes[range], as: UTF8.self)
    }

    mutating func raw() throws -> [UInt8] {
        Array(try take(try count()))
    }

    mutating func uuid() throws -> UUID {
        UUID(bytes: try take(16))
    }

    mutating func fieldName() throws -> Key {
        let index = try fieldNameIndex()
        return names[index]
    }

    /// A field name's index in `names`: `0` then the name the first time,
    /// `index + 1` after.
    mutating func fieldNameIndex() throws -> Int {
        let start = offset
        let reference = try varint()
        if reference == 0 {
            let name = Key(try string())
            names.append(name)
            let (id, held) = FieldNames.reserve(name)
            nameIDs.append(id)
            if held { heldNames.append(id) }
            knownSuccessor.append(-1)
            return names.count - 1
        }
        guard reference - 1 < UInt64(names.count) else {
            throw CodecError.unknownFieldName(offset: start, index: reference - 1)
        }
        return Int(reference - 1)
    }

    /// Moves back to `offset`, an offset this reader has been at.
    mutating func rewind(to offset: Int) {
        precondition(offset <= self.offset)
        self.offset = offset
    }

    /// Throws unless every byte was consumed.
    func expectEnd() throws {
        if !isAtEnd { throw CodecError.trailingBytes(offset: offset, count: remaining) }
    }
}
