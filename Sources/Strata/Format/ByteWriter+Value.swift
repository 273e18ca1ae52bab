import Foundation

extension ByteWriter {
    /// Appends `value`: with `packed`, in the in-memory record form (a
    /// reference's table as a process-wide name ID, see
    /// `PackedReader.swift`), otherwise in the codec form (the table name
    /// interned per encoding). Everything else is the same bytes.
    mutating func value(_ value: Value, packed: Bool = false) {
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
            tag(.list)
            varint(v.count)
            for element in v { self.value(element, packed: packed) }
        case .map(let v):
            tag(.map)
            varint(v.count)
            for key in v.keys.sorted() {
                string(key.string)
                self.value(v[key]!, packed: packed)
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
