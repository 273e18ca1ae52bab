import Foundation

/// Appends the primitive encodings: LEB128 varints, zigzag integers,
/// little-endian doubles, length-prefixed strings and bytes, and field names
/// interned per top-level encoding.
struct ByteWriter {
    var bytes: [UInt8] = []
    /// The index of each field name written so far (compared by bytes, so
    /// canonically equivalent names are two names).
    private var names: [Key: UInt64] = [:]
    /// For each process-wide field name ID, its index here plus one (0: not
    /// written yet), so that records write their names without hashing.
    private var indexByID: [UInt64] = []

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func varint(_ value: UInt64) { Varint.append(value, to: &bytes) }

    mutating func tag(_ tag: ValueTag) { bytes.append(tag.rawValue) }

    mutating func tag(_ tag: RecordIDTag) { bytes.append(tag.rawValue) }

    mutating func tag(_ tag: ChangeTag) { bytes.append(tag.rawValue) }

    mutating func varint(_ value: Int) { varint(UInt64(value)) }

    /// Signed integers, small magnitudes in few bytes.
    mutating func zigzag(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func fixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func raw(_ value: [UInt8]) {
        varint(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func uuid(_ value: UUID) {
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
    }

    /// A field name: `0` then the name the first time; `index + 1` after.
    mutating func fieldName(_ name: Key) {
        if let index = names[name] {
            varint(index + 1)
        } else {
            names[name] = UInt64(names.count)
            varint(0 as UInt64)
            string(name.string)
        }
    }

    /// The field name with process-wide ID `id`, interned like `fieldName(_:)`.
    mutating func fieldName(id: UInt32) {
        let slot = Int(id)
        if slot < indexByID.count, indexByID[slot] != 0 {
            varint(indexByID[slot])
            return
        }
        let name = FieldNames.name(id)
        if slot >= indexByID.count { indexByID.append(contentsOf: repeatElement(0, count: slot + 1 - indexByID.count)) }
        fieldName(name)
        indexByID[slot] = names[name]! + 1
    }
}

extension [UInt8] {
    /// Appends `source[range]` through a pointer into `source`: a slice
    /// would retain and release its buffer, per value of every record a
    /// snapshot rewrites (measured 4x slower at 1M records), and a loop
    /// of single appends checks capacity per byte. O(range.count).
    mutating func append(bytesOf source: [UInt8], in range: Range<Int>) {
        source.withUnsafeBufferPointer { append(contentsOf: UnsafeBufferPointer(rebasing: $0[range])) }
    }
}
