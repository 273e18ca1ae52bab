import Foundation
import Strata
import Testing

/// A record type that codes itself as one value: its payload struct.
private struct Wrapped: StoredRecord, Equatable {
    static let table: Key = "wrapped"
    struct Payload: Codable, Equatable {
        var id: Int
        var title: String
        var rating: Int
    }
    var payload: Payload
    var id: Int { payload.id }

    init(payload: Payload) { self.payload = payload }

    init(from decoder: any Decoder) throws {
        payload = try decoder.singleValueContainer().decode(Payload.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(payload)
    }

    static var schema: RecordSchema {
        RecordSchema(renamedFields: ["name": "title"], defaults: ["rating": 3])
    }
}

/// A wrapper of a wrapper, keyed by string.
private struct DoublyWrapped: StoredRecord, Equatable {
    static let table: Key = "doubly"
    struct Inner: Codable, Equatable {
        var key: String
        var tags: [String]
    }
    struct Middle: Codable, Equatable {
        var inner: Inner
        init(inner: Inner) { self.inner = inner }
        init(from decoder: any Decoder) throws { inner = try decoder.singleValueContainer().decode(Inner.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(inner)
        }
    }
    var middle: Middle
    var id: String { middle.inner.key }
    static var idKey: String { "key" }

    init(middle: Middle) { self.middle = middle }
    init(from decoder: any Decoder) throws { middle = try decoder.singleValueContainer().decode(Middle.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(middle)
    }
}

@Suite("Typed records coded through a single-value container")
struct TypedSingleValueTests {
    @Test("a wrapper record reads back with its ID, through a store, a reopen and records(_:)")
    func wrapperRoundTrip() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let options = testOptions()
        var store = try await Store.open(at: path, options: options)
        let wrapped = (1...3).map { Wrapped(payload: .init(id: $0, title: "song \($0) ✓", rating: $0)) }
        try await store.transact { builder in
            for record in wrapped { try builder.save(record) }
        }
        // The ID is the record's key, not a field, as for a keyed type.
        #expect(store.current.record(2, in: "wrapped") == ["title": "song 2 ✓", "rating": 2])
        #expect(try store.current.record(Wrapped.self, id: 2) == wrapped[1])
        #expect(try store.current.records(Wrapped.self).sorted { $0.id < $1.id } == wrapped)
        try await store.close()
        store = try await Store.open(at: path, options: options)
        #expect(try store.current.record(Wrapped.self, id: 3) == wrapped[2])
        try await store.close()
    }

    @Test("a wrapper record's payload reads through the type's schema: renamed fields and defaults")
    func wrapperSchema() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["name": "old name"], id: 7, into: "wrapped")
        #expect(
            try builder.database.record(Wrapped.self, id: 7)
                == Wrapped(payload: .init(id: 7, title: "old name", rating: 3))
        )
    }

    @Test("a wrapper of a wrapper with a string ID under another key round-trips")
    func nestedWrappers() throws {
        var builder = TransactionBuilder(on: Database())
        let record = DoublyWrapped(middle: .init(inner: .init(key: "é-1", tags: ["a", ""])))
        try builder.save(record)
        #expect(builder.database.record(RecordID("é-1"), in: "doubly") == ["tags": ["a", ""]])
        #expect(try builder.database.record(DoublyWrapped.self, id: "é-1") == record)
        #expect(try builder.database.records(DoublyWrapped.self) == [record])
    }
}
