import Foundation
import PersistentCollections
import Strata
import Testing

/// A model using every mapping the encoder documents.
struct Track: StoredRecord, Equatable {
    static let table: Key = "tracks"

    enum Mood: String, Codable { case calm, wild }
    enum Rank: Int, Codable { case low = 1, high = 9 }
    struct Credit: Codable, Equatable {
        var role: String
        var name: String
        var share: Double?
    }

    var id: Int
    var title: String
    var plays: Int64
    var small: Int8
    var unsigned: UInt32
    var large: UInt64
    var rating: Float
    var loved: Bool
    var added: Date
    var artwork: Data
    var file: URL
    var uuid: UUID
    var mood: Mood
    var rank: Rank?
    var album: String?
    var credits: [Credit]
    var tags: [String: Int]
    var genres: Set<String>
    var matrix: [[Int]]
    var optionals: [Int?]

    /// The fields the encoder must write, built by hand: the untyped form.
    var expectedFields: [Key: Value] {
        var fields: [Key: Value] = [
            "title": .string(title), "plays": .int(plays), "small": .int(Int64(small)),
            "unsigned": .int(Int64(unsigned)), "large": .int(Int64(large)), "rating": .double(Double(rating)),
            "loved": .bool(loved), "added": .date(added), "artwork": .bytes(Array(artwork)),
            "file": .string(file.absoluteString), "uuid": .string(uuid.uuidString), "mood": .string(mood.rawValue),
            "credits": .list(
                PersistentVector(
                    credits.map { credit in
                        var map: PersistentMap<Key, Value> = [
                            "role": .string(credit.role), "name": .string(credit.name),
                        ]
                        if let share = credit.share { map["share"] = .double(share) }
                        return .map(map)
                    }
                )
            ),
            "tags": .map(PersistentMap(uniqueKeysWithValues: tags.map { (Key($0.key), Value.int(Int64($0.value))) })),
            "matrix": .list(PersistentVector(matrix.map { .list(PersistentVector($0.map { .int(Int64($0)) })) })),
            "optionals": .list(PersistentVector(optionals.map { $0.map { .int(Int64($0)) } ?? .null })),
        ]
        if let rank { fields["rank"] = .int(Int64(rank.rawValue)) }
        if let album { fields["album"] = .string(album) }
        return fields
    }

    static func random(_ random: inout SeededRandom, id: Int) -> Track {
        func text(_ random: inout SeededRandom) -> String {
            let pieces = ["a", "Ü", "日本", "🎵", "e\u{301}", " ", "\0", "long"]
            let count = random.chance(3) ? 3_000 : random.int(below: 12)
            return (0..<count).map { _ in pieces[random.int(below: pieces.count)] }.joined()
        }
        return Track(
            id: id,
            title: text(&random),
            plays: Int64(bitPattern: random.next()),
            small: Int8(truncatingIfNeeded: random.next()),
            unsigned: UInt32(truncatingIfNeeded: random.next()),
            large: random.next() >> 1,
            rating: Float(random.int(below: 1_000)) / 8,
            loved: random.chance(50),
            added: Date(timeIntervalSinceReferenceDate: Double(random.int(below: 1 << 30)) / 4),
            artwork: Data(random.bytes(random.int(below: 40))),
            file: URL(string: "file:///Music/\(random.int(below: 100))/song%20\(id).mp3")!,
            uuid: UUID(),
            mood: random.chance(50) ? .calm : .wild,
            rank: random.chance(30) ? nil : (random.chance(50) ? .low : .high),
            album: random.chance(40) ? nil : text(&random),
            credits: (0..<random.int(below: 4)).map { _ in
                Credit(role: text(&random), name: text(&random), share: random.chance(50) ? nil : 0.5)
            },
            tags: Dictionary(uniqueKeysWithValues: (0..<random.int(below: 5)).map { ("t\($0)\(text(&random))", $0) }),
            genres: Set((0..<random.int(below: 4)).map { "g\($0)" }),
            matrix: (0..<random.int(below: 3)).map { row in (0..<row).map { $0 * 7 } },
            optionals: (0..<random.int(below: 4)).map { random.chance(50) ? nil : $0 }
        )
    }
}

@Suite("Typed records: encoding and decoding")
struct RecordCodingTests {
    @Test(
        "random models encode to the same bytes as the untyped record and decode back equal",
        arguments: [UInt64(1), 2]
    )
    func roundTrip(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        for n in 0..<300 {
            let track = Track.random(&random, id: n)
            let record = try RecordEncoder(skippedKey: "id").encode(track)
            // Sets encode in their iteration order: compare as sets.
            var expected = track.expectedFields
            var actual = record
            expected["genres"] = nil
            let genres = actual["genres"]
            actual = Record(
                Dictionary(uniqueKeysWithValues: actual.filter { $0.name != "genres" }.map { ($0.name, $0.value) })
            )
            #expect(actual == Record(expected), "seed \(seed) n \(n)")
            if case .list(let list) = genres {
                #expect(
                    Set(list.map { value -> String in if case .string(let s) = value { return s } else { return "" } })
                        == track.genres
                )
            } else {
                Issue.record("seed \(seed) n \(n): genres \(String(describing: genres))")
            }
            #expect(record["id"] == nil, "the id is the key, not a field")
            let decoded = try RecordDecoder(idKey: "id").decode(
                Track.self,
                from: record,
                id: RecordID(n),
                table: "tracks"
            )
            #expect(decoded == track, "seed \(seed) n \(n)")
        }
    }

    @Test("an integer beyond Int64 and an empty field name do not encode")
    func encodingErrors() {
        struct Big: Codable { var value: UInt64 }
        struct Empty: Codable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Dynamic.self)
                try container.encode(1, forKey: Dynamic(stringValue: "")!)
            }
        }
        #expect(throws: EncodingError.self) { try RecordEncoder().encode(Big(value: .max)) }
        #expect(throws: EncodingError.self) { try RecordEncoder().encode(Empty()) }
        #expect(throws: EncodingError.self) { try RecordEncoder().encode([1, 2, 3]) }
        #expect(throws: EncodingError.self) { try RecordEncoder().encode("text") }
    }

    struct Dynamic: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    struct Wanted: Codable, Equatable {
        struct Album: Codable, Equatable { var title: String; var tracks: [Int] }
        var title: String
        var plays: Int
        var album: Album?
        var small: Int8?
    }

    @Test("a record that does not decode names table, id, field path, expected and found")
    func decodingErrors() throws {
        func failure(_ fields: [Key: Value]) -> RecordDecodingError? {
            let result = Result {
                try RecordDecoder().decode(Wanted.self, from: Record(fields), id: 42, table: "songs")
            }
            guard case .failure(let error) = result else { return nil }
            guard let decoding = error as? RecordDecodingError else {
                Issue.record("not a RecordDecodingError: \(error)")
                return nil
            }
            return decoding
        }
        let wrongType = try #require(failure(["title": 5, "plays": 1]))
        #expect(wrongType.table == "songs" && wrongType.id == 42)
        #expect(wrongType.path == "title" && wrongType.expected == "String" && wrongType.found == "int")
        #expect(wrongType.description.hasPrefix("songs/42: field title: expected String, found int"), "\(wrongType)")

        let missing = try #require(failure(["title": "x"]))
        #expect(missing.path == "plays" && missing.found == "nothing", "\(missing)")

        let nested = try #require(
            failure(["title": "x", "plays": 1, "album": .map(["title": "A", "tracks": .list([1, "two"])])])
        )
        #expect(nested.path == "album.tracks[1]" && nested.expected == "Int" && nested.found == "string", "\(nested)")

        let null = try #require(failure(["title": .null, "plays": 1]))
        #expect(null.path == "title" && null.found == "null", "\(null)")

        let overflow = try #require(failure(["title": "x", "plays": 1, "small": 300]))
        #expect(overflow.path == "small" && overflow.expected == "Int8", "\(overflow)")

        let notAMap = try #require(failure(["title": "x", "plays": 1, "album": "A"]))
        #expect(notAMap.path == "album" && notAMap.found == "string", "\(notAMap)")

        // Leniencies: an int reads as a Double; an absent or null optional is nil.
        struct Widened: Codable { var score: Double; var note: String? }
        let widened = try RecordDecoder().decode(Widened.self, from: ["score": 3, "note": .null])
        #expect(widened.score == 3 && widened.note == nil)
    }

    @Test("a mismatch reads as the README shows it, without repeating what was found")
    func mismatchDescription() throws {
        struct Album: Codable, Sendable { var tracks: [Int] }
        struct Song: StoredRecord {
            static let table: Key = "songs"
            var id: Int
            var title: String
            var album: Album?
        }
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["title": "x", "album": ["tracks": [1, 2, "three"]]], id: 7, into: "songs")
        try builder.insert(["title": .null], id: 8, into: "songs")
        let value = builder.database
        let mismatch = #expect(throws: RecordDecodingError.self) { try value.record(Song.self, id: 7) }
        #expect(mismatch.map { "\($0)" } == "songs/7: field album.tracks[2]: expected Int, found string")
        #expect(mismatch?.reason == "")
        let null = #expect(throws: RecordDecodingError.self) { try value.record(Song.self, id: 8) }
        #expect(null.map { "\($0)" } == "songs/8: field title: expected String, found null")
        // A reason that says more is kept.
        let refused = RecordDecodingError(
            table: "songs",
            id: 9,
            path: "uuid",
            expected: "UUID",
            found: "string",
            reason: "not a UUID"
        )
        #expect("\(refused)" == "songs/9: field uuid: expected UUID, found string (not a UUID)")
    }

    @Test("random records decode into a model or throw RecordDecodingError, never crash", arguments: [UInt64(3)])
    func fuzz(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func value(_ depth: Int) -> Value {
            switch random.int(below: depth > 2 ? 7 : 10) {
            case 0: return .null
            case 1: return .bool(random.chance(50))
            case 2: return .int(Int64(bitPattern: random.next()) >> random.int(below: 64))
            case 3: return .double(Double(random.int(below: 100)) / 3)
            case 4:
                return .string(["", "x", "9", "title", "550e8400-e29b-41d4-a716-446655440000"][random.int(below: 5)])
            case 5: return .bytes(random.bytes(3))
            case 6: return .date(Date(timeIntervalSinceReferenceDate: 7))
            case 7: return .list(PersistentVector((0..<random.int(below: 4)).map { _ in value(depth + 1) }))
            default:
                let keys: [Key] = ["title", "tracks", "role", "name", "share", "x"]
                return .map(
                    PersistentMap(
                        uniqueKeysWithValues: Set(
                            (0..<random.int(below: 4)).map { _ in keys[random.int(below: keys.count)] }
                        ).map { ($0, value(depth + 1)) }
                    )
                )
            }
        }
        // Sorted: a dictionary's key order differs between processes, and the seed must replay.
        let names: [Key] =
            (Track.random(&random, id: 0).expectedFields.keys.map { $0 } + ["title", "plays", "album", "small"])
            .sorted()
        var decoded = 0
        for _ in 0..<3_000 {
            var fields: [Key: Value] = [:]
            // Half start from a record that fits, then take random damage.
            if random.chance(50) {
                fields["title"] = "x"
                fields["plays"] = 1
            }
            for _ in 0..<random.int(below: 12) { fields[names[random.int(below: names.count)]] = value(0) }
            let record = Record(fields)
            for attempt in 0..<2 {
                do {
                    if attempt == 0 {
                        _ = try RecordDecoder().decode(Wanted.self, from: record, id: 1, table: "t")
                    } else {
                        _ = try RecordDecoder(idKey: "id").decode(Track.self, from: record, id: 1, table: "t")
                    }
                    decoded += 1
                } catch is RecordDecodingError {
                } catch {
                    Issue.record("seed \(seed): \(error) for \(record)")
                }
            }
        }
        #expect(decoded > 0, "some random records fit Wanted")
    }

    @Test("a StoredRecord's ID is the record's key: integers, strings and UUIDs")
    func identifiers() throws {
        struct ByName: StoredRecord, Equatable {
            static let table: Key = "people"
            var id: String
            var age: Int
        }
        struct ByUUID: StoredRecord, Equatable {
            static let table: Key = "devices"
            static var idKey: String { "serial" }
            var serial: UUID
            var label: String
            var id: UUID { serial }
            enum CodingKeys: String, CodingKey { case serial, label }
        }
        var builder = TransactionBuilder(on: Database())
        let person = ByName(id: "ada 🧮", age: 36)
        let device = ByUUID(serial: UUID(), label: "phone")
        try builder.insert(person)
        try builder.insert(device)
        let value = builder.database
        #expect(value.record(RecordID("ada 🧮"), in: "people")?["id"] == nil)
        #expect(value.record(RecordID(device.serial), in: "devices")?["serial"] == nil)
        #expect(try value.record(ByName.self, id: "ada 🧮") == person)
        #expect(try value.record(ByUUID.self, id: device.serial) == device)
        #expect(try value.record(ByName.self, id: "nobody") == nil)
        #expect(try value.records(ByName.self) == [person])
        #expect(throws: ApplyError.self) { try builder.insert(person) }
    }

    class Base: Codable {
        var name: String
        init(name: String) { self.name = name }
    }

    final class Derived: Base {
        var level: Int
        init(name: String, level: Int) {
            self.level = level
            super.init(name: name)
        }
        enum CodingKeys: String, CodingKey { case level }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            level = try container.decode(Int.self, forKey: .level)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(level, forKey: .level)
            try super.encode(to: container.superEncoder())
        }
    }

    /// Each element an Int if it is one, else skipped: the standard lossy pattern.
    struct Lossy: Codable {
        var numbers: [Int]
        init(from decoder: any Decoder) throws {
            var list = try decoder.container(keyedBy: CodingKeys.self).nestedUnkeyedContainer(forKey: .numbers)
            numbers = []
            while !list.isAtEnd {
                if let number = try? list.decode(Int.self) {
                    numbers.append(number)
                } else {
                    _ = try list.decode(Skip.self)
                }
            }
        }
        enum CodingKeys: String, CodingKey { case numbers }
        struct Skip: Decodable { init(from decoder: any Decoder) throws {} }
    }

    @Test("classes through super coders, lossy lists, canonical sets and dictionaries, Float range")
    func codableCorners() throws {
        let derived = try RecordDecoder().decode(
            Derived.self,
            from: RecordEncoder().encode(Derived(name: "n", level: 3))
        )
        #expect(derived.name == "n" && derived.level == 3)

        let lossy = try RecordDecoder().decode(Lossy.self, from: ["numbers": .list([1, "x", 2, .null, 3])])
        #expect(lossy.numbers == [1, 2, 3])

        struct Bag: Codable { var tags: Set<String>; var byID: [UUID: Int] }
        let ids = (0..<20).map { _ in UUID() }
        var a = Bag(tags: [], byID: [:])
        var b = Bag(tags: [], byID: [:])
        for n in 0..<20 {
            a.tags.insert("t\(n)")
            a.byID[ids[n]] = n
        }
        for n in (0..<20).reversed() {
            b.tags.insert("t\(n)")
            b.byID[ids[n]] = n
        }
        b.tags.reserveCapacity(500)
        #expect(try RecordEncoder().encode(a) == RecordEncoder().encode(b), "equal values encode to equal records")

        struct Small: Codable { var value: Float }
        #expect(throws: RecordDecodingError.self) { try RecordDecoder().decode(Small.self, from: ["value": 1e300]) }
        #expect(try RecordDecoder().decode(Small.self, from: ["value": 2.5]).value == 2.5)
    }

    @Test("saving an unchanged model records no change; a query on another table does not decode")
    func unchangedSave() throws {
        struct Tagged: StoredRecord {
            static let table: Key = "tagged"
            var id: Int
            var tags: Set<String>
        }
        var builder = TransactionBuilder(on: Database())
        try builder.insert(Tagged(id: 1, tags: Set((0..<30).map { "tag \($0)" })))
        var next = TransactionBuilder(on: builder.database)
        let read = try #require(try builder.database.record(Tagged.self, id: 1))
        try next.save(Tagged(id: 1, tags: Set(read.tags.reversed())))
        #expect(next.changes.isEmpty)
        #expect(throws: RecordDecodingError.self) {
            _ = try builder.database.query("other").records(Tagged.self)
        }
    }
}
