import Foundation

// Records stored in their packed in-memory form (`PackedReader.swift`) with
// name IDs local to one encoding: snapshot chunks. The writer numbers the
// names its records use densely, in the order of its own process IDs; a
// reader whose process gives those names the same IDs (the usual case: a
// fresh process, or the process that wrote them) copies each validated
// record's bytes as they are, and any other reader rewrites the IDs.
//
// Validation checks everything the trusted readers rely on: tags, varints,
// lengths within the input, UTF-8, nesting within the codec's limit, names
// in the local table, fields in name order without repeats, map keys in
// order without repeats, record IDs well formed.

extension ByteReader {
    /// Validates one packed record whose name IDs index a local table, and
    /// returns its byte range; marks each name it uses in `used`.
    ///
    /// Without `validating`, only the record's structure is checked (tags,
    /// varints and lengths within the input, nesting within the codec's
    /// limit, name IDs in the local table), not that its text is UTF-8 nor
    /// its fields and map keys in order: enough for the trusted readers to
    /// stay within its bytes (to copy them with the names rewritten), not
    /// to make a ``Record`` of them (whose fields are in order). For a
    /// reader that only compares the bytes with valid records' (`strata
    /// verify`'s sums of digests) and validates the record when they
    /// differ.
    ///
    /// - Parameter ranks: per local name ID, its rank in name order (so a
    ///   field order check is one integer comparison).
    /// - Throws: ``CodecError`` at the first byte that is not a valid record.
    mutating func packedRecord(
        ranks: [Int32],
        names: [Key],
        used: inout [Bool],
        validating: Bool = true
    ) throws -> Range<Int> {
        let start = offset
        let count = try self.count(minimumSize: 2)
        var previous: Int32 = -1
        for _ in 0..<count {
            let nameOffset = offset
            let id = try localName(count: ranks.count, used: &used)
            if validating {
                let rank = ranks[id]
                guard rank > previous else {
                    if rank == previous { throw CodecError.duplicateKey(offset: nameOffset, key: names[id].string) }
                    throw CodecError.unorderedFields(offset: nameOffset)
                }
                previous = rank
            }
            try packedValue(names: ranks.count, validating: validating, used: &used)
        }
        return start..<offset
    }

    /// A local name ID below `count`, marked in `used`.
    private mutating func localName(count: Int, used: inout [Bool]) throws -> Int {
        let start = offset
        let id = try varint()
        guard id < UInt64(count) else { throw CodecError.unknownFieldName(offset: start, index: id) }
        used[Int(id)] = true
        return Int(id)
    }

    /// Validates one packed value (without `validating`, its structure
    /// only: see `packedRecord(ranks:names:used:validating:)`).
    private mutating func packedValue(names: Int, validating: Bool, used: inout [Bool]) throws {
        let start = offset
        switch try valueTag() {
        case .null, .false, .true:
            return
        case .int:
            _ = try varint()
        case .double, .date:
            _ = try skip(8)
        case .string:
            try validatedString(checkingText: validating)
        case .bytes:
            _ = try skip(try count())
        case .reference:
            _ = try localName(count: names, used: &used)
            try validatedRecordID(checkingText: validating)
        case .list:
            try enter(at: start)
            defer { depth -= 1 }
            let count = try self.count()
            for _ in 0..<count { try packedValue(names: names, validating: validating, used: &used) }
        case .map:
            try enter(at: start)
            defer { depth -= 1 }
            let count = try self.count(minimumSize: 2)
            var previousKey: Range<Int>?
            for _ in 0..<count {
                previousKey = validating ? try mapKey(after: previousKey) : try validatedString(checkingText: false)
                try packedValue(names: names, validating: validating, used: &used)
            }
        }
    }
}

extension ByteWriter {
    /// Appends the trusted packed record at `reader`, replacing each name
    /// ID `i` with `mapping[i]`, and moves `reader` past it.
    mutating func packedRecord(_ reader: inout _PackedReader, mapping: [UInt32]) {
        copyPackedRecord(&reader) { $0.varint(UInt64(mapping[Int($1)])) }
    }
}

extension _PackedReader {
    /// Moves past one trusted packed record, marking in `used` every name
    /// ID it holds (field names and the tables of references, at any depth).
    mutating func skipRecord(markingNames used: inout [Bool]) {
        let count = varint()
        for _ in 0..<count {
            used[Int(varint())] = true
            skipValue(markingNames: &used)
        }
    }

    private mutating func skipValue(markingNames used: inout [Bool], levelsAbove: Int = 0) {
        let start = offset
        if levelsAbove >= Value.recursionLimit {
            // Deeper without recursion: a record built in memory may nest without bound.
            let source = bytes
            return walkValue { part in
                guard case .scalar(let range) = part, source[range.lowerBound] == ValueTag.reference.rawValue else {
                    return
                }
                var reference = _PackedReader(source, offset: range.lowerBound + 1)
                used[Int(reference.varint())] = true
            }
        }
        switch valueTag() {
        case .reference:
            used[Int(varint())] = true
            skipRecordID()
        case .list:
            for _ in 0..<varint() { skipValue(markingNames: &used, levelsAbove: levelsAbove + 1) }
        case .map:
            for _ in 0..<varint() {
                offset += Int(varint())
                skipValue(markingNames: &used, levelsAbove: levelsAbove + 1)
            }
        case .null, .false, .true, .int, .double, .string, .bytes, .date:
            offset = start
            skipValue()
        }
    }
}
