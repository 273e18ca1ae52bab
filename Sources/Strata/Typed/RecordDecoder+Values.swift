import Foundation

/// One packed value: its bytes and where its tag is.
struct _Slot {
    let bytes: [UInt8]
    let offset: Int

    /// A value that is not in a record (an ID, a default, an upcast value),
    /// packed on its own.
    init(_ value: Value) {
        var writer = ByteWriter(capacity: 16)
        writer.value(value, packed: true)
        bytes = Array(writer.bytes[...])
        offset = 0
    }

    init(bytes: [UInt8], offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    var reader: _PackedReader { _PackedReader(bytes, offset: offset) }
    var tag: ValueTag { ValueTag(byte: bytes[offset])! }
    var isNull: Bool { tag == .null }
    /// The whole value, built. O(its size).
    var value: Value {
        var reader = reader
        return reader.value()
    }

    /// The kind of value, as errors name it.
    var kind: String {
        switch tag {
        case .null: return "null"
        case .false, .true: return "bool"
        case .int: return "int"
        case .double: return "double"
        case .string: return "string"
        case .bytes: return "bytes"
        case .date: return "date"
        case .reference: return "reference"
        case .list: return "list"
        case .map: return "map"
        }
    }
}

/// Reading values of Swift types from slots; a value of another kind
/// throws `typeMismatch` (and records what was found in the context).
struct _ValueReader {
    let context: _DecodingContext
    /// The path of the container read from, and the key read (nil: the
    /// container's own value). The whole path is built only when needed
    /// (an error, a nested container): not once per field read.
    let parent: [any CodingKey]
    let key: (any CodingKey)?

    init(context: _DecodingContext, codingPath: [any CodingKey]) {
        self.context = context
        parent = codingPath
        key = nil
    }

    init(context: _DecodingContext, parent: [any CodingKey], key: any CodingKey) {
        self.context = context
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] { key.map { parent + [$0] } ?? parent }

    func mismatch(_ type: Any.Type, _ slot: _Slot) -> DecodingError {
        context.fail(codingPath, expected: type, found: slot.kind)
        if slot.isNull {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "the value is null"))
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found \(slot.kind)"))
    }

    func corrupted(_ type: Any.Type, _ slot: _Slot, _ why: String) -> DecodingError {
        context.fail(codingPath, expected: type, found: slot.kind)
        return .dataCorrupted(.init(codingPath: codingPath, debugDescription: why))
    }

    func bool(_ slot: _Slot) throws -> Bool {
        switch slot.tag {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, slot)
        }
    }

    func int64(_ slot: _Slot, as type: Any.Type = Int64.self) throws -> Int64 {
        guard slot.tag == .int else { throw mismatch(type, slot) }
        var reader = slot.reader
        _ = reader.byte()
        return reader.zigzag()
    }

    func integer<I: FixedWidthInteger>(_ type: I.Type, _ slot: _Slot) throws -> I {
        let value = try int64(slot, as: type)
        guard let result = I(exactly: value) else { throw corrupted(type, slot, "\(value) does not fit \(type)") }
        return result
    }

    /// A double, or an integer read as one (a field that widened) when
    /// the double holds it exactly: beyond 2^53 most integers have none.
    func double(_ slot: _Slot) throws -> Double {
        var reader = slot.reader
        switch reader.valueTag() {
        case .double: return Double(bitPattern: reader.fixed64())
        case .int:
            let int = reader.zigzag()
            guard let value = Double(exactly: int) else { throw corrupted(Double.self, slot, "\(int) is not a Double") }
            return value
        default: throw mismatch(Double.self, slot)
        }
    }

    /// A double or an integer that a `Float` holds exactly (infinities
    /// and NaN pass). A double written otherwise (`4.7` from an import, a
    /// `Double` field before) is refused, not rounded: a schema upcaster
    /// for the field (``RecordSchema/upcasters``) can round it on purpose.
    func float(_ slot: _Slot) throws -> Float {
        if slot.tag == .int {
            var reader = slot.reader
            _ = reader.byte()
            let int = reader.zigzag()
            guard let value = Float(exactly: int) else { throw corrupted(Float.self, slot, "\(int) is not a Float") }
            return value
        }
        let value = try double(slot)
        guard !value.isFinite || abs(value) <= Double(Float.greatestFiniteMagnitude) else {
            throw corrupted(Float.self, slot, "\(value) does not fit Float")
        }
        // A Float the encoder wrote is stored as the double that equals
        // it; any other double (a Double field before, an import) would
        // read rounded, and a save of the unchanged model would then
        // write the rounded value back.
        guard !value.isFinite || Float(exactly: value) != nil else {
            throw corrupted(Float.self, slot, "\(value) is not a Float (a schema upcaster can round it)")
        }
        return Float(value)
    }

    func string(_ slot: _Slot, as type: Any.Type = String.self) throws -> String {
        guard slot.tag == .string else { throw mismatch(type, slot) }
        var reader = slot.reader
        _ = reader.byte()
        return reader.string()
    }

    func date(_ slot: _Slot) throws -> Date {
        guard slot.tag == .date else { throw mismatch(Date.self, slot) }
        var reader = slot.reader
        _ = reader.byte()
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: reader.fixed64()))
    }

    func data(_ slot: _Slot) throws -> Data {
        guard slot.tag == .bytes else { throw mismatch(Data.self, slot) }
        var reader = slot.reader
        _ = reader.byte()
        let length = Int(reader.varint())
        return Data(slot.bytes[reader.offset..<(reader.offset + length)])
    }

    func uuid(_ slot: _Slot) throws -> UUID {
        let text = try string(slot, as: UUID.self)
        guard let uuid = UUID(uuidString: text) else { throw corrupted(UUID.self, slot, "'\(text)' is not a UUID") }
        return uuid
    }

    func url(_ slot: _Slot) throws -> URL {
        let text = try string(slot, as: URL.self)
        guard let url = URL(string: text) else { throw corrupted(URL.self, slot, "'\(text)' is not a URL") }
        return url
    }

    /// A map's keyed container, for a value of `type`. - Throws:
    /// `typeMismatch` for another kind.
    func keyed<Key: CodingKey>(
        _ slot: _Slot,
        as type: Any.Type = [String: Value].self
    ) throws -> KeyedDecodingContainer<Key> {
        guard slot.tag == .map else { throw mismatch(type, slot) }
        return KeyedDecodingContainer(_KeyedDecoding<Key>(map: slot, codingPath: codingPath, context: context))
    }

    /// A list's unkeyed container, for a value of `type`. - Throws:
    /// `typeMismatch` for another kind.
    func unkeyed(_ slot: _Slot, as type: Any.Type = [Value].self) throws -> any UnkeyedDecodingContainer {
        guard slot.tag == .list else { throw mismatch(type, slot) }
        return _UnkeyedDecoding(list: slot, codingPath: codingPath, context: context)
    }

    /// A value of type `T`: the types with a ``Value`` of their own read
    /// directly, the others through their `init(from:)`.
    func decode<T: Decodable>(_ type: T.Type, _ slot: _Slot) throws -> T {
        switch type {
        case is String.Type: return try string(slot) as! T
        case is Int.Type: return try integer(Int.self, slot) as! T
        case is Int64.Type: return try int64(slot) as! T
        case is Double.Type: return try double(slot) as! T
        case is Bool.Type: return try bool(slot) as! T
        case is Date.Type: return try date(slot) as! T
        case is Data.Type: return try data(slot) as! T
        case is UUID.Type: return try uuid(slot) as! T
        case is URL.Type: return try url(slot) as! T
        default:
            let value = try T(
                from: _RecordDecoding(slot: slot, codingPath: codingPath, context: context, decoding: T.self)
            )
            // A stored map's keys and list's strings differ by their bytes,
            // a `[String: V]`'s keys and a `Set<String>`'s elements by
            // canonical equivalence: "caf\u{E9}" and "cafe\u{301}" would
            // become one (the other's value lost, and saving the model back
            // would delete it).
            if slot.tag == .map || slot.tag == .list, let strings = value as? any _StringCollection {
                try checkDistinct(strings._count, slot, type)
            }
            // A map read into `[Int: V]` (or keys of another type): "1" and
            // "01" would become one key, and "007" would be saved back as "7".
            if slot.tag == .map, let keyed = value as? any _KeyedByCodingKeys {
                try checkKeys(keyed._keyTexts, slot, type)
            }
            return value
        }
    }

    /// Refuses a dictionary read from the map at `slot` whose keys, written
    /// back (`texts`), are not the map's keys: keys merged (two stored keys
    /// read as one) or rewritten (a key stored in another form than its
    /// type writes). Saving such a model back would change the map.
    private func checkKeys(_ texts: [String], _ slot: _Slot, _ type: Any.Type) throws {
        // `[String: V]` keys are checked by `checkDistinct`.
        if type is any _StringCollection.Type { return }
        var reader = slot.reader
        _ = reader.valueTag()
        let count = Int(reader.varint())
        var written = Set(texts.map { Strata.Key($0) })
        for _ in 0..<count {
            let key = Strata.Key(reader.string())
            guard written.remove(key) != nil else {
                let why =
                    texts.count < count
                    ? "reads as the same key as another: the model would merge them"
                    : "is not written as the model writes its keys: it would be saved back renamed"
                throw corrupted(type, slot, "the map's key \(Value.quoted(key.string)) \(why)")
            }
            reader.skipValue()
        }
    }

    /// Refuses a `[String: V]` or `Set<String>` of `count` read from the
    /// map or list at `slot` whose keys or strings differ only in Unicode
    /// normalization. (A list's strings equal in their bytes a set drops,
    /// as sets do; a map's keys are distinct in their bytes.)
    private func checkDistinct(_ count: Int, _ slot: _Slot, _ type: Any.Type) throws {
        var reader = slot.reader
        let isMap = reader.valueTag() == .map
        let stored = Int(reader.varint())
        guard count != stored else { return }
        var distinct = stored
        if !isMap {
            var strings = Set<Key>()
            for _ in 0..<stored where reader.valueTag() == .string { strings.insert(Key(reader.string())) }
            distinct = strings.count
        }
        guard distinct != count else { return }
        let what = isMap ? "map's \(stored) keys" : "list's \(distinct) distinct strings"
        throw corrupted(
            type,
            slot,
            "the \(what) are \(count) distinct Strings: some differ only in Unicode normalization"
        )
    }
}

/// A dictionary whose keys are stored as map keys through their coding
/// keys (`[Int: V]`, an enum keyed dictionary), other than `[String: V]`.
protocol _KeyedByCodingKeys {
    /// How each key is written as a map key.
    var _keyTexts: [String] { get }
}

extension Dictionary: _KeyedByCodingKeys where Key: CodingKeyRepresentable {
    var _keyTexts: [String] { keys.map { $0.codingKey.stringValue } }
}

/// A `[String: V]` or a `Set<String>`: its keys or elements compare by
/// canonical equivalence, where a stored map's keys and a list's strings
/// compare by their bytes.
protocol _StringCollection {
    var _count: Int { get }
}

extension Dictionary: _StringCollection where Key == String {
    var _count: Int { count }
}

extension Set: _StringCollection where Element == String {
    var _count: Int { count }
}
