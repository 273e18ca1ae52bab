import Foundation
import PersistentCollections

/// The `Decoder` a type's `init(from:)` reads: a whole record (its fields
/// are the keyed container) or one packed value.
struct _RecordDecoding: Decoder {
    enum Source {
        case record([UInt8])
        case value(_Slot)
    }

    let source: Source
    let codingPath: [any CodingKey]
    let context: _DecodingContext
    /// The type being decoded, when known: what a map or list found as
    /// another kind was expected to be.
    var decoding: Any.Type?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(record bytes: [UInt8], context: _DecodingContext) {
        source = .record(bytes)
        codingPath = []
        self.context = context
    }

    init(slot: _Slot, codingPath: [any CodingKey], context: _DecodingContext, decoding: Any.Type? = nil) {
        source = .value(slot)
        self.codingPath = codingPath
        self.context = context
        self.decoding = decoding
    }

    private var reader: _ValueReader { _ValueReader(context: context, codingPath: codingPath) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch source {
        case .record(let bytes):
            // The container of the previous record, when it was of this
            // key type: pointed at this record instead of made anew.
            if let cached = context.recordContainer, cached.keyType == ObjectIdentifier(Key.self) {
                // Same key type, so the cache is a `_CachedContainer<Key>`:
                // no dynamic cast (one costs more than making a container).
                let entry = unsafeDowncast(cached.entry, to: _CachedContainer<Key>.self)
                entry.storage.reset(record: bytes)
                return entry.container
            }
            let storage = _KeyedStorage(record: bytes, codingPath: codingPath, context: context)
            let entry = _CachedContainer<Key>(storage: storage)
            context.recordContainer = (ObjectIdentifier(Key.self), entry)
            return entry.container
        case .value(let slot):
            return try reader.keyed(slot, as: decoding ?? [String: Value].self)
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch source {
        case .record:
            context.fail(codingPath, expected: [Value].self, found: "record")
            throw DecodingError.typeMismatch(
                [Value].self,
                .init(codingPath: codingPath, debugDescription: "a record is keyed by its fields")
            )
        case .value(let slot):
            return try reader.unkeyed(slot, as: decoding ?? [Value].self)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        switch source {
        case .record(let bytes):
            // A record read as one value: a value decoded from it (a
            // wrapper's payload) reads the record itself, with its ID and
            // the schema, as the payload's own fields were written into the
            // record. The slot is a map only for what a primitive read
            // finds instead (its kind): its fields are never read.
            var container = _SingleValueDecoding(
                slot: _Slot(.map(PersistentMap())),
                codingPath: codingPath,
                context: context
            )
            container.record = bytes
            return container
        case .value(let slot):
            return _SingleValueDecoding(slot: slot, codingPath: codingPath, context: context)
        }
    }
}

/// A record container kept by the decoding context for the next record
/// of the same key type.
final class _CachedContainer<Key: CodingKey> {
    let storage: _KeyedStorage
    let container: KeyedDecodingContainer<Key>

    init(storage: _KeyedStorage) {
        self.storage = storage
        container = KeyedDecodingContainer(_KeyedDecoding<Key>(storage: storage))
    }
}

/// The keyed container of a record or a map: forwards to ``_KeyedStorage``.
struct _KeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let storage: _KeyedStorage

    init(storage: _KeyedStorage) {
        self.storage = storage
    }

    init(map slot: _Slot, codingPath: [any CodingKey], context: _DecodingContext) {
        storage = _KeyedStorage(map: slot, codingPath: codingPath, context: context)
    }

    var codingPath: [any CodingKey] { storage.codingPath }
    var allKeys: [Key] { storage.allNames.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { storage.contains(key) }
    func decodeNil(forKey key: Key) throws -> Bool { try storage.decodeNil(forKey: key) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try storage.decode(type, forKey: key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try storage.decode(type, forKey: key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try storage.decode(type, forKey: key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try storage.decode(type, forKey: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try storage.decode(type, forKey: key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try storage.decode(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try storage.decode(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try storage.decode(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try storage.decode(type, forKey: key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try storage.decode(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try storage.decode(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try storage.decode(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try storage.decode(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try storage.decode(type, forKey: key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try storage.decode(type, forKey: key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try storage.decodeIfPresent(type, forKey: key)
    }
    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try storage.nestedContainer(keyedBy: type, forKey: key)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try storage.nestedUnkeyedContainer(forKey: key)
    }
    func superDecoder() throws -> any Decoder { try storage.superDecoder() }
    func superDecoder(forKey key: Key) throws -> any Decoder { try storage.superDecoder(forKey: key) }
}

/// A keyed container's state and logic, shared by every coding-key type:
/// not generic, so that it runs specialized whatever `Key` the type's
/// `init(from:)` uses (a generic container runs through value witnesses,
/// several times slower per field).
final class _KeyedStorage {
    let codingPath: [any CodingKey]
    let context: _DecodingContext
    /// The record's bytes, or the map's.
    private(set) var bytes: [UInt8]
    /// A map: each key's UTF-8 range and where its value starts, in key order.
    private var entries: [(key: Range<Int>, start: Int)] = []
    private let isRecord: Bool

    init(record bytes: [UInt8], codingPath: [any CodingKey], context: _DecodingContext) {
        self.bytes = bytes
        self.codingPath = codingPath
        self.context = context
        isRecord = true
        // The field table lives in the context: one buffer for every record.
        context.begin(bytes)
    }

    /// Points a record's container at the next record.
    func reset(record bytes: [UInt8]) {
        self.bytes = bytes
        context.begin(bytes)
    }

    init(map slot: _Slot, codingPath: [any CodingKey], context: _DecodingContext) {
        bytes = slot.bytes
        self.codingPath = codingPath
        self.context = context
        isRecord = false
        var reader = slot.reader
        _ = reader.byte()
        let count = Int(reader.varint())
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let length = Int(reader.varint())
            let key = reader.offset..<(reader.offset + length)
            reader.offset += length
            entries.append((key, reader.offset))
            reader.skipValue()
        }
    }

    var allNames: [String] {
        var names: [String]
        if isRecord {
            let all = FieldNames.all
            let schema = context.schema
            // Each stored field under the name it has now, at the end of
            // its chain of renames (and not also under its old names: a
            // dictionary would hold the value twice, an enum see two cases).
            names = context.fields.map { schema.newestName(of: all[Int($0.id)].string) }
            names += schema.defaults.keys
            if let idKey = context.idKey, context.recordID != nil { names.append(idKey) }
        } else {
            names = entries.map { String(decoding: bytes[$0.key], as: UTF8.self) }
        }
        // Distinct by UTF-8 bytes, as fields are.
        var seen = Set<Strata.Key>()
        return names.filter { seen.insert(Strata.Key($0)).inserted }
    }

    /// The stored value of field or key `name`, as stored.
    private func stored(_ name: String) -> _Slot? {
        if isRecord {
            return context.start(of: context.nameID(name).id).map { _Slot(bytes: bytes, offset: $0) }
        }
        // Keys are in UTF-8 byte order: a binary search.
        let target = Array(name.utf8)
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let order = Self.compare(bytes[entries[middle].key], target)
            if order == 0 { return _Slot(bytes: bytes, offset: entries[middle].start) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    private static func compare(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// The value `key` reads: the record's ID for the ID key; the field;
    /// for a record under a schema, a renamed field's old one, upcast, or
    /// the default. Nil when there is none. `type`, what the caller reads,
    /// names what was expected when an upcaster fails.
    private func slot(_ key: any CodingKey, as type: Any.Type = Any.self, transformed: Bool = true) throws -> _Slot? {
        try slot(named: key.stringValue, key: key, as: type, transformed: transformed)
    }

    private func slot(
        named name: String,
        key: any CodingKey,
        as type: Any.Type = Any.self,
        transformed: Bool = true
    ) throws -> _Slot? {
        guard isRecord else { return stored(name) }
        let resolved = context.nameID(name)
        if resolved.isRecordIDKey, let recordID = context.recordID {
            switch recordID.kind {
            case .integer(let value): return _Slot(.int(value))
            case .string(let value): return _Slot(.string(value))
            case .uuid(let value): return _Slot(.string(value.uuidString))
            }
        }
        var slot = context.start(of: resolved.id).map { _Slot(bytes: bytes, offset: $0) }
        if context.schemaIsEmpty { return slot }
        let schema = context.schema
        if slot == nil {
            for old in schema.oldNames(of: name) {
                if let found = stored(old) {
                    slot = found
                    break
                }
            }
        }
        if transformed, let found = slot, let upcaster = schema.upcaster(for: name) {
            do {
                slot = _Slot(try upcaster(found.value))
            } catch {
                context.fail(codingPath + [key], expected: type, found: found.kind)
                throw DecodingError.dataCorrupted(
                    .init(codingPath: codingPath + [key], debugDescription: "the upcaster failed: \(error)")
                )
            }
        }
        if slot == nil, let value = schema.defaultValue(for: name) { slot = _Slot(value) }
        return slot
    }

    private func required(_ key: any CodingKey, _ type: Any.Type) throws -> _Slot {
        guard let slot = try slot(key, as: type) else {
            context.fail(codingPath + [key], expected: type, found: "nothing")
            throw DecodingError.keyNotFound(
                key,
                .init(codingPath: codingPath, debugDescription: "no field '\(key.stringValue)'")
            )
        }
        return slot
    }

    private func reader(_ key: any CodingKey) -> _ValueReader {
        _ValueReader(context: context, parent: codingPath, key: key)
    }

    func contains(_ key: any CodingKey) -> Bool { (try? slot(key, transformed: false)) != nil }

    func decodeNil(forKey key: any CodingKey) throws -> Bool { try slot(key)?.isNull ?? true }

    /// What the fast path of a record without a schema finds for `key`:
    /// a field (a reader past its tag), the record's ID, or nothing (the
    /// general path then reads it, or says why it cannot).
    private enum Direct {
        case field(_PackedReader, ValueTag)
        case recordID(RecordID)
        case none
    }

    private func direct(_ key: any CodingKey) -> Direct {
        guard isRecord, context.schemaIsEmpty else { return .none }
        let resolved = context.nameID(key.stringValue)
        if resolved.isRecordIDKey, let recordID = context.recordID { return .recordID(recordID) }
        guard !resolved.isRecordIDKey, let start = context.start(of: resolved.id) else {
            context.rewindName()
            return .none
        }
        var reader = _PackedReader(bytes, offset: start)
        let tag = reader.valueTag()
        return .field(reader, tag)
    }

    func decode(_ type: Bool.Type, forKey key: any CodingKey) throws -> Bool {
        if case .field(_, let tag) = direct(key), tag == .true || tag == .false { return tag == .true }
        return try reader(key).bool(required(key, type))
    }

    func decode(_ type: String.Type, forKey key: any CodingKey) throws -> String {
        switch direct(key) {
        case .field(var reader, .string): return reader.string()
        case .recordID(let id):
            if case .string(let value) = id.kind { return value }
        default: break
        }
        return try reader(key).string(required(key, type))
    }

    func decode(_ type: Double.Type, forKey key: any CodingKey) throws -> Double {
        switch direct(key) {
        case .field(var reader, .double): return Double(bitPattern: reader.fixed64())
        case .field(var reader, .int):
            if let value = Double(exactly: reader.zigzag()) { return value }
            // Not exact: the general path below says so.
            context.rewindName()
            return try self.reader(key).double(required(key, type))
        default: return try reader(key).double(required(key, type))
        }
    }

    func decode(_ type: Float.Type, forKey key: any CodingKey) throws -> Float {
        try reader(key).float(required(key, type))
    }

    /// The fast path's integer: an int field, or the record's integer ID.
    private func directInteger(_ key: any CodingKey) -> Int64? {
        switch direct(key) {
        case .field(var reader, .int): return reader.zigzag()
        case .recordID(let id):
            if case .integer(let value) = id.kind { return value }
            return nil
        default: return nil
        }
    }

    func decode(_ type: Int.Type, forKey key: any CodingKey) throws -> Int {
        if let value = directInteger(key).flatMap({ Int(exactly: $0) }) { return value }
        return try reader(key).integer(type, required(key, type))
    }

    func decode(_ type: Int8.Type, forKey key: any CodingKey) throws -> Int8 {
        try reader(key).integer(type, required(key, type))
    }
    func decode(_ type: Int16.Type, forKey key: any CodingKey) throws -> Int16 {
        try reader(key).integer(type, required(key, type))
    }
    func decode(_ type: Int32.Type, forKey key: any CodingKey) throws -> Int32 {
        try reader(key).integer(type, required(key, type))
    }
    func decode(_ type: Int64.Type, forKey key: any CodingKey) throws -> Int64 {
        if let value = directInteger(key) { return value }
        return try reader(key).int64(required(key, type))
    }
    func decode(_ type: UInt.Type, forKey key: any CodingKey) throws -> UInt {
        try reader(key).integer(type, required(key, type))
    }
    func decode(_ type: UInt8.Type, forKey key: any CodingKey) throws -> UInt8 {
        try reader(key).integer(type, required(key, type))
    }
    func decode(_ type: UInt16.Type, forKey key: any CodingKey) throws -> UInt16 {
        try reader(key).integer(type, required(key, type))
    }
    func decode(_ type: UInt32.Type, forKey key: any CodingKey) throws -> UInt32 {
        try reader(key).integer(type, required(key, type))
    }
    func decode(_ type: UInt64.Type, forKey key: any CodingKey) throws -> UInt64 {
        try reader(key).integer(type, required(key, type))
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: any CodingKey) throws -> T {
        if let slot = try slot(key, as: type) { return try reader(key).decode(type, slot) }
        // A record keeps no nulls: a nil written through `encode(_:forKey:)`
        // (an optional behind a generic parameter or a property wrapper) is
        // an absent field, and reads back as the nil it was.
        if let value = try? reader(key).decode(type, _Slot(.null)) { return value }
        return try reader(key).decode(type, required(key, type))
    }

    /// A missing field or a null reads as nil; any other value must decode.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: any CodingKey) throws -> T? {
        guard let slot = try slot(key, as: type), !slot.isNull else { return nil }
        return try reader(key).decode(type, slot)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: any CodingKey
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try reader(key).keyed(required(key, [String: Value].self))
    }

    func nestedUnkeyedContainer(forKey key: any CodingKey) throws -> any UnkeyedDecodingContainer {
        try reader(key).unkeyed(required(key, [Value].self))
    }

    func superDecoder() throws -> any Decoder { try superDecoder(named: _NameKey("super")) }
    func superDecoder(forKey key: any CodingKey) throws -> any Decoder { try superDecoder(named: key) }

    private func superDecoder(named key: any CodingKey) throws -> any Decoder {
        // By name: a type's CodingKeys have no "super" case.
        guard let slot = try slot(named: key.stringValue, key: key) else {
            return _RecordDecoding(slot: _Slot(.null), codingPath: codingPath + [key], context: context)
        }
        return _RecordDecoding(slot: slot, codingPath: codingPath + [key], context: context)
    }
}

struct _UnkeyedDecoding: UnkeyedDecodingContainer {
    let codingPath: [any CodingKey]
    let context: _DecodingContext
    let bytes: [UInt8]
    let count: Int?
    private(set) var currentIndex = 0
    /// Where the next element's tag is.
    private var offset: Int

    init(list slot: _Slot, codingPath: [any CodingKey], context: _DecodingContext) {
        bytes = slot.bytes
        self.codingPath = codingPath
        self.context = context
        var reader = slot.reader
        _ = reader.byte()
        count = Int(reader.varint())
        offset = reader.offset
    }

    var isAtEnd: Bool { currentIndex >= count! }

    /// Decodes the next element with `body`, moving past it only when that
    /// succeeds (a caller may try another type on the same element).
    private mutating func decodeNext<T>(_ type: Any.Type, _ body: (_Slot, _ValueReader) throws -> T) throws -> T {
        guard !isAtEnd else {
            let path = codingPath + [_IndexKey(currentIndex)]
            context.fail(path, expected: type, found: "nothing")
            throw DecodingError.valueNotFound(
                type,
                .init(codingPath: path, debugDescription: "the list has only \(count!) elements")
            )
        }
        let slot = _Slot(bytes: bytes, offset: offset)
        let result = try body(slot, _ValueReader(context: context, parent: codingPath, key: _IndexKey(currentIndex)))
        var reader = slot.reader
        reader.skipValue()
        offset = reader.offset
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, _Slot(bytes: bytes, offset: offset).isNull else { return false }
        try decodeNext(Never.self) { _, _ in }
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeNext(type) { try $1.bool($0) } }
    mutating func decode(_ type: String.Type) throws -> String { try decodeNext(type) { try $1.string($0) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try decodeNext(type) { try $1.double($0) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodeNext(type) { try $1.float($0) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeNext(type) { try $1.decode(type, $0) } }

    private mutating func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        try decodeNext(type) { try $1.integer(type, $0) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decodeNext([String: Value].self) { try $1.keyed($0) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try decodeNext([Value].self) { try $1.unkeyed($0) }
    }

    mutating func superDecoder() throws -> any Decoder {
        let context = context
        return try decodeNext(Any.self) { slot, reader in
            _RecordDecoding(slot: slot, codingPath: reader.codingPath, context: context)
        }
    }
}

struct _SingleValueDecoding: SingleValueDecodingContainer {
    let slot: _Slot
    let codingPath: [any CodingKey]
    let context: _DecodingContext
    /// The packed record when this is a whole record's single value: a
    /// `Decodable` read from it gets the record's keyed container.
    var record: [UInt8]?

    init(slot: _Slot, codingPath: [any CodingKey], context: _DecodingContext) {
        self.slot = slot
        self.codingPath = codingPath
        self.context = context
    }

    private var reader: _ValueReader { _ValueReader(context: context, codingPath: codingPath) }

    func decodeNil() -> Bool { slot.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try reader.bool(slot) }
    func decode(_ type: String.Type) throws -> String { try reader.string(slot) }
    func decode(_ type: Double.Type) throws -> Double { try reader.double(slot) }
    func decode(_ type: Float.Type) throws -> Float { try reader.float(slot) }
    func decode(_ type: Int.Type) throws -> Int { try reader.integer(type, slot) }
    func decode(_ type: Int8.Type) throws -> Int8 { try reader.integer(type, slot) }
    func decode(_ type: Int16.Type) throws -> Int16 { try reader.integer(type, slot) }
    func decode(_ type: Int32.Type) throws -> Int32 { try reader.integer(type, slot) }
    func decode(_ type: Int64.Type) throws -> Int64 { try reader.int64(slot) }
    func decode(_ type: UInt.Type) throws -> UInt { try reader.integer(type, slot) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try reader.integer(type, slot) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try reader.integer(type, slot) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try reader.integer(type, slot) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try reader.integer(type, slot) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let record { return try T(from: _RecordDecoding(record: record, context: context)) }
        return try reader.decode(type, slot)
    }
}
