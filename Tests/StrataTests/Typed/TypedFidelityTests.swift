import Foundation
import PersistentCollections
import Strata
import Testing

/// What a typed model reads is what the record holds, and what it writes
/// does not depend on the process: no value silently rounded or merged, no
/// change recorded for an unchanged model.
@Suite("Typed records: fidelity")
struct TypedFidelityTests {
    struct Tagged: StoredRecord, Equatable {
        static let table: Key = "tagged"
        var id: Int
        var tags: PersistentMap<String, Int>
    }

    struct Labels: StoredRecord, Equatable {
        static let table: Key = "labels"
        var id: Int
        var labels: [String: Int]
    }

    struct Whole: Codable { var x: Int64 }
    struct Wide: Codable { var x: Double }
    struct Narrow: Codable { var x: Float }
    struct Nested: Codable { var xs: [Double] }

    @Test("a PersistentMap property is written in the order of its keys, not of their hashes")
    func persistentMapOrder() throws {
        // The hash order is the process's random seed's: written in it, an
        // unchanged model read back and saved in another process would
        // record a change of the whole field.
        var model = Tagged(id: 1, tags: [:])
        for i in 0..<40 { model.tags["tag\(i)"] = i }
        let record = try RecordEncoder(skippedKey: "id").encode(model)
        guard case .list(let pairs)? = record["tags"] else {
            Issue.record("tags written as \(String(describing: record["tags"]))")
            return
        }
        let keys = stride(from: 0, to: pairs.count, by: 2).map { pairs[$0].stringValue ?? "" }
        // A Dictionary's pairs are ordered by their encoded bytes: a
        // string's length first, then its bytes.
        let canonical = keys.sorted { ($0.utf8.count, Key($0)) < ($1.utf8.count, Key($1)) }
        #expect(keys == canonical)
        #expect(keys.count == 40)

        let database = Database(tables: ["tagged": Table(records: [1: record])], basis: 1)
        let read = try #require(try database.record(Tagged.self, id: 1))
        #expect(read == model)
        var builder = TransactionBuilder(on: database)
        try builder.save(read)
        #expect(builder.transaction().isEmpty, "an unchanged model saved back records a change")
    }

    @Test("map keys equal as Strings but not as bytes are refused, not merged")
    func equivalentKeys() throws {
        // "café" in NFC and in NFD: two keys of a stored map (keys compare
        // by bytes), one key of a [String: Int]. Read as one entry, one
        // value would be lost, and saving the model back would delete it.
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["labels": .map(["caf\u{E9}": 1, "cafe\u{301}": 2])], id: 1, into: "labels")
        try builder.insert(["labels": .map(["caf\u{E9}": 1, "cafe": 2])], id: 2, into: "labels")
        let database = builder.database
        let error = try #require(throws: RecordDecodingError.self) { try database.record(Labels.self, id: 1) }
        #expect(error.path == "labels")
        #expect(error.id == RecordID(1))
        #expect(String(describing: error).contains("Unicode normalization"))
        #expect(try database.record(Labels.self, id: 2)?.labels == ["caf\u{E9}": 1, "cafe": 2])

        // The same in a list read as a Set<String>; strings equal in their
        // bytes a set drops, as sets do.
        struct Tagged: Codable { var tags: Set<String> }
        let decoder = RecordDecoder()
        let merged = Record(["tags": ["caf\u{E9}", "cafe\u{301}", "blue"]])
        let setError = try #require(throws: RecordDecodingError.self) { try decoder.decode(Tagged.self, from: merged) }
        #expect(setError.path == "tags")
        let repeated = Record(["tags": ["caf\u{E9}", "caf\u{E9}", "blue"]])
        #expect(try decoder.decode(Tagged.self, from: repeated).tags == ["caf\u{E9}", "blue"])
    }

    @Test("an integer is read as a Double or a Float only when it holds it exactly")
    func exactWidening() throws {
        let encoder = RecordEncoder()
        let decoder = RecordDecoder()
        // Exact: the documented widening.
        #expect(try decoder.decode(Wide.self, from: encoder.encode(Whole(x: 1 << 53))).x == 9_007_199_254_740_992)
        #expect(try decoder.decode(Wide.self, from: encoder.encode(Whole(x: -42))).x == -42)
        #expect(try decoder.decode(Narrow.self, from: encoder.encode(Whole(x: 16_777_216))).x == 16_777_216)
        // Not exact: refused, through the keyed fast path and the general one.
        let tooWide = try encoder.encode(Whole(x: .max))
        let error = try #require(throws: RecordDecodingError.self) { try decoder.decode(Wide.self, from: tooWide) }
        #expect(error.path == "x")
        #expect(throws: RecordDecodingError.self) {
            try decoder.decode(Narrow.self, from: encoder.encode(Whole(x: 16_777_217)))
        }
        #expect(throws: RecordDecodingError.self) {
            try decoder.decode(Nested.self, from: Record(["xs": [.int(1), .int((1 << 53) + 1)]]))
        }
        #expect(try decoder.decode(Nested.self, from: Record(["xs": [.int(1), .double(2.5)]])).xs == [1, 2.5])
    }

    @Test(
        "a double is read as a Float only when it equals one: never rounded, and a save of what was read writes nothing"
    )
    func floatsFromDoubles() throws {
        struct Reading: StoredRecord, Equatable {
            static let table: Key = "readings"
            var id: Int
            var value: Float
        }
        let decoder = RecordDecoder()
        for inexact in [16_777_217.0, 0.1, 1e-50, -3.000_000_000_000_1] {
            let error = try #require(throws: RecordDecodingError.self, "\(inexact)") {
                try decoder.decode(Narrow.self, from: Record(["x": .double(inexact)]))
            }
            #expect(error.path == "x")
            #expect(String(describing: error).contains("is not a Float"))
        }
        // Exact doubles, infinities and NaN read as the Float they are.
        for (stored, read) in [(0.5, Float(0.5)), (-0.0, -0.0), (16_777_216, 16_777_216), (.infinity, .infinity)] {
            let value = try decoder.decode(Narrow.self, from: Record(["x": .double(stored)])).x
            #expect(value == read && value.sign == read.sign, "\(stored)")
        }
        #expect(try decoder.decode(Narrow.self, from: Record(["x": .double(.nan)])).x.isNaN)
        // What the encoder writes for any Float reads back as that Float.
        for float in [Float(0.1), .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.ulpOfOne, 3.141_592_7] {
            let record = try RecordEncoder().encode(Reading(id: 1, value: float))
            #expect(try decoder.decode(Reading.self, from: record, id: 1).value == float, "\(float)")
        }
        // A record written untyped: read refused, so no save rewrites it.
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["value": .double(16_777_217)], id: 1, into: "readings")
        try builder.insert(["value": .double(0.25)], id: 2, into: "readings")
        let database = builder.database
        #expect(throws: RecordDecodingError.self) { try database.record(Reading.self, id: 1) }
        let exact = try #require(try database.record(Reading.self, id: 2))
        var resave = TransactionBuilder(on: database)
        try resave.save(exact)
        #expect(resave.transaction(t: 1).changes.isEmpty)
    }
}
