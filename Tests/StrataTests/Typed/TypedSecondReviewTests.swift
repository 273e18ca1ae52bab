import Foundation
import Strata
import Testing

/// Coding keys that are the same text spelled with other bytes: fields
/// are named by their UTF-8 bytes, so these are two fields.
private struct Accents: StoredRecord, Equatable {
    static let table: Key = "accents"
    var id: Int
    var precomposed: Int
    var decomposed: Int
    enum CodingKeys: String, CodingKey {
        case id
        case precomposed = "caf\u{E9}"
        case decomposed = "cafe\u{301}"
    }
}

/// The same two spellings, decomposed first, and as nested containers.
private struct NestedAccents: StoredRecord, Equatable {
    static let table: Key = "nested"
    var id: Int
    var decomposed: [Int]
    var precomposed: [Int]

    enum CodingKeys: String, CodingKey {
        case id
        case decomposed = "nai\u{308}ve"
        case precomposed = "na\u{EF}ve"
    }

    init(id: Int, decomposed: [Int], precomposed: [Int]) {
        (self.id, self.decomposed, self.precomposed) = (id, decomposed, precomposed)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        var first = container.nestedUnkeyedContainer(forKey: .decomposed)
        for value in decomposed { try first.encode(value) }
        var second = container.nestedUnkeyedContainer(forKey: .precomposed)
        for value in precomposed { try second.encode(value) }
    }
}

/// A schema declared for one spelling of a name, a type using the other.
private struct Decomposed: StoredRecord, Equatable {
    static let table: Key = "decomposed"
    var id: Int
    var value: Int
    enum CodingKeys: String, CodingKey {
        case id
        case value = "cafe\u{301}"
    }
    static var schema: RecordSchema { RecordSchema(defaults: ["caf\u{E9}": 5]) }
}

private struct Refused: Error, CustomStringConvertible {
    var description: String { "fewer than 100 plays" }
}

/// A value whose own `init(from:)` refuses what it reads.
private struct AtLeastHundred: Codable, Sendable {
    var value: Int
    init(_ value: Int) { self.value = value }
    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Int.self)
        if value < 100 { throw Refused() }
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

private struct Validated: StoredRecord {
    static let table: Key = "validated"
    var id: Int
    var plays: AtLeastHundred
}

@Suite("Typed records: second review")
struct TypedSecondReviewTests {
    @Test("coding keys that differ only in Unicode normalization are two fields, read and written apart")
    func canonicallyEquivalentKeys() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(Accents(id: 1, precomposed: 1, decomposed: 2))
        try builder.insert(Accents(id: 2, precomposed: 3, decomposed: 4))
        try builder.insert(NestedAccents(id: 1, decomposed: [1], precomposed: [2, 3]))
        let database = builder.database
        #expect(database.record(1, in: "accents")?["caf\u{E9}"] == 1)
        #expect(database.record(1, in: "accents")?["cafe\u{301}"] == 2)
        #expect(try database.record(Accents.self, id: 1) == Accents(id: 1, precomposed: 1, decomposed: 2))
        #expect(
            try database.records(Accents.self).sorted { $0.id < $1.id } == [
                Accents(id: 1, precomposed: 1, decomposed: 2), Accents(id: 2, precomposed: 3, decomposed: 4),
            ]
        )
        #expect(database.record(1, in: "nested")?["nai\u{308}ve"] == [1])
        #expect(database.record(1, in: "nested")?["na\u{EF}ve"] == [2, 3])
    }

    @Test("a schema's default applies to the name of its exact bytes only")
    func schemaNamesByBytes() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["caf\u{E9}": 1], id: 1, into: "decomposed")
        #expect(throws: RecordDecodingError.self) { try builder.database.record(Decomposed.self, id: 1) }
    }

    @Test("an error a type's own init(from:) throws comes as a RecordDecodingError naming the record")
    func ownErrorsWrapped() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["plays": 1], id: 9, into: "validated")
        try builder.insert(["plays": 500], id: 10, into: "validated")
        let database = builder.database
        #expect(try database.record(Validated.self, id: 10)?.plays.value == 500)
        do {
            _ = try database.record(Validated.self, id: 9)
            Issue.record("a refused value decoded")
        } catch let error as RecordDecodingError {
            #expect(error.table == "validated")
            #expect(error.id == RecordID(9))
            #expect(error.reason == "fewer than 100 plays")
        }
        #expect(throws: RecordDecodingError.self) { try database.records(Validated.self) }
    }
}
