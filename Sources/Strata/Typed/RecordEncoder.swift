import Foundation
import PersistentCollections

/// Encodes `Encodable` values into records, writing the packed record form
/// directly (no `Value` dictionary in between).
///
/// A type's properties become fields; nested structs and dictionaries with
/// string keys become maps, arrays and sets lists; `Bool`, integers (within
/// `Int64`), `Double`/`Float`, `String` map to their ``Value`` cases,
/// `Date` to ``Value/date(_:)``, `Data` to ``Value/bytes(_:)``, `UUID` and
/// `URL` to strings; raw-value enums to their raw values. Sets, and
/// dictionaries whose keys are not strings or integers (lists of keys and
/// values), are written in the order of their elements' bytes, so equal
/// values encode to equal records.
/// A `nil` optional property is an absent field (a `nil` inside a list is
/// ``Value/null``).
///
///     let record = try RecordEncoder().encode(song)    // a Record
///
/// Complexity: O(size of the value), plus sorting each map's keys.
public struct RecordEncoder: Sendable {
    /// A coding key left out at the top level (a ``StoredRecord``'s id).
    public var skippedKey: String?

    /// An encoder leaving out `skippedKey` (by default nothing).
    public init(skippedKey: String? = nil) {
        self.skippedKey = skippedKey
    }

    /// The record holding `value`'s properties as fields.
    /// - Throws: `EncodingError.invalidValue` when `value` is not a keyed
    ///   container (a struct, class or string-keyed dictionary), an integer
    ///   does not fit `Int64`, or a field name is empty.
    public func encode<T: Encodable>(_ value: T) throws -> Record {
        let box = try _EncodingBox.boxing(value, codingPath: [])
        guard box.kind == .keyed || box.kind == .empty else {
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: [],
                    debugDescription: "a record is a struct, a class or a dictionary with string keys"
                )
            )
        }
        return Record(_packed: try box.packedRecord(skipping: skippedKey))
    }
}

/// A collection whose iteration order is not part of its value.
protocol _UnorderedCollection {
    /// Whether it encodes as alternating keys and values (a dictionary
    /// whose keys are not strings or integers).
    static var _encodesPairs: Bool { get }
}

extension Set: _UnorderedCollection {
    static var _encodesPairs: Bool { false }
}

extension Dictionary: _UnorderedCollection {
    static var _encodesPairs: Bool { true }
}

// A persistent map iterates in the order of its keys' hashes, which the
// process's random hash seed decides: it encodes its pairs (key, value,
// key, value) in that order, so without sorting, an unchanged model read
// back in another process would save as a change.
extension PersistentMap: _UnorderedCollection {
    static var _encodesPairs: Bool { true }
}

/// What a value encoded to, before it is written: Codable lets a container
/// be filled in any order (a nested container after its siblings), so the
/// bytes are written once encoding ends.
final class _EncodingBox {
    enum Kind { case empty, scalar, keyed, unkeyed }

    var kind: Kind = .empty
    var scalar: Value = .null
    /// Keyed: `keys[i]` names `children[i]` (a key encoded twice: the last wins).
    var keys: [String] = []
    var children: [_EncodingBox] = []

    init() {}

    init(_ value: Value) {
        kind = .scalar
        scalar = value
    }

    /// Becomes a keyed container (when still empty); false when already another kind.
    func becomeKeyed() -> Bool {
        if kind == .empty { kind = .keyed }
        return kind == .keyed
    }

    /// Becomes an unkeyed container (when still empty); false when already another kind.
    func becomeUnkeyed() -> Bool {
        if kind == .empty { kind = .unkeyed }
        return kind == .unkeyed
    }

    /// The box for `value`: the types with a ``Value`` of their own
    /// directly, the others through their `encode(to:)`.
    static func boxing<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> _EncodingBox {
        switch value {
        case let date as Date: return _EncodingBox(.date(date))
        case let data as Data: return _EncodingBox(.bytes(Array(data)))
        case let uuid as UUID: return _EncodingBox(.string(uuid.uuidString))
        case let url as URL: return _EncodingBox(.string(url.absoluteString))
        default:
            let encoder = _RecordEncoding(codingPath: codingPath)
            try value.encode(to: encoder)
            if let unordered = T.self as? any _UnorderedCollection.Type, encoder.box.kind == .unkeyed {
                encoder.box.sortElements(inPairs: unordered._encodesPairs)
            }
            return encoder.box
        }
    }

    /// This box's packed bytes. O(its size).
    var packedBytes: [UInt8] {
        var writer = ByteWriter(capacity: 32)
        write(to: &writer)
        return Array(writer.bytes[...])
    }

    /// Puts a list's elements (or key-value pairs, by key) in the order of
    /// their packed bytes: a set's or a dictionary's iteration order
    /// differs between equal values, and equal records must encode to
    /// equal bytes (else saving an unchanged model records a change).
    /// O(n log n · element size).
    func sortElements(inPairs: Bool) {
        if inPairs {
            guard children.count % 2 == 0 else { return }
            let pairs = stride(from: 0, to: children.count, by: 2).map {
                (key: children[$0].packedBytes, pair: [children[$0], children[$0 + 1]])
            }
            children = pairs.sorted { $0.key.lexicographicallyPrecedes($1.key) }.flatMap(\.pair)
        } else {
            children = children.map { ($0.packedBytes, $0) }
                .sorted { $0.0.lexicographicallyPrecedes($1.0) }.map(\.1)
        }
    }

    /// `value` as an ``Value/int(_:)``.
    /// - Throws: `EncodingError.invalidValue` beyond `Int64`.
    static func integer<I: BinaryInteger & Encodable>(_ value: I, codingPath: [any CodingKey]) throws -> _EncodingBox {
        guard let int = Int64(exactly: value) else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: codingPath, debugDescription: "\(value) does not fit a 64-bit signed integer")
            )
        }
        return _EncodingBox(.int(int))
    }

    /// The keyed entries, sorted by key bytes, the last of equal keys kept.
    private func sortedEntries() -> [(key: String, box: _EncodingBox)] {
        var entries = Array(zip(keys, children).enumerated())
        // By UTF-8 bytes, as `Key` orders (the record format's order).
        entries.sort { a, b in
            if a.element.0.utf8.elementsEqual(b.element.0.utf8) { return a.offset < b.offset }
            return a.element.0.utf8.lexicographicallyPrecedes(b.element.0.utf8)
        }
        var result: [(key: String, box: _EncodingBox)] = []
        result.reserveCapacity(entries.count)
        for (_, (key, box)) in entries {
            if let last = result.last, last.key.utf8.elementsEqual(key.utf8) {
                result[result.count - 1] = (key, box)
            } else {
                result.append((key, box))
            }
        }
        return result
    }

    /// The record's packed bytes: a keyed box's entries as fields by name ID.
    func packedRecord(skipping skippedKey: String?) throws -> [UInt8] {
        // A nil written as a value (an optional inside a wrapper) is an
        // absent field too.
        let entries = sortedEntries().filter { entry in
            !(entry.box.kind == .scalar && entry.box.scalar == .null)
                && !(skippedKey.map { entry.key.utf8.elementsEqual($0.utf8) } ?? false)
        }
        var writer = ByteWriter(capacity: 16 + 24 * entries.count)
        writer.varint(entries.count)
        for (key, box) in entries {
            guard !key.isEmpty else {
                throw EncodingError.invalidValue(
                    key,
                    .init(codingPath: [], debugDescription: "a field name cannot be empty")
                )
            }
            writer.varint(UInt64(FieldNames.id(of: Key(key))))
            box.write(to: &writer)
        }
        return Array(writer.bytes[...])
    }

    /// Writes this box as one packed value.
    func write(to writer: inout ByteWriter) {
        switch kind {
        case .scalar:
            writer.value(scalar, packed: true)
        case .empty, .keyed:
            let entries = sortedEntries()
            writer.tag(.map)
            writer.varint(entries.count)
            for (key, box) in entries {
                writer.string(key)
                box.write(to: &writer)
            }
        case .unkeyed:
            writer.tag(.list)
            writer.varint(children.count)
            for child in children { child.write(to: &writer) }
        }
    }
}
