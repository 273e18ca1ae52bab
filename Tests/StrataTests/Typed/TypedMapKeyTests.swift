import Foundation
import PersistentCollections
import Strata
import Testing

/// A model reads a stored map into `[Int: V]` only when saving it back
/// would write the same map, and its decoding errors name the types it
/// expected.
@Suite("Typed map keys and the types decoding errors name")
struct TypedMapKeyTests {
    struct Scores: StoredRecord, Equatable {
        static let table: Key = "scores"
        var id: Int
        var byLevel: [Int: String]
    }

    enum Level: Int, Codable, CodingKeyRepresentable, Hashable {
        case one = 1
        case two = 2
    }

    struct Ranked: StoredRecord, Equatable {
        static let table: Key = "ranked"
        var id: Int
        var byLevel: [Level: String]
    }

    static func database(_ record: Record, in table: Key) throws -> Database {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(record, id: 1, into: table)
        return try apply(Database(), builder.transaction(t: 1))
    }

    static func decodingError<T>(_ read: () throws -> T) -> RecordDecodingError? {
        do {
            _ = try read()
            return nil
        } catch {
            return error as? RecordDecodingError
        }
    }

    @Test("map keys that read as one Int (\"1\" and \"01\") are refused, not merged")
    func mergedIntegerKeys() throws {
        let database = try Self.database(["byLevel": ["1": "first", "01": "second"]], in: "scores")
        let error = try #require(Self.decodingError { try database.record(Scores.self, id: 1) })
        #expect(error.path == "byLevel", "\(error)")
        #expect(error.description.contains("merge"), "\(error)")
    }

    @Test("a key stored in another form than the model writes (\"007\", \"+5\") is refused, not renamed")
    func nonCanonicalKeys() throws {
        for key in ["007", "+5", "-0"] {
            let database = try Self.database(["byLevel": [Key(key): "x", "2": "two"]], in: "scores")
            let error = try #require(Self.decodingError { try database.record(Scores.self, id: 1) }, "\(key)")
            #expect(error.path == "byLevel", "\(error)")
            #expect(error.description.contains("renamed"), "\(error)")
        }
        // A key that reads as no Int at all is refused by the dictionary itself.
        let spaced = try Self.database(["byLevel": [" 5": "x"]], in: "scores")
        #expect(Self.decodingError { try spaced.record(Scores.self, id: 1) } != nil)
        // An enum keyed by its Int raw values is held to the same.
        let ranked = try Self.database(["byLevel": ["01": "x"]], in: "ranked")
        #expect(Self.decodingError { try ranked.record(Ranked.self, id: 1) } != nil)
    }

    @Test("keys in the form the model writes read, and saving the model back changes nothing")
    func canonicalKeys() throws {
        let database = try Self.database(
            ["byLevel": ["-3": "minus", "0": "zero", "9223372036854775807": "max", "2": "two"]],
            in: "scores"
        )
        let read = try #require(try database.record(Scores.self, id: 1))
        #expect(read.byLevel == [-3: "minus", 0: "zero", Int.max: "max", 2: "two"])
        var save = TransactionBuilder(on: database)
        try save.save(read)
        #expect(save.transaction().isEmpty)
        let ranked = try Self.database(["byLevel": ["1": "x", "2": "y"]], in: "ranked")
        #expect(try ranked.record(Ranked.self, id: 1)?.byLevel == [.one: "x", .two: "y"])
    }

    struct Track: Codable, Equatable { var name: String }

    struct Album: StoredRecord, Equatable {
        static let table: Key = "albums"
        var id: Int
        var tracks: [Track]
        var main: Track
        var plays: Int
        static var schema: RecordSchema {
            RecordSchema(upcasters: [
                "plays": { value in
                    if case .string(let text) = value {
                        guard let int = Int64(text) else { throw CocoaError(.coderInvalidValue) }
                        return .int(int)
                    }
                    return value
                }
            ])
        }
    }

    static func albumError(_ record: Record) throws -> RecordDecodingError? {
        let database = try Self.database(record, in: "albums")
        return Self.decodingError { try database.record(Album.self, id: 1) }
    }

    @Test("a struct, list or dictionary found as another kind names its own type")
    func mismatchNamesTheModelType() throws {
        let inList = try #require(
            try Self.albumError(["tracks": [["name": "a"], .null], "main": ["name": "m"], "plays": 1])
        )
        #expect(inList.path == "tracks[1]")
        #expect(inList.expected == "Track", "\(inList)")
        let field = try #require(try Self.albumError(["tracks": [], "main": "Blue", "plays": 1]))
        #expect(field.path == "main")
        #expect(field.expected == "Track", "\(field)")
        let list = try #require(try Self.albumError(["tracks": 5, "main": ["name": "m"], "plays": 1]))
        #expect(list.path == "tracks")
        #expect(list.expected == "Array<Track>", "\(list)")
        let scores = try Self.database(["byLevel": ["a", "b"]], in: "scores")
        let map = try #require(Self.decodingError { try scores.record(Scores.self, id: 1) })
        #expect(map.expected == "Dictionary<Int, String>", "\(map)")
    }

    @Test("a failing upcaster's error names the property's type")
    func upcasterFailureNamesTheType() throws {
        let failed = try #require(try Self.albumError(["tracks": [], "main": ["name": "m"], "plays": "many"]))
        #expect(failed.path == "plays")
        #expect(failed.expected == "Int", "\(failed)")
        #expect(failed.description.contains("upcaster"), "\(failed)")
        // One that succeeds still reads.
        let database = try Self.database(["tracks": [], "main": ["name": "m"], "plays": "12"], in: "albums")
        #expect(try database.record(Album.self, id: 1)?.plays == 12)
    }
}
