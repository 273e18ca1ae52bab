import Foundation
import PersistentCollections

/// A schema-less field value.
///
/// Scalars are stored inline; lists, nested maps and references are boxed so
/// that a `Value` stays 17 bytes (a `String` is the largest inline payload)
/// and a record of 20 fields is one small allocation.
///
/// Equality is exact: doubles compare by bit pattern, so `.double(.nan)`
/// equals itself (the database algebra needs `==` to be reflexive) and
/// `0.0` and `-0.0` differ; dates compare by their `timeIntervalSinceReferenceDate` bits;
/// strings, and the keys of nested maps (``Key``), compare by their UTF-8
/// bytes (a database keeps the bytes it was given, so canonically
/// equivalent but differently encoded strings differ).
public enum Value: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case date(Date)
    indirect case reference(RecordReference)
    indirect case list(PersistentVector<Value>)
    indirect case map(PersistentMap<Key, Value>)
}

extension Value: Hashable {
    /// Exact equality (doubles and dates by bit pattern). O(size) for lists
    /// and maps, with the structure they share skipped; values nested
    /// thousands deep are compared without recursion.
    public static func == (lhs: Value, rhs: Value) -> Bool {
        lhs._isEqual(to: rhs, levelsAbove: 0)
    }

    /// `==` for a value `levelsAbove` lists and maps deep: below
    /// ``recursionLimit`` levels by recursion, deeper by comparing the
    /// canonical encodings (written without recursion: equal values, and
    /// only they, have equal bytes).
    func _isEqual(to other: Value, levelsAbove: Int) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern
        case let (.string(a), .string(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.bytes(a), .bytes(b)): return a == b
        case let (.date(a), .date(b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case let (.reference(a), .reference(b)): return a == b
        case let (.list(a), .list(b)):
            guard a.count == b.count else { return false }
            if a.isIdentical(to: b) { return true }
            guard levelsAbove < Self.recursionLimit else { return Self._encodingsEqual(self, other) }
            return a.isEqual(to: b) { $0._isEqual(to: $1, levelsAbove: levelsAbove + 1) }
        case let (.map(a), .map(b)):
            guard a.count == b.count else { return false }
            if a.isIdentical(to: b) { return true }
            guard levelsAbove < Self.recursionLimit else { return Self._encodingsEqual(self, other) }
            return a.isEqual(to: b) { $0._isEqual(to: $1, levelsAbove: levelsAbove + 1) }
        default: return false
        }
    }

    static func _encodingsEqual(_ a: Value, _ b: Value) -> Bool {
        BinaryCodec.encode(a) == BinaryCodec.encode(b)
    }

    /// Hashes consistently with `==`. O(size) for lists and maps.
    public func hash(into hasher: inout Hasher) {
        _hash(into: &hasher, levelsAbove: 0)
    }

    /// `hash(into:)` for a value `levelsAbove` lists and maps deep: deeper
    /// than ``recursionLimit``, the canonical encoding's bytes (equal
    /// values reach that depth alike, so they still hash alike).
    func _hash(into hasher: inout Hasher, levelsAbove: Int) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .int(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .double(let value): hasher.combine(3 as UInt8); hasher.combine(value.bitPattern)
        case .string(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value.utf8.count)
            for byte in value.utf8 { hasher.combine(byte) }
        case .bytes(let value): hasher.combine(5 as UInt8); hasher.combine(value)
        case .date(let value):
            hasher.combine(6 as UInt8)
            hasher.combine(value.timeIntervalSinceReferenceDate.bitPattern)
        case .reference(let value): hasher.combine(7 as UInt8); hasher.combine(value)
        case .list where levelsAbove >= Self.recursionLimit, .map where levelsAbove >= Self.recursionLimit:
            hasher.combine(10 as UInt8)
            hasher.combine(BinaryCodec.encode(self))
        case .list(let elements):
            hasher.combine(8 as UInt8)
            hasher.combine(elements.count)
            for element in elements { element._hash(into: &hasher, levelsAbove: levelsAbove + 1) }
        case .map(let entries):
            hasher.combine(9 as UInt8)
            entries.hash(into: &hasher) { value, entry in value._hash(into: &entry, levelsAbove: levelsAbove + 1) }
        }
    }
}

// MARK: Literals

// Deliberately not `ExpressibleByNilLiteral`: with `Value?` everywhere (a
// missing field), `nil` must always mean absent, never `.null`.
extension Value: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `.list`.
    public init(arrayLiteral elements: Value...) { self = .list(PersistentVector(elements)) }
    /// `.map`; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (Key, Value)...) {
        self = .map(PersistentMap(elements, uniquingKeysWith: { _, new in new }))
    }
}

// MARK: Reading

extension Value {
    /// The boolean, or nil for another kind.
    public var boolValue: Bool? { if case .bool(let v) = self { return v } else { return nil } }
    /// The integer, or nil for another kind.
    public var intValue: Int64? { if case .int(let v) = self { return v } else { return nil } }
    /// The double (integers widen), or nil for another kind.
    public var doubleValue: Double? {
        switch self {
        case .double(let v): return v
        case .int(let v): return Double(v)
        default: return nil
        }
    }
    /// The string, or nil for another kind.
    public var stringValue: String? { if case .string(let v) = self { return v } else { return nil } }
    /// The bytes, or nil for another kind.
    public var bytesValue: [UInt8]? { if case .bytes(let v) = self { return v } else { return nil } }
    /// The date, or nil for another kind.
    public var dateValue: Date? { if case .date(let v) = self { return v } else { return nil } }
    /// The reference, or nil for another kind.
    public var referenceValue: RecordReference? { if case .reference(let v) = self { return v } else { return nil } }
    /// The list, or nil for another kind.
    public var listValue: PersistentVector<Value>? { if case .list(let v) = self { return v } else { return nil } }
    /// The nested map, or nil for another kind.
    public var mapValue: PersistentMap<Key, Value>? { if case .map(let v) = self { return v } else { return nil } }
    /// Whether this is `.null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The value at a nested path of map keys, or nil where the path leaves
    /// the maps. An empty path is the value itself. O(depth · log16 n).
    public subscript(path path: some Collection<Key>) -> Value? {
        var current = self
        for key in path {
            guard case .map(let map) = current, let next = map[key] else { return nil }
            current = next
        }
        return current
    }
}

extension Value {
    /// The most lists and maps a stored value may nest (a field, a map key's
    /// value, metadata): what the encoding's decoders accept, enforced when
    /// a value is written so that whatever is committed reads back.
    public static let maximumNesting = 64

    /// How many lists and maps this value nests: 0 for a scalar, 1 for a
    /// list of scalars. O(size), at any depth (past a few hundred levels
    /// without recursion).
    public var nestingDepth: Int { _nestingDepth(levelsAbove: 0) }

    /// Levels of lists and maps that the functions walking a value enter by
    /// recursion; deeper ones continue with their work on the heap. A stored
    /// value nests ``maximumNesting`` levels at most, but a query's value,
    /// a comparison or a record being refused for its depth can nest
    /// thousands, which recursion would overflow the stack with.
    static let recursionLimit = 256

    func _nestingDepth(levelsAbove: Int) -> Int {
        guard levelsAbove < Self.recursionLimit else { return _deepNestingDepth() }
        switch self {
        case .list(let elements):
            return 1 + elements.reduce(0) { Swift.max($0, $1._nestingDepth(levelsAbove: levelsAbove + 1)) }
        case .map(let entries):
            return 1 + entries.values.reduce(0) { Swift.max($0, $1._nestingDepth(levelsAbove: levelsAbove + 1)) }
        default: return 0
        }
    }

    /// ``nestingDepth`` without recursion (``_walk(_:)``). O(size).
    func _deepNestingDepth() -> Int {
        var depth = 0
        var deepest = 0
        _walk { part in
            switch part {
            case .list, .map:
                depth += 1
                deepest = Swift.max(deepest, depth)
            case .end: depth -= 1
            case .scalar, .key: break
            }
        }
        return deepest
    }

    /// Visits the parts of this value in the order the encoders write
    /// them (a map's entries by key), keeping the parts still to visit on
    /// the heap: no recursion, whatever the depth. O(size).
    func _walk(_ visit: (_ValuePart) -> Void) {
        enum Pending {
            case value(Value)
            case key(Key)
            case end
        }
        var pending: [Pending] = [.value(self)]
        while let next = pending.popLast() {
            switch next {
            case .end: visit(.end)
            case .key(let key): visit(.key(key))
            case .value(.list(let elements)):
                visit(.list(count: elements.count))
                pending.append(.end)
                for element in elements.reversed() { pending.append(.value(element)) }
            case .value(.map(let entries)):
                visit(.map(count: entries.count))
                pending.append(.end)
                for key in entries.keys.sorted().reversed() {
                    pending.append(.value(entries[key]!))
                    pending.append(.key(key))
                }
            case .value(let scalar): visit(.scalar(scalar))
            }
        }
    }
}

/// One step of ``Value/_walk(_:)``.
enum _ValuePart {
    /// A value that is not a list or map.
    case scalar(Value)
    /// A list starts; its elements follow, then ``end``.
    case list(count: Int)
    /// A map starts; each entry's key, then its value, follow, then ``end``.
    case map(count: Int)
    /// The key of the map entry whose value comes next.
    case key(Key)
    /// The list or map last started ends.
    case end
}
