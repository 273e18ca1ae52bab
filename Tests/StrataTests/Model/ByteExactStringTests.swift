import Foundation
import PersistentCollections
import Strata
import Testing

/// Strings that Swift calls equal (canonical equivalence) but whose bytes
/// differ are different names, keys, IDs and values to the database: what
/// it compares is what it encodes.
@Suite("Byte-exact strings")
struct ByteExactStringTests {
    static let precomposed = "\u{E9}"  // é
    static let decomposed = "e\u{301}"  // e + combining acute

    static func bytes(_ key: Key) -> [UInt8] { Array(key.string.utf8) }

    @Test("Key compares, hashes and orders by UTF-8 bytes")
    func keySemantics() {
        #expect(Self.precomposed == Self.decomposed)  // what String does
        #expect(Key(Self.precomposed) != Key(Self.decomposed))
        #expect(Set([Key(Self.precomposed), Key(Self.decomposed)]).count == 2)
        #expect(Key("caf\u{E9}") > Key("caff"))  // 0xC3 after 0x66
        #expect(Key("ab") < Key("abc") && !(Key("abc") < Key("ab")))
        #expect(Key("") < Key("a"))
        let map: [Key: Int] = [Key(Self.precomposed): 1, Key(Self.decomposed): 2]
        #expect(map.count == 2)
        #expect(RecordID(Self.precomposed) != RecordID(Self.decomposed))
        #expect(Set([RecordID(Self.precomposed), RecordID(Self.decomposed)]).count == 2)
        #expect(Value.string(Self.precomposed) != Value.string(Self.decomposed))
    }

    @Test("Key and FieldPath equality do not depend on how the string is stored")
    func keyRepresentations() {
        // One spelling in a literal (held inline when short) and in a heap
        // buffer (reserved capacity): equal, same hash, same order; and a
        // key against itself and a copy.
        for text in ["album", "", "\u{E9}t\u{E9}", "a longer field name than fits inline"] {
            var stored = String()
            stored.reserveCapacity(64)
            stored += text
            let copy = Key(stored)
            #expect(Key(stored) == Key(text) && Key(text) == Key(stored) && copy == Key(stored) && copy == copy)
            #expect(Key(stored).hashValue == Key(text).hashValue)
            #expect(!(Key(stored) < Key(text)) && !(Key(text) < Key(stored)))
            #expect(FieldPath(field: Key(stored), keys: []) == FieldPath(field: Key(text), keys: []))
            #expect(FieldPath(field: Key(stored), keys: ["k"]) != FieldPath(field: Key(text), keys: []))
            #expect(FieldPath(field: Key(stored), keys: []) != FieldPath(field: Key(text), keys: ["k"]))
            #expect(FieldPath(field: Key(stored), keys: ["k"]) == FieldPath(field: Key(text), keys: ["k"]))
            #expect(
                Set([FieldPath(field: Key(stored), keys: ["k"]), FieldPath(field: Key(text), keys: ["k"])]).count == 1
            )
        }
        #expect(FieldPath(field: "a", keys: ["b"]) != FieldPath(field: "a", keys: ["c"]))
        #expect(Key(Self.precomposed) != Key(Self.decomposed))
    }

    @Test("flatten of a field set to a number, then to a map with an equivalent key, equals the replay")
    func flattenLaw() throws {
        let base = Database(["t": [1: ["a": .map([Key(Self.precomposed): 1])]]])
        var first = TransactionBuilder(on: base)
        try first.update(1, in: "t", [.set("a", 5)])
        let t1 = first.transaction(t: 1)
        var second = TransactionBuilder(on: first.database)
        try second.update(1, in: "t", [.set("a", .map([Key(Self.decomposed): 1]))])
        let t2 = second.transaction(t: 2)
        let replay = try apply(apply(base, t1), t2)
        let flat = try flatten([t1, t2])
        #expect(!flat.changes.isEmpty)
        #expect(try apply(base, flat) == replay)
        #expect(replay != base)
        #expect(try apply(replay, inverse(flat)) == base)
    }

    @Test("diff of two values that differ only by an equivalent map key is not empty")
    func diffSeesBytes() throws {
        let a = Database(["t": [1: ["a": .map([Key(Self.precomposed): 1])]]])
        let b = Database(["t": [1: ["a": .map([Key(Self.decomposed): 1])]]])
        #expect(a != b)
        let difference = diff(from: a, to: b)
        #expect(difference.tables["t"]?.changed[1] == ["a"])
        #expect(try apply(a, difference.transaction(t: b.basis)) == b)
        // Two tables and two records whose names are equivalent spellings.
        let c = Database([Key("caf\u{E9}"): [RecordID(Self.precomposed): ["x": 1]]])
        let d = Database([Key("cafe\u{301}"): [RecordID(Self.decomposed): ["x": 1]]])
        #expect(c != d && c.tableNames.count == 1)
        let cd = diff(from: c, to: d)
        #expect(cd.tables.count == 2)
        #expect(try apply(c, cd.transaction(t: d.basis)) == d)
    }

    @Test("a field name keeps its own spelling whatever the process saw first")
    func fieldNameSpelling() throws {
        let unique = UUID().uuidString
        let first: Record = [Key(Self.decomposed + unique): 1]
        let second: Record = [Key(Self.precomposed + unique): 2]
        #expect(second.names.map(Self.bytes) == [Array((Self.precomposed + unique).utf8)])
        #expect(first.names.map(Self.bytes) == [Array((Self.decomposed + unique).utf8)])
        #expect(second[Key(Self.decomposed + unique)] == nil)
        #expect(second[Key(Self.precomposed + unique)] == 2)
        // Both spellings in one record are two fields.
        var both = first
        both[Key(Self.precomposed + unique)] = 3
        #expect(both.count == 2)
        #expect(try BinaryCodec.decodeRecord(BinaryCodec.encode(both)) == both)
        let encoded = BinaryCodec.encode(second)
        #expect(encoded.firstRange(of: Array((Self.precomposed + unique).utf8)) != nil)
        #expect(encoded.firstRange(of: Array((Self.decomposed + unique).utf8)) == nil)
    }

    @Test("a record whose names sort differently by bytes than by String encodes in order and decodes")
    func orderByBytes() throws {
        var warmUp = Record()
        warmUp["cafe\u{301}"] = 1
        let record: Record = ["caf\u{E9}": 1, "caff": 2]
        #expect(record.names == ["caff", "caf\u{E9}"])
        let decoded = try BinaryCodec.decodeRecord(BinaryCodec.encode(record))
        #expect(decoded == record && decoded.hashValue == record.hashValue)
        let database = Database(["t": [1: record, 2: warmUp]])
        #expect(try BinaryCodec.decodeDatabase(BinaryCodec.encode(database)) == database)
    }

    @Test("metadata keys, messages, table names, IDs and values keep their bytes through a store")
    func storeRoundTrip() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let names = [Self.precomposed, Self.decomposed, "\u{1EA1}\u{301}", "a\u{323}\u{301}", "a\u{301}\u{323}"]
        var store = try await Store.open(at: path, options: testOptions())
        for (i, name) in names.enumerated() {
            try await store.transact(message: name, metadata: [Key(name): .string(name)]) { builder in
                try builder.insert(
                    [Key(name): .map([Key(name): .string(name)]), "n": .int(Int64(i))],
                    id: RecordID(name),
                    into: Key(name)
                )
            }
        }
        let expected = store.current
        #expect(expected.tableNames.count == names.count)
        try await store.close()
        store = try await Store.open(at: path, options: testOptions())
        #expect(store.current == expected)
        for (i, name) in names.enumerated() {
            let record = try #require(store.current.record(RecordID(name), in: Key(name)))
            #expect(record["n"] == .int(Int64(i)))
            #expect(record.names.map(Self.bytes).contains(Array(name.utf8)))
            let summary = try #require(try await store.transaction(at: Int64(i + 1)))
            #expect(Array(summary.message.utf8) == Array(name.utf8))
            #expect(summary.metadata.keys.map(Self.bytes) == [Array(name.utf8)])
        }
        try await store.close()
    }
}
