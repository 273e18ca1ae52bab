import Foundation
import Strata
import Testing

/// A typed record's `id` must read back the key its record is stored
/// under. The key reaches the type as a string or a number, so a UUID key
/// could read into a `String` ID, and a string key holding UUID text into
/// a `UUID` one: saving such a value back wrote a second record under the
/// other kind of key (found by a helper's hunt).
@Suite("Typed records: the ID's kind")
struct TypedIDKindTests {
    struct ByUUID: StoredRecord, Equatable {
        static let table: Key = "things"
        var id: UUID
        var name: String
    }

    struct ByString: StoredRecord, Equatable {
        static let table: Key = "things"
        var id: String
        var name: String
    }

    struct ByInt: StoredRecord, Equatable {
        static let table: Key = "things"
        var id: Int
        var name: String
    }

    static let uuid = UUID(uuidString: "12345678-1234-1234-1234-123456789ABC")!

    static func database(_ id: RecordID) throws -> Database {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["name": "x"], id: id, into: "things")
        return builder.database
    }

    static func isKindMismatch(_ error: any Error, stored id: RecordID) -> Bool {
        guard let error = error as? RecordDecodingError else { return false }
        return error.table == "things" && error.id == id && error.path == "id"
    }

    @Test("a string key holding UUID text does not read as a UUID ID")
    func stringKeyAsUUID() throws {
        let key = RecordID(Self.uuid.uuidString)
        let database = try Self.database(key)
        #expect { try database.records(ByUUID.self) } throws: { Self.isKindMismatch($0, stored: key) }
        #expect { try database.query("things").records(ByUUID.self) } throws: { Self.isKindMismatch($0, stored: key) }
        #expect { try database.query("things").first(ByUUID.self) } throws: { Self.isKindMismatch($0, stored: key) }
        #expect(try database.record(ByUUID.self, id: Self.uuid) == nil)
        // The kind that matches reads it.
        #expect(try database.records(ByString.self) == [ByString(id: Self.uuid.uuidString, name: "x")])
    }

    @Test("a UUID key does not read as a string ID")
    func uuidKeyAsString() throws {
        let key = RecordID(Self.uuid)
        let database = try Self.database(key)
        #expect { try database.records(ByString.self) } throws: { Self.isKindMismatch($0, stored: key) }
        #expect(try database.record(ByString.self, id: Self.uuid.uuidString) == nil)
        #expect(try database.records(ByUUID.self) == [ByUUID(id: Self.uuid, name: "x")])
        // A value that reads is saved back under its own key: still one record.
        var builder = TransactionBuilder(on: database)
        try builder.save(try database.records(ByUUID.self)[0])
        #expect(builder.database[table: "things"].count == 1)
    }

    @Test("the kinds that read: each key into its own type, and large tables decoded in parallel alike")
    func matchingKinds() throws {
        #expect(try Self.database(RecordID(7)).records(ByInt.self) == [ByInt(id: 7, name: "x")])
        #expect { try Self.database(RecordID(7)).records(ByString.self) } throws: { $0 is RecordDecodingError }
        #expect { try Self.database(RecordID("7")).records(ByInt.self) } throws: { $0 is RecordDecodingError }
        // Past the parallel decoding's threshold, one mismatched key among many is found.
        var builder = TransactionBuilder(on: Database())
        for _ in 0..<20_000 { try builder.insert(["name": "x"], id: RecordID(UUID()), into: "things") }
        try builder.insert(["name": "x"], id: RecordID(Self.uuid.uuidString), into: "things")
        let large = builder.database
        #expect { try large.records(ByUUID.self) } throws: {
            Self.isKindMismatch($0, stored: RecordID(Self.uuid.uuidString))
        }
    }
}
