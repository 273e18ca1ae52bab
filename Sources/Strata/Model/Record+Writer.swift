import Foundation

/// A record's packed bytes written value by value, for code in this package
/// that reads records from another format (`strata import`'s JSON lines):
/// a string is copied from the input's bytes, and no `String`, list or
/// `Value` is made per field. The counterpart of ``RecordTokens``.
///
/// Start each field with ``field(_:)``, then write its value: a scalar, or
/// a list (``beginList()``, its items, ``endList(_:count:)``). Fields may
/// come in any order; ``record()`` sorts them by name and starts the next
/// record. One writer serves record after record, keeping its buffers and
/// the name IDs it has looked up.
package struct RecordWriter {
    /// The values written so far, field after field, in packed form.
    private var values = ByteWriter(capacity: 1_024)
    /// Each field's name and where its value starts in `values`.
    private var fields: [(name: Key, start: Int)] = []
    /// The name IDs this writer has looked up. An ID from `FieldNames.id(of:)`
    /// names its string for the life of the process, so it may be kept.
    private var ids: [Key: UInt32] = [:]
    /// The record's bytes while they are put together.
    private var output: [UInt8] = []
    /// The fields' order by name, and a list's head: kept, so that a record
    /// allocates only its own bytes.
    private var order: [Int] = []
    private var head: [UInt8] = []
    /// The names and IDs of the last record's fields by position, and of
    /// the last few references' tables: records of one input mostly repeat
    /// them, and comparing a short name costs less than hashing it.
    private var recentFields: [(name: Key, id: UInt32)] = []
    /// The number of fields of the last record when `recentFields` begins
    /// with all of its names, in its order (ascending, none repeated);
    /// else -1.
    private var recentCount = -1
    private var recentTables: [(name: Key, id: UInt32)] = []
    /// The names of the last record's fields by the position they were
    /// written in, and their UTF-8 bytes (``field(utf8:)``); of the last
    /// few references' tables too (``reference(tableUTF8:id:)``). Lines of
    /// one input mostly repeat them, and comparing a few bytes costs less
    /// than making a name of them.
    private var namesByPosition: [Key] = []
    private var nameBytesByPosition: [[UInt8]] = []
    private var recentTableBytes: [(utf8: [UInt8], name: Key)] = []

    /// An empty writer.
    package init() {}

    /// Starts field `name`; its value is written next. O(1).
    package mutating func field(_ name: Key) {
        fields.append((name, values.bytes.count))
    }

    /// Starts the field whose name's UTF-8 bytes are `utf8`, as
    /// ``field(_:)`` does; false, starting nothing, when they are not
    /// UTF-8. O(length of the name).
    package mutating func field(utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let position = fields.count
        if position < namesByPosition.count, Self.same(utf8, nameBytesByPosition[position]) {
            field(namesByPosition[position])
            return true
        }
        guard let name = Key(utf8: utf8) else { return false }
        if position < namesByPosition.count {
            namesByPosition[position] = name
            nameBytesByPosition[position] = Array(utf8)
        } else if position == namesByPosition.count && position < 64 {
            namesByPosition.append(name)
            nameBytesByPosition.append(Array(utf8))
        }
        field(name)
        return true
    }

    /// Writes null. O(1).
    package mutating func null() { values.tag(.null) }

    /// Writes `value`. O(1).
    package mutating func bool(_ value: Bool) { values.tag(value ? .true : .false) }

    /// Writes `value`. O(1).
    package mutating func int(_ value: Int64) {
        values.tag(.int)
        values.zigzag(value)
    }

    /// Writes `value`. O(1).
    package mutating func double(_ value: Double) {
        values.tag(.double)
        values.fixed64(value.bitPattern)
    }

    /// Writes the date `seconds` after 2001-01-01 UTC
    /// (`timeIntervalSinceReferenceDate`). O(1).
    package mutating func date(_ seconds: Double) {
        values.tag(.date)
        values.fixed64(seconds.bitPattern)
    }

    /// Writes the string whose UTF-8 bytes are `utf8`, or returns false
    /// (writing nothing) when they are not valid UTF-8. O(n).
    package mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        // ASCII is valid as it is; anything else is checked as `String` checks it.
        if !utf8.allSatisfy({ $0 < 0x80 }) {
            guard String(validating: utf8, as: UTF8.self) != nil else { return false }
        }
        values.tag(ValueTag.string)
        values.varint(utf8.count)
        values.bytes.append(contentsOf: utf8)
        return true
    }

    /// Writes a reference to record `id` of `table`, or returns false
    /// (writing nothing) when no record of this process has named the
    /// table yet. Such a record is for the caller to build the general way
    /// (`Record(fields:)`), once it knows the record is kept: a name taken
    /// here would stay in the process's table of names even when the
    /// caller gives the record up. O(1) once the writer has met the table.
    package mutating func reference(table: Key, id: RecordID) -> Bool {
        guard let tableID = tableID(table) else { return false }
        values.tag(.reference)
        values.varint(UInt64(tableID))
        values.recordID(id)
        return true
    }

    /// ``reference(table:id:)`` of the table whose name's UTF-8 bytes are
    /// `tableUTF8`; nil, writing nothing, when they are not UTF-8.
    /// O(length of the name) once the writer has met the table.
    package mutating func reference(tableUTF8: UnsafeBufferPointer<UInt8>, id: RecordID) -> Bool? {
        if let recent = recentTableBytes.first(where: { Self.same(tableUTF8, $0.utf8) }) {
            return reference(table: recent.name, id: id)
        }
        guard let table = Key(utf8: tableUTF8) else { return nil }
        guard reference(table: table, id: id) else { return false }
        if recentTableBytes.count == 4 { recentTableBytes.removeFirst() }
        recentTableBytes.append((Array(tableUTF8), table))
        return true
    }

    private static func same(_ utf8: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8]) -> Bool {
        utf8.count == bytes.count
            && bytes.withUnsafeBufferPointer {
                utf8.isEmpty || memcmp(utf8.baseAddress!, $0.baseAddress!, utf8.count) == 0
            }
    }

    /// Starts a list: its items are the values written until
    /// ``endList(_:count:)`` is given what this returns. O(1).
    package mutating func beginList() -> Int { values.bytes.count }

    /// Ends the list `start` began, of `count` items. O(size of the list).
    package mutating func endList(_ start: Int, count: Int) {
        head.removeAll(keepingCapacity: true)
        head.append(ValueTag.list.rawValue)
        Varint.append(UInt64(count), to: &head)
        values.bytes.insert(contentsOf: head, at: start)
    }

    /// The record of the fields written, which the writer forgets; nil when
    /// two fields have the same name (the writer forgets them too).
    /// O(k log k + size) for k fields; O(k + size) when they repeat the
    /// names of the record before, in its order.
    package mutating func record() -> Record? {
        defer { discard() }
        output.removeAll(keepingCapacity: true)
        Varint.append(UInt64(fields.count), to: &output)
        if fields.count == recentCount, repeatsRecentNames() {
            // The last record's names in its order, which was ascending
            // without a repeat: nothing to sort or check.
            for position in fields.indices {
                Varint.append(UInt64(recentFields[position].id), to: &output)
                appendValue(of: position)
            }
            return Record(_packed: Array(output))
        }
        let fields = self.fields
        order.removeAll(keepingCapacity: true)
        order.append(contentsOf: fields.indices)
        order.sort { fields[$0].name < fields[$1].name }
        // Refused before `recentFields` changes: `recentCount` still holds.
        for (a, b) in zip(order, order.dropFirst()) where fields[a].name == fields[b].name { return nil }
        for (position, index) in order.enumerated() {
            let name = fields[index].name
            let id: UInt32
            if position < recentFields.count, recentFields[position].name == name {
                id = recentFields[position].id
            } else {
                id = nameID(name)
                if position < recentFields.count {
                    recentFields[position] = (name, id)
                } else if recentFields.count < 64 {
                    // As the typed decoder's names by position: a record of
                    // thousands of fields does not keep them all.
                    recentFields.append((name, id))
                }
            }
            Varint.append(UInt64(id), to: &output)
            appendValue(of: index)
        }
        recentCount = fields.count <= recentFields.count ? fields.count : -1
        return Record(_packed: Array(output))
    }

    /// Whether field `i`'s name is `recentFields[i]`'s for every field
    /// (a comparison of equal short names is two words). O(k).
    private func repeatsRecentNames() -> Bool {
        for position in fields.indices where fields[position].name != recentFields[position].name { return false }
        return true
    }

    /// Appends the value of the field written `index`th to `output`: it
    /// ends where the next field's begins.
    private mutating func appendValue(of index: Int) {
        let start = fields[index].start
        let end = index + 1 < fields.count ? fields[index + 1].start : values.bytes.count
        output.append(bytesOf: values.bytes, in: start..<end)
    }

    /// Forgets the fields written since the last record (a reader that
    /// gives up on one). O(k) for k fields.
    package mutating func discard() {
        values.bytes.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
    }

    private mutating func tableID(_ table: Key) -> UInt32? {
        if let recent = recentTables.first(where: { $0.name == table }) { return recent.id }
        guard let id = ids[table] ?? FieldNames.permanentID(of: table) else { return nil }
        if recentTables.count == 4 { recentTables.removeFirst() }
        recentTables.append((table, id))
        return id
    }

    private mutating func nameID(_ name: Key) -> UInt32 {
        if let id = ids[name] { return id }
        let id = FieldNames.id(of: name)
        // Bounded: input of many distinct names does not grow every writer.
        if ids.count >= 4_096 { ids.removeAll(keepingCapacity: true) }
        ids[name] = id
        return id
    }
}
