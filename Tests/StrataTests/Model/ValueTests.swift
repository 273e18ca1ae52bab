import Foundation
import PersistentCollections
import Strata
import Testing

@Suite("Value")
struct ValueTests {
    @Test("equality is exact and reflexive, hashing agrees with it")
    func equality() {
        let nan = Value.double(.nan)
        #expect(nan == nan)
        #expect(Value.double(0.0) != Value.double(-0.0))
        #expect(Value.int(1) != Value.double(1))
        #expect(Value.string("1") != Value.int(1))
        let values: [Value] = [
            .null, true, 42, 2.5, "text", .bytes([1, 2]), .date(Date(timeIntervalSinceReferenceDate: 1_000)),
            .reference(RecordReference(table: "songs", id: 7)), [1, "two", [3]], ["a": 1, "b": ["c": true]],
        ]
        for (i, a) in values.enumerated() {
            for (j, b) in values.enumerated() {
                #expect((a == b) == (i == j), "\(a) vs \(b)")
            }
            #expect(a.hashValue == Value(copying: a).hashValue)
        }
        #expect(Set(values + values).count == values.count)
    }

    @Test("a value stays small: boxed lists, maps and references")
    func layout() {
        #expect(MemoryLayout<Value>.size <= 17)
    }

    @Test("typed accessors and nested paths")
    func reading() {
        let value: Value = ["feeds": ["42": ["editedName": "Daily", "unread": 3]], "flag": true]
        #expect(value[path: ["feeds", "42", "editedName"]]?.stringValue == "Daily")
        #expect(value[path: ["feeds", "42", "unread"]]?.intValue == 3)
        #expect(value[path: ["feeds", "7"]] == nil)
        #expect(value[path: ["flag", "x"]] == nil)
        #expect(value[path: [Key]()] == value)
        #expect(Value.int(3).doubleValue == 3)
        #expect(Value.null.isNull && !Value.int(0).isNull)
        #expect(Value.string("a").intValue == nil)
        #expect(value.mapValue?.count == 2)
    }

    @Test("descriptions read like literals")
    func descriptions() {
        #expect(Value.null.description == "null")
        #expect(Value.string("hi").description == "\"hi\"")
        #expect(([1, 2] as Value).description == "[1, 2]")
        #expect(Value.reference(RecordReference(table: "songs", id: "a")).description == "@songs/\"a\"")
    }
}

extension Value {
    /// A structurally equal value built independently (no shared storage).
    init(copying value: Value) {
        switch value {
        case .list(let list): self = .list(PersistentVector(list.map { Value(copying: $0) }))
        case .map(let map):
            self = .map(PersistentMap(uniqueKeysWithValues: map.map { ($0.key, Value(copying: $0.value)) }))
        default: self = value
        }
    }
}

@Suite("RecordID")
struct RecordIDTests {
    @Test("kinds never collide, order is total and deterministic")
    func kinds() {
        let uuid = UUID()
        let ids: [RecordID] = [RecordID(1), RecordID("1"), RecordID(uuid), 2, "b", "a"]
        #expect(Set(ids).count == ids.count)
        #expect(ids.sorted() == [1, 2, "1", "a", "b", RecordID(uuid)])
        #expect(RecordID(7 as Int) == RecordID(7 as Int64))
        #expect(RecordID("x").description == "\"x\"")
    }
}
