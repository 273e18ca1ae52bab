import Foundation

// A record's encoding is its packed in-memory bytes with each process-wide
// name ID replaced by an interned name (`ByteWriter.fieldName`). Encoding
// copies the value bytes and rewrites the names; decoding validates every
// byte while copying it into the packed form, so a decoded record never
// holds bytes that its readers could misread.

extension ByteWriter {
    mutating func record(_ record: Record) {
        var reader = _PackedReader(record._bytes)
        copyPackedRecord(&reader) { $0.fieldName(id: $1) }
    }

    /// Copies the trusted packed record at `reader`, writing each name ID it
    /// holds (a field's, or a reference's table) through `writeName`, and
    /// moves `reader` past it: the codec writes names, a snapshot chunk
    /// its own numbering.
    mutating func copyPackedRecord(
        _ reader: inout _PackedReader,
        writingNames writeName: (inout ByteWriter, UInt32) -> Void
    ) {
        let count = reader.varint()
        varint(count)
        for _ in 0..<count {
            writeName(&self, UInt32(reader.varint()))
            copyPackedValue(&reader, writingNames: writeName)
        }
    }

    /// Copies one packed value, writing the table names of references
    /// through `writeName` (past ``Value/recursionLimit`` levels without
    /// recursion: a record built in memory may nest without bound).
    private mutating func copyPackedValue(
        _ reader: inout _PackedReader,
        writingNames writeName: (inout ByteWriter, UInt32) -> Void,
        levelsAbove: Int = 0
    ) {
        let start = reader.offset
        if levelsAbove >= Value.recursionLimit { return copyDeepPackedValue(&reader, writingNames: writeName) }
        switch reader.valueTag() {
        case .reference:
            tag(.reference)
            writeName(&self, UInt32(reader.varint()))
            let idStart = reader.offset
            reader.skipRecordID()
            bytes.append(bytesOf: reader.bytes, in: idStart..<reader.offset)
        case .list:
            tag(.list)
            let count = reader.varint()
            varint(count)
            for _ in 0..<count { copyPackedValue(&reader, writingNames: writeName, levelsAbove: levelsAbove + 1) }
        case .map:
            tag(.map)
            let count = reader.varint()
            varint(count)
            for _ in 0..<count {
                let keyStart = reader.offset
                reader.offset += Int(reader.varint())
                bytes.append(bytesOf: reader.bytes, in: keyStart..<reader.offset)
                copyPackedValue(&reader, writingNames: writeName, levelsAbove: levelsAbove + 1)
            }
        case .null, .false, .true, .int, .double, .string, .bytes, .date:
            reader.offset = start
            reader.skipValue()
            bytes.append(bytesOf: reader.bytes, in: start..<reader.offset)
        }
    }

    /// ``copyPackedValue(_:writingNames:levelsAbove:)`` without recursion.
    private mutating func copyDeepPackedValue(
        _ reader: inout _PackedReader,
        writingNames writeName: (inout ByteWriter, UInt32) -> Void
    ) {
        let source = reader.bytes
        reader.walkValue { part in
            switch part {
            case .scalar(let range) where source[range.lowerBound] == ValueTag.reference.rawValue:
                var reference = _PackedReader(source, offset: range.lowerBound + 1)
                tag(.reference)
                writeName(&self, UInt32(reference.varint()))
                bytes.append(bytesOf: source, in: reference.offset..<range.upperBound)
            case .scalar(let range), .key(let range):
                bytes.append(bytesOf: source, in: range)
            case .list(let count):
                tag(.list)
                varint(count)
            case .map(let count):
                tag(.map)
                varint(count)
            case .end:
                break
            }
        }
    }
}

extension ByteReader {
    mutating func record() throws -> Record {
        let count = try self.count(minimumSize: 2)
        // The reused buffer moves out for the duration (no copy, no
        // overlapping access to self).
        var out = ByteWriter(capacity: 0)
        swap(&out, &scratch)
        defer { swap(&out, &scratch) }
        out.bytes.removeAll(keepingCapacity: true)
        // Allocated at the first record, once (a reader of no record allocates nothing).
        if out.bytes.capacity == 0 { out.bytes.reserveCapacity(512) }
        out.varint(count)
        var previous = -1
        for _ in 0..<count {
            let nameOffset = offset
            let index = try fieldNameIndex()
            if previous >= 0 && knownSuccessor[previous] != index {
                if index == previous { throw CodecError.duplicateKey(offset: nameOffset, key: names[index].string) }
                guard Record._precedes(names[previous], names[index]) else {
                    throw CodecError.unorderedFields(offset: nameOffset)
                }
                knownSuccessor[previous] = index
            }
            previous = index
            out.varint(UInt64(nameIDs[index]))
            try packValue(into: &out)
        }
        return Record(_packed: Array(out.bytes[...]))
    }

    /// Validates one value and appends it to `out` in the packed form.
    mutating func packValue(into out: inout ByteWriter) throws {
        let start = offset
        let tag = try valueTag()
        switch tag {
        case .null, .false, .true:
            out.tag(tag)
        case .int:
            _ = try varint()
            out.bytes.append(bytesOf: bytes, in: start..<offset)
        case .double, .date:
            _ = try skip(8)
            out.bytes.append(bytesOf: bytes, in: start..<offset)
        case .string:
            try validatedString()
            out.bytes.append(bytesOf: bytes, in: start..<offset)
        case .bytes:
            _ = try skip(try count())
            out.bytes.append(bytesOf: bytes, in: start..<offset)
        case .reference:
            out.tag(.reference)
            let table = try fieldNameIndex()
            out.varint(UInt64(nameIDs[table]))
            let idStart = offset
            try validatedRecordID()
            out.bytes.append(bytesOf: bytes, in: idStart..<offset)
        case .list:
            try enter(at: start)
            defer { depth -= 1 }
            let count = try self.count()
            out.tag(.list)
            out.varint(count)
            for _ in 0..<count { try packValue(into: &out) }
        case .map:
            try enter(at: start)
            defer { depth -= 1 }
            let count = try self.count(minimumSize: 2)
            out.tag(.map)
            out.varint(count)
            var previousKey: Range<Int>?
            for _ in 0..<count {
                let keyOffset = offset
                previousKey = try mapKey(after: previousKey)
                out.bytes.append(bytesOf: bytes, in: keyOffset..<offset)
                try packValue(into: &out)
            }
        }
    }

    /// Checks a map's next key (a string after `previous`, the range of the
    /// key before it, in byte order without repeats) and returns its range.
    mutating func mapKey(after previous: Range<Int>?) throws -> Range<Int> {
        let keyOffset = offset
        let key = try validatedString()
        if let previous {
            let earlier = bytes[previous]
            let later = bytes[key]
            guard earlier.lexicographicallyPrecedes(later) else {
                if earlier.elementsEqual(later) {
                    throw CodecError.duplicateKey(offset: keyOffset, key: String(decoding: later, as: UTF8.self))
                }
                throw CodecError.unorderedFields(offset: keyOffset)
            }
        }
        return key
    }

    /// Checks a length-prefixed UTF-8 string and returns the range of its
    /// bytes (without `checkingText`, its length only).
    @discardableResult
    mutating func validatedString(checkingText: Bool = true) throws -> Range<Int> {
        let start = offset
        let range = try skip(try count())
        guard checkingText else { return range }
        // Most stored text is ASCII: checked a word at a time, without the
        // slice (and its retain) that the full UTF-8 check needs.
        let ascii = bytes.withUnsafeBytes { Self.isASCII(UnsafeRawBufferPointer(rebasing: $0[range])) }
        if !ascii && String(validating: bytes[range], as: UTF8.self) == nil {
            throw CodecError.invalidUTF8(offset: start)
        }
        return range
    }

    /// Whether every byte is below 0x80. O(count), eight bytes a step; the
    /// last step overlaps the one before instead of a byte at a time (most
    /// stored text is a few words long, so the tail was half the work).
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var high: UInt64 = 0
        if count >= 8 {
            var position = 0
            while position + 8 <= count {
                high |= bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                position += 8
            }
            high |= bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            high = UInt64(
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
                    | bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            )
        } else if count > 0 {
            // 0, count / 2 and count - 1 are every position of 1 to 3 bytes.
            high = UInt64(bytes[0] | bytes[count / 2] | bytes[count - 1])
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Moves past a record ID, checking its tag, its lengths and (with
    /// `checkingText`) that a string ID is UTF-8.
    mutating func validatedRecordID(checkingText: Bool = true) throws {
        let start = offset
        let tag = try byte()
        switch RecordIDTag(rawValue: tag) {
        case .integer: _ = try zigzag()
        case .string: try validatedString(checkingText: checkingText)
        case .uuid: _ = try skip(16)
        case nil: throw CodecError.invalidTag(offset: start, tag: tag, context: "record ID")
        }
    }
}
