import PersistentCollections

/// Writes the entries of a table's indexes straight from records' packed
/// bytes: field names resolved once, not per record, each record's fields
/// walked once for all the indexes, and scalar values transcoded without
/// building a ``Value``. What whole-index builds and checks use (one
/// encoder per task: it reuses its buffers).
struct IndexEntryEncoder {
    let definitions: [IndexDefinition]
    /// The distinct fields the definitions' paths start at, by
    /// process-wide ID (a field no record has is left out: always null).
    private let fieldIDs: [UInt32]
    /// Per definition, per path, its field's position in `fieldIDs`.
    private let slots: [[Int?]]
    /// Every field name by ID, for the table names of references.
    private let names: PersistentVector<Key>
    /// The current record's value ranges, by slot.
    private var ranges: [Range<Int>?]
    private(set) var writer = IndexEntryWriter()

    init(_ definitions: [IndexDefinition]) {
        self.definitions = definitions
        var fieldIDs: [UInt32] = []
        slots = definitions.map { definition in
            definition.fields.map { path -> Int? in
                guard let id = FieldNames.existingID(of: path.field) else { return nil }
                if let slot = fieldIDs.firstIndex(of: id) { return slot }
                fieldIDs.append(id)
                return fieldIDs.count - 1
            }
        }
        self.fieldIDs = fieldIDs
        ranges = Array(repeating: nil, count: fieldIDs.count)
        names = FieldNames.all
    }

    /// Reads where `record` holds the indexed fields, for ``encode(_:_:id:)``.
    /// O(record size).
    mutating func load(_ record: Record) {
        for slot in ranges.indices { ranges[slot] = nil }
        var found = 0
        record._forEachField { id, range in
            if let slot = fieldIDs.firstIndex(of: id) {
                ranges[slot] = range
                found += 1
            }
            return found < fieldIDs.count
        }
    }

    /// The entry bytes of `record` (the one last loaded) in definition
    /// `index`, valid until the next call. O(entry size).
    mutating func encode(_ record: Record, _ index: Int, id: RecordID) -> [UInt8] {
        writer.bytes.removeAll(keepingCapacity: true)
        for (path, slot) in zip(definitions[index].fields, slots[index]) {
            guard let slot, let range = ranges[slot] else {
                writer.value(nil)
                continue
            }
            if path.isField {
                packedValue(of: record, at: range)
            } else {
                writer.value(record._value(at: range)[path: path.keys])
            }
        }
        writer.recordID(id)
        return writer.bytes
    }

    /// Transcodes the packed value at `range`; lists and maps (whose index
    /// encoding orders map keys afresh) go through ``Value``.
    private mutating func packedValue(of record: Record, at range: Range<Int>) {
        let bytes = record._bytes
        var reader = _PackedReader(bytes, offset: range.lowerBound)
        switch reader.valueTag() {
        case .null: writer.value(.null)
        case .false: writer.value(.bool(false))
        case .true: writer.value(.bool(true))
        case .int: writer.int(reader.zigzag())
        case .double: writer.ordered(reader.fixed64(), tag: _IndexTag.double)
        case .date: writer.ordered(reader.fixed64(), tag: _IndexTag.date)
        case .string, .bytes:
            let isString = bytes[range.lowerBound] == ValueTag.string.rawValue
            let length = Int(reader.varint())
            writer.bytes.append(isString ? _IndexTag.string : _IndexTag.bytes)
            writer.body(bytes[reader.offset..<(reader.offset + length)])
        case .reference:
            let tableID = Int(reader.varint())
            let table = tableID < names.count ? names[tableID] : FieldNames.name(UInt32(tableID))
            writer.bytes.append(_IndexTag.reference)
            writer.body(table.string.utf8)
            writer.recordID(reader.recordID())
        case .list, .map:
            writer.value(record._value(at: range))
        }
    }
}
