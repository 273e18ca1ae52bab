import Foundation

extension ByteWriter {
    /// Appends `value`: with `packed`, in the in-memory record form (a
    /// reference's table as a process-wide name ID, see
    /// `PackedReader.swift`), otherwise in the codec form (the table name
    /// interned per encoding). Everything else is the same bytes.
    mutating func value(_ value: Value, packed: Bool = false, depth: Int = 0) {
        switch value {
        case .null: tag(.null)
        case .bool(let v): tag(v ? .true : .false)
        case .int(let v):
            tag(.int)
            zigzag(v)
        case .double(let v):
            tag(.double)
            fixed64(v.bitPattern)
        case .string(let v):
            tag(ValueTag.string)
            string(v)
        case .bytes(let v):
            tag(.bytes)
            raw(v)
        case .date(let v):
            tag(.date)
            fixed64(v.timeIntervalSinceReferenceDate.bitPattern)
        case .reference(let v):
            tag(.reference)
            if packed { varint(UInt64(FieldNames.id(of: v.table))) } else { fieldName(v.table) }
            recordID(v.id)
        case .list(let v):
            guard depth < Value.recursionLimit else { return deepValue(value, packed: packed) }
            tag(.list)
            varint(v.count)
            for element in v { self.value(element, packed: packed, depth: depth + 1) }
        case .map(let v):
            guard depth < Value.recursionLimit else { return deepValue(value, packed: packed) }
            tag(.map)
            varint(v.count)
            for key in v.keys.sorted() {
                string(key.string)
                self.value(v[key]!, packed: packed, depth: depth + 1)
            }
        }
    }

    /// The bytes ``value(_:packed:depth:)`` writes for `value`, with the
    /// work still to do kept on the heap instead of the stack: a record
    /// made in memory may nest thousands of levels before it is refused
    /// for its depth. O(size).
    mutating func deepValue(_ value: Value, packed: Bool) {
        value._walk { part in
            switch part {
            case .scalar(let scalar): self.value(scalar, packed: packed)
            case .list(let count):
                tag(.list)
                varint(count)
            case .map(let count):
                tag(.map)
                varint(count)
            case .key(let key): string(key.string)
            case .end: break
            }
        }
    }

    mutating func recordID(_ id: RecordID) {
        switch id.kind {
        case .integer(let v):
            tag(RecordIDTag.integer)
            zigzag(v)
        case .string(let v):
            tag(RecordIDTag.string)
            string(v)
        case .uuid(let v):
            tag(RecordIDTag.uuid)
            uuid(v)
        }
    }
}
