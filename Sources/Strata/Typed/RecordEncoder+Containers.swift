import Foundation

/// The `Encoder` a value's `encode(to:)` writes into: one box.
final class _RecordEncoding: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let box: _EncodingBox

    init(codingPath: [any CodingKey], box: _EncodingBox = _EncodingBox()) {
        self.codingPath = codingPath
        self.box = box
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        // A value asking for two kinds of container is a programming error
        // in its encode(to:); the first kind stays and the second writes
        // nowhere (what JSONEncoder does differs by platform).
        KeyedEncodingContainer(_KeyedEncoding(box.becomeKeyed() ? box : _EncodingBox(), codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        _UnkeyedEncoding(box.becomeUnkeyed() ? box : _EncodingBox(), codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        _SingleValueEncoding(box, codingPath: codingPath)
    }
}

/// An index in a list, as a coding key.
struct _IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "[\(intValue ?? 0)]" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// A plain string as a coding key (a super encoder's "super").
struct _NameKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

struct _KeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: _EncodingBox
    let codingPath: [any CodingKey]

    init(_ box: _EncodingBox, codingPath: [any CodingKey]) {
        self.box = box
        self.codingPath = codingPath
    }

    private func put(_ child: _EncodingBox, _ key: any CodingKey) {
        box.keys.append(key.stringValue)
        box.children.append(child)
    }

    private func put(_ value: Value, _ key: any CodingKey) { put(_EncodingBox(value), key) }

    /// nil is an absent field: nothing is written.
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        put(try _EncodingBox.integer(value, codingPath: codingPath + [key]), key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        put(try _EncodingBox.integer(value, codingPath: codingPath + [key]), key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        put(try _EncodingBox.boxing(value, codingPath: codingPath + [key]), key)
    }

    /// The box already under `key` when it is of `kind` (a nested container
    /// asked for twice fills the same one).
    private func existing(_ key: Key, _ kind: _EncodingBox.Kind) -> _EncodingBox? {
        // By UTF-8 bytes, as fields are named: not `String ==`, which takes
        // canonically equivalent spellings for one key.
        let name = Strata.Key(key.stringValue)
        guard let index = box.keys.lastIndex(where: { Strata.Key($0) == name }), box.children[index].kind == kind
        else { return nil }
        return box.children[index]
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        if let child = existing(key, .keyed) {
            return KeyedEncodingContainer(_KeyedEncoding<NestedKey>(child, codingPath: codingPath + [key]))
        }
        let child = _EncodingBox()
        child.kind = .keyed
        put(child, key)
        return KeyedEncodingContainer(_KeyedEncoding<NestedKey>(child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        if let child = existing(key, .unkeyed) { return _UnkeyedEncoding(child, codingPath: codingPath + [key]) }
        let child = _EncodingBox()
        child.kind = .unkeyed
        put(child, key)
        return _UnkeyedEncoding(child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: _NameKey("super")) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    private func superEncoder(named key: any CodingKey) -> any Encoder {
        let child = _EncodingBox()
        put(child, key)
        return _RecordEncoding(codingPath: codingPath + [key], box: child)
    }
}

struct _UnkeyedEncoding: UnkeyedEncodingContainer {
    let box: _EncodingBox
    let codingPath: [any CodingKey]
    var count: Int { box.children.count }

    init(_ box: _EncodingBox, codingPath: [any CodingKey]) {
        self.box = box
        self.codingPath = codingPath
    }

    private var nextPath: [any CodingKey] { codingPath + [_IndexKey(count)] }
    private func put(_ value: Value) { box.children.append(_EncodingBox(value)) }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(value)) }
    mutating func encode(_ value: UInt) throws {
        box.children.append(try _EncodingBox.integer(value, codingPath: nextPath))
    }
    mutating func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws {
        box.children.append(try _EncodingBox.integer(value, codingPath: nextPath))
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        box.children.append(try _EncodingBox.boxing(value, codingPath: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let child = _EncodingBox()
        child.kind = .keyed
        box.children.append(child)
        return KeyedEncodingContainer(_KeyedEncoding<NestedKey>(child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let child = _EncodingBox()
        child.kind = .unkeyed
        box.children.append(child)
        return _UnkeyedEncoding(child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        let child = _EncodingBox()
        box.children.append(child)
        return _RecordEncoding(codingPath: path, box: child)
    }
}

struct _SingleValueEncoding: SingleValueEncodingContainer {
    let box: _EncodingBox
    let codingPath: [any CodingKey]

    init(_ box: _EncodingBox, codingPath: [any CodingKey]) {
        self.box = box
        self.codingPath = codingPath
    }

    private func put(_ value: Value) {
        box.kind = .scalar
        box.scalar = value
    }

    private func put(_ other: _EncodingBox) {
        box.kind = other.kind
        box.scalar = other.scalar
        box.keys = other.keys
        box.children = other.children
    }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(value)) }
    mutating func encode(_ value: UInt) throws { put(try _EncodingBox.integer(value, codingPath: codingPath)) }
    mutating func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { put(try _EncodingBox.integer(value, codingPath: codingPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        put(try _EncodingBox.boxing(value, codingPath: codingPath))
    }
}
