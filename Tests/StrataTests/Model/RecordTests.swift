import Foundation
import Strata
import Testing

@Suite("Record")
struct RecordTests {
    @Test("field reads and writes against a Dictionary model", arguments: [UInt64(1), 2, 3])
    func model(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var values = RunGenerator(seed: seed)
        var record = Record()
        var model: [Key: Value] = [:]
        // Non-ASCII and mixed-case names: fields sort by UTF-8 bytes.
        let names: [Key] = (0..<36).map { Key("field\($0)") } + ["Zebra", "apple", "äpfel", "émile"]
        let utf8Order: (Key, Key) -> Bool = { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }
        for step in 0..<2_000 {
            let name = names[random.int(below: names.count)]
            if random.chance(30) {
                record[name] = nil
                model[name] = nil
            } else {
                let value = random.chance(50) ? Value.int(Int64(random.int(below: 1_000))) : values.value()
                record[name] = value
                model[name] = value
            }
            if step % 100 == 0 {
                #expect(record.count == model.count, "seed \(seed) step \(step)")
                #expect(record.names == model.keys.sorted(by: utf8Order), "seed \(seed) step \(step): names in order")
                #expect(record.fields.map(\.name) == record.names, "seed \(seed) step \(step)")
                for (key, value) in model { #expect(record[key] == value, "seed \(seed) step \(step)") }
                #expect(record["absent, never interned \(seed)"] == nil)
            }
        }
        // However it was built, a record with the same fields is equal,
        // hashes equal and encodes to the same bytes.
        let rebuilt = Record(model)
        #expect(record == rebuilt)
        #expect(record.hashValue == rebuilt.hashValue)
        #expect(BinaryCodec.encode(record) == BinaryCodec.encode(rebuilt))
        var other = rebuilt
        if let name = model.keys.first {
            other[name] = .string("changed")
            #expect(other != record)
        }
    }

    @Test("a song-like record of 10 fields packs into one small allocation")
    func compact() throws {
        let song: Record = [
            "title": "Electric Midnight Garden", "track": 7, "plays": 132, "rating": 4,
            "path": "/Music/Artist 12/Album 301/7 Electric Midnight Garden.m4a", "duration": 254.125,
            "added": .date(Date(timeIntervalSinceReferenceDate: 612_345_678)),
            "artist": .reference(RecordReference(table: "artists", id: RecordID(12))),
            "album": .reference(RecordReference(table: "albums", id: RecordID(301))),
            "tags": ["rock", "live"],
        ]
        // The values' own bytes (~130: the path alone is 56) plus one name ID
        // and one tag per field; as a `[String: Value]`-like array of pairs
        // with out-of-line strings and boxes it was ~1,000. A name ID is a
        // varint of the process-wide name table, which the suites running
        // beside this one fill: past 127 names an ID takes two bytes, so
        // each of the ten fields may add one (162 was seen in CI).
        #expect(song.packedSize <= 160 + 10)
        #expect(try BinaryCodec.decodeRecord(BinaryCodec.encode(song)) == song)
        #expect(song["path"] == "/Music/Artist 12/Album 301/7 Electric Midnight Garden.m4a")
        #expect(song["tags"] == ["rock", "live"])
    }

    @Test("nested writes create maps, refuse non-maps, and report what they replaced")
    func nestedPaths() throws {
        var record: Record = ["title": "Blue River"]
        #expect(try record.setValue("Daily", at: FieldPath("rss", "feeds", "42", "editedName")) == nil)
        #expect(record[path: "rss.feeds.42.editedName"] == "Daily")
        #expect(try record.setValue("Weekly", at: "rss.feeds.42.editedName") == "Daily")
        #expect(try record.setValue(3, at: "rss.feeds.42.unread") == nil)
        #expect(record[path: "rss.feeds.42"] == ["editedName": "Weekly", "unread": 3])

        let before = record
        #expect(throws: FieldPathError.self) { try record.setValue(1, at: "title.sub") }
        #expect(record == before, "a refused write changes nothing")
        do {
            try record.setValue(1, at: "title.sub.deeper")
        } catch let error as FieldPathError {
            #expect(error.description == "cannot write title.sub.deeper: title holds \"Blue River\", not a map")
        }

        #expect(record.removeValue(at: "rss.feeds.42.unread") == 3)
        #expect(record.removeValue(at: "rss.feeds.42.unread") == nil)
        #expect(record.removeValue(at: "title.sub") == nil)
        #expect(record[path: "rss.feeds.42"] == ["editedName": "Weekly"])
        #expect(record.removeValue(at: "rss.feeds.42.editedName") == "Weekly")
        #expect(record[path: "rss.feeds.42"] == [:], "emptied maps stay")
        #expect(record.removeValue(at: "title") == "Blue River")
        #expect(record.names == ["rss"])
    }

    @Test("field paths parse and print")
    func paths() {
        #expect(FieldPath(dotted: "a.b.c") == FieldPath("a", "b", "c"))
        #expect(FieldPath(dotted: "") == nil)
        #expect(FieldPath(dotted: "a..b") == nil)
        #expect(FieldPath(dotted: "a") == FieldPath("a"))
        for text in [".", "a.", ".a", ".."] { #expect(FieldPath(dotted: text) == nil, "\(text)") }
        // A dot with a combining mark is one character, not a separator.
        #expect(FieldPath(dotted: ".\u{301}") == FieldPath(Key(".\u{301}")))
        #expect(FieldPath(dotted: "\u{E9}") == FieldPath("\u{E9}"))
        #expect(FieldPath(dotted: "e\u{301}.x")?.field == Key("e\u{301}"))
        // Dot-like characters are not dots: one field each.
        for text in ["a\u{FF0E}b", "a\u{2024}b", "a\u{FE52}b"] {
            #expect(FieldPath(dotted: text) == FieldPath(Key(text)), "\(text)")
        }
        #expect(FieldPath("a", "b").description == "a.b")
        #expect(FieldPath("a").isField)
    }
}
