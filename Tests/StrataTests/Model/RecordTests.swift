import Strata
import Testing

@Suite("Record")
struct RecordTests {
    @Test("field reads and writes against a Dictionary model", arguments: [UInt64(1), 2, 3])
    func model(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var record = Record()
        var model: [String: Value] = [:]
        let names = (0..<40).map { "field\($0)" }
        for step in 0..<2_000 {
            let name = names[random.int(below: names.count)]
            if random.chance(30) {
                record[name] = nil
                model[name] = nil
            } else {
                let value = Value.int(Int64(random.int(below: 1_000)))
                record[name] = value
                model[name] = value
            }
            if step % 100 == 0 {
                #expect(record.count == model.count, "seed \(seed) step \(step)")
                #expect(record.names == model.keys.sorted(), "seed \(seed) step \(step): names in order")
                for (key, value) in model { #expect(record[key] == value, "seed \(seed) step \(step)") }
            }
        }
        #expect(record == Record(model))
        #expect(record.hashValue == Record(model).hashValue)
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
        #expect(FieldPath("a", "b").description == "a.b")
        #expect(FieldPath("a").isField)
    }
}
