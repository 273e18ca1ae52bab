// Checking an entry read from disk before anything trusts it: the readers
// in IndexEntry+Decoding assume the bytes came from `IndexEntryWriter`, and
// would stop the process on anything else.

extension IndexEntry {
    /// Where the record ID starts in `bytes`, and whether one of the values
    /// is null, when `bytes` hold exactly `valueCount` well-formed values and
    /// then one record ID; nil otherwise. O(count); never reads past the end.
    static func checkedLayout(_ bytes: UnsafeRawBufferPointer, valueCount: Int) -> (idStart: Int, hasNull: Bool)? {
        var offset = 0
        var hasNull = false
        for _ in 0..<valueCount {
            if offset < bytes.count && bytes[offset] == _IndexTag.null { hasNull = true }
            guard checkedSkipValue(bytes, &offset, depth: 0) else { return nil }
        }
        let idStart = offset
        guard checkedSkipRecordID(bytes, &offset), offset == bytes.count else { return nil }
        return (idStart, hasNull)
    }

    /// Whether `self`, checked well-formed, may follow `previous` in an
    /// index of `definition`: after it, and in a unique index not with the
    /// same values (an entry with a null value never clashes). O(count).
    /// `layout`: this entry's, when the caller has it already.
    func mayFollow(
        _ previous: IndexEntry,
        in definition: IndexDefinition,
        layout known: (idStart: Int, hasNull: Bool)? = nil
    ) -> Bool {
        guard previous < self else { return false }
        guard definition.isUnique else { return true }
        let valueCount = definition.fields.count
        guard let layout = known ?? withBytes({ Self.checkedLayout($0, valueCount: valueCount) }) else { return false }
        guard !layout.hasNull else { return true }
        return previous.withBytes { p in
            withBytes { c in p.count <= layout.idStart || !p[..<layout.idStart].elementsEqual(c[..<layout.idStart]) }
        }
    }

    static func checkedSkipValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, depth: Int) -> Bool {
        guard offset < bytes.count else { return false }
        let tag = bytes[offset]
        offset += 1
        switch tag {
        case _IndexTag.null, _IndexTag.false, _IndexTag.true: return true
        case 0x0C...0x1C: return checkedSkip(abs(Int(tag) - Int(_IndexTag.intZero)), bytes, &offset)
        case _IndexTag.double, _IndexTag.date: return checkedSkip(8, bytes, &offset)
        case _IndexTag.string, _IndexTag.bytes: return checkedSkipBody(bytes, &offset)
        case _IndexTag.reference: return checkedSkipBody(bytes, &offset) && checkedSkipRecordID(bytes, &offset)
        case _IndexTag.list, _IndexTag.map:
            // Values nest no deeper than records allow.
            guard depth < Value.maximumNesting else { return false }
            while true {
                guard offset < bytes.count else { return false }
                if bytes[offset] == _IndexTag.end {
                    offset += 1
                    return true
                }
                if tag == _IndexTag.map {
                    guard bytes[offset] == 0x01 else { return false }
                    offset += 1
                    guard checkedSkipBody(bytes, &offset) else { return false }
                }
                guard checkedSkipValue(bytes, &offset, depth: depth + 1) else { return false }
            }
        default: return false
        }
    }

    static func checkedSkipRecordID(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Bool {
        guard offset < bytes.count else { return false }
        let tag = bytes[offset]
        offset += 1
        switch tag {
        case 0x0C...0x1C: return checkedSkip(abs(Int(tag) - Int(_IndexTag.intZero)), bytes, &offset)
        case _IndexTag.string: return checkedSkipBody(bytes, &offset)
        case _IndexTag.uuid: return checkedSkip(16, bytes, &offset)
        default: return false
        }
    }

    static func checkedSkip(_ count: Int, _ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Bool {
        guard count <= bytes.count - offset else { return false }
        offset += count
        return true
    }

    /// A body: bytes with 0x00 written 0x00 0xFF, then 0x00.
    static func checkedSkipBody(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Bool {
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            if byte == 0 {
                if offset < bytes.count && bytes[offset] == 0xFF {
                    offset += 1
                } else {
                    return true
                }
            }
        }
        return false
    }
}
