import Foundation
import PersistentCollections
import Strata
import StrataCommands
import Testing

/// `strata import` reads lines in the shape `strata export` writes straight
/// into packed records; every other line goes the general way (members as
/// values, then packed). Whatever the direct reading accepts must be, byte
/// for byte, what the general reading makes of the same line.
@Suite("strata import: lines read straight into records")
struct RecordLineTests {
    /// The direct reading of `line`, and the general one (nil when it throws).
    static func both(
        _ line: [UInt8],
        _ parser: RecordLineParser,
        _ format: RecordLineFormat,
        _ writer: inout RecordWriter
    ) -> (direct: ParsedRecord?, general: ParsedRecord?) {
        line.withUnsafeBufferPointer { text in
            let direct = JSONReader.record(text, format, into: &writer)
            return (direct, try? parser.generalRecord(text, line: 1))
        }
    }

    static func randomRecord(_ random: inout SeededRandom) -> Record {
        var fields: [(Key, Value)] = []
        for _ in 0..<random.int(below: 7) {
            let name =
                random.chance(70)
                ? ["title", "plays", "tags", "added", "é", "a b"][random.int(below: 6)]
                : JSONCodecTests.randomString(&random)
            fields.append((Key(name), JSONCodecTests.randomValue(&random)))
        }
        return Record(fields: fields)
    }

    /// `line` changed the way hand-edited or damaged files are: a byte
    /// replaced, cut short, a structural character or whitespace put in, a
    /// member repeated.
    static func mutated(_ line: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = line
        switch random.int(below: 6) {
        case 0 where !bytes.isEmpty: bytes[random.int(below: bytes.count)] = UInt8(truncatingIfNeeded: random.next())
        case 1 where !bytes.isEmpty: bytes.removeLast(random.int(below: bytes.count))
        case 2:
            let marks = Array("{}[]\",:\\$-0.e".utf8)
            bytes.insert(marks[random.int(below: marks.count)], at: random.int(below: bytes.count + 1))
        case 3:
            // Whitespace after a random structural character.
            let marks = bytes.indices.filter { "{}[],:".utf8.contains(bytes[$0]) }
            if let mark = marks.randomElement(using: &random) {
                bytes.insert(contentsOf: Array(" \t ".utf8), at: mark + 1)
            }
        case 4:
            // The first member repeated at the end.
            if let comma = bytes.firstIndex(of: UInt8(ascii: ",")), bytes.last == UInt8(ascii: "}") {
                bytes.insert(contentsOf: [UInt8(ascii: ",")] + bytes[1..<comma], at: bytes.count - 1)
            }
        default: break
        }
        return bytes
    }

    @Test(
        "any line the direct reading accepts reads to the general reading's record, byte for byte (random and mutated lines)",
        arguments: [11, 12, 13]
    )
    func sameRecords(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var writer = RecordWriter()
        var directUnmutated = 0
        var directMutated = 0
        var unmutated = 0
        for round in 0..<6_000 {
            let record = Self.randomRecord(&random)
            let id: RecordID =
                random.chance(50)
                ? RecordID(Int64(random.int(below: 1_000_000)) - 500) : JSONCodecTests.randomID(&random)
            let given = random.chance(50)
            // `$map` and `$table` as the ID's member: a line names its table in
            // `$table`; `$map` is a plain member at a record's level.
            let idField = random.chance(80) ? "$id" : ["key", "$map", "$table", "title"][random.int(below: 4)]
            var json = JSONWriter()
            json.record(record, id: id, idField: idField, table: given ? nil : "songs")
            let parser = RecordLineParser(table: given ? "songs" : nil, idField: Key(idField))
            let format = RecordLineFormat(idField: Key(idField), table: given ? "songs" : nil)
            let isMutated = round % 2 == 1
            let line = isMutated ? Self.mutated(json.bytes, &random) : json.bytes
            let (direct, general) = Self.both(line, parser, format, &writer)
            if let direct {
                #expect(general == direct, "seed \(seed) round \(round): \(String(decoding: line, as: UTF8.self))")
                if isMutated { directMutated += 1 } else { directUnmutated += 1 }
            }
            if !isMutated, !(idField == "$table" && !given),
                !(idField == "title" && record["title"] != nil)
            {
                unmutated += 1
                // The export's own lines all read back, either way.
                #expect(general?.record == record && general?.id == id, "seed \(seed) round \(round)")
            }
        }
        // The direct reading is exercised, also on changed lines, and declines some.
        #expect(
            directUnmutated > unmutated / 10 && directUnmutated < unmutated,
            "seed \(seed): \(directUnmutated) of \(unmutated)"
        )
        #expect(directMutated > 100, "seed \(seed): \(directMutated)")
    }

    @Test("a song as the export writes it is read directly, with its dates, references, list, numbers and non-ASCII")
    func songLines() throws {
        let parser = RecordLineParser(table: "songs", idField: "$id")
        let format = RecordLineFormat(idField: "$id", table: "songs")
        var writer = RecordWriter()
        let lines = [
            #"{"$id":0,"added":{"$date":"2017-09-05T08:50:07.000Z","$seconds":526294207.0},"album":{"$ref":{"table":"albums","id":92291}},"artist":{"$ref":{"table":"artists","id":"Björk"}},"duration":398.005,"path":"/Music/日本/1 Ocean.m4a","plays":474,"rating":-4,"tags":["hip-hop","jazz"],"title":"Ocean Glass Dream 🎵","track":2,"live":false,"cover":null}"#,
            #"  { "$id" : "x-1" , "added" : { "$seconds" : 5 } , "when" : { "$date" : "2020-01-02T03:04:05.678Z" } , "album" : { "$ref" : { "id" : -3 , "table" : "albums" } } , "tags" : [ [ ] , [ 1 , [ 2.5e3 ] ] ] }  "#,
            "\u{FEFF}{\"$id\":7}",
        ]
        // The first line naming a table is read the general way (see `newReferenceTable`).
        _ = Self.both(Array(lines[0].utf8), parser, format, &writer)
        for line in lines {
            let (direct, general) = Self.both(Array(line.utf8), parser, format, &writer)
            let read = try #require(direct, "not read directly: \(line)")
            #expect(read == general)
        }
        // What the first line holds, read directly.
        let first = try #require(Self.both(Array(lines[0].utf8), parser, format, &writer).direct)
        #expect(first.record["title"] == .string("Ocean Glass Dream 🎵"))
        #expect(first.record["artist"] == .reference(RecordReference(table: "artists", id: RecordID("Björk"))))
        #expect(first.record["added"] == .date(Date(timeIntervalSinceReferenceDate: 526294207)))
        #expect(first.record["tags"] == .list(["hip-hop", "jazz"]))
    }

    @Test(
        "lines outside the direct reading's shape go the general way, which reads or refuses them",
        arguments: [
            (#"{"$id":1,"a":"say \"hi\""}"#, true),  // an escape
            (#"{"$id":{"$uuid":"6BA7B810-9DAD-11D1-80B4-00C04FD430C8"},"a":1}"#, true),
            (#"{"$id":1,"m":{"k":1}}"#, true),  // a map
            (#"{"$map":{"x":1},"$id":1}"#, true),
            (#"{"$id":1,"a":1,"a":2}"#, false),  // a field twice: which value?
            (#"{"$id":1,"$id":2}"#, false),  // an ID twice: which record?
            (#"{"$id":1,"$table":"songs"}"#, false),  // a table member, and the table given
            (#"{"$id":1,"d":{"$date":"2020-01-02T03:04:05Z","$date":"x"}}"#, false),  // a member twice
            (#"{"$id":1,"d":{"$seconds":"5"}}"#, false),
            (#"{"$id":1,"d":{"$date":"not a date"}}"#, false),
            // A `$date` beside `$seconds` that is no date, or another time.
            (#"{"$id":1,"d":{"$date":"yesterday","$seconds":1.0}}"#, false),
            (#"{"$id":1,"d":{"$seconds":526294207.0,"$date":"2018-09-05T08:50:07.000Z"}}"#, false),
            (#"{"$id":1,"d":{"$date":"2017-09-05T08:50:07.002Z","$seconds":526294207.0}}"#, false),
            (#"{"$id":1,"d":{"$date":"2017-09-05T08:50:06.998Z","$seconds":526294207.0}}"#, false),
            (#"{"$id":1,"d":{"$date":5,"$seconds":526294207.0}}"#, false),
            (#"{"$id":1,"d":{"$date":"2017-09-05T08:50:07.249Z","$seconds":526294207.25}}"#, false),
            (#"{"$id":1,"d":{"$date":"2017-09-05T08:50:07Z","$seconds":526294207.25}}"#, false),
            (#"{"$id":1,"d":{"$date":"2017-02-29T08:50:07Z","$seconds":510137407.0}}"#, false),
            (#"{"$id":1,"r":{"$ref":{"table":"t","id":1,"id":2}}}"#, false),
            (#"{"$id":1,"r":{"$ref":{"table":"t"}}}"#, false),
            (#"{"$id":1.5}"#, false),
            (#"{"$id":1,"n":99999999999999999999}"#, false),
            (#"{"$id":1,"n":1e400}"#, false),
            (#"{"$id":1,"n":1e-400}"#, false),
            (#"{"$id":1,"d":{"$seconds":9007199254740993}}"#, false),
            (#"{"$id":1} x"#, false),
            (#"{"a":1}"#, false),
            (#"[1]"#, false),
        ]
    )
    func declined(line: String, generalReads: Bool) {
        let parser = RecordLineParser(table: "songs", idField: "$id")
        let format = RecordLineFormat(idField: "$id", table: "songs")
        var writer = RecordWriter()
        // A reference written, then the line given up (its field repeated,
        // which the general reading refuses).
        let given = Array(#"{"$id":9,"r":{"$ref":{"table":"albums","id":1}},"r":2}"#.utf8)
        _ = Record(["r": .reference(RecordReference(table: "albums", id: 1))])
        let (repeated, kept) = Self.both(given, parser, format, &writer)
        #expect(repeated == nil && kept == nil)
        let (direct, general) = Self.both(Array(line.utf8), parser, format, &writer)
        #expect(direct == nil)
        #expect((general != nil) == generalReads)
        // The writer is sound after giving up: the next line reads as alone.
        let next = Array(#"{"$id":2,"b":[1,"two"]}"#.utf8)
        let (after, alone) = Self.both(next, parser, format, &writer)
        #expect(after != nil && after == alone)
    }

    @Test(
        "lists as deep as a store takes are read directly; one deeper is left to the general reading, which refuses it"
    )
    func nesting() {
        let parser = RecordLineParser(table: "songs", idField: "$id")
        let format = RecordLineFormat(idField: "$id", table: "songs")
        var writer = RecordWriter()
        for depth in [Value.maximumNesting - 1, Value.maximumNesting, Value.maximumNesting + 1] {
            let list = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
            let line = Array(#"{"$id":1,"deep":"#.utf8) + Array(list.utf8) + [UInt8(ascii: "}")]
            let (direct, general) = Self.both(line, parser, format, &writer)
            if depth <= Value.maximumNesting {
                #expect(direct != nil && direct == general, "depth \(depth)")
            } else {
                #expect(direct == nil && general == nil, "depth \(depth)")
            }
        }
    }

    @Test("a $date beside $seconds is read when it says the same time, in any ISO 8601 form, both ways")
    func dateBesideSeconds() throws {
        let parser = RecordLineParser(table: "songs", idField: "$id")
        let format = RecordLineFormat(idField: "$id", table: "songs")
        var writer = RecordWriter()
        let seconds = 526_294_207.25
        for text in [
            "2017-09-05T08:50:07.250Z",  // as export writes it
            "2017-09-05T10:50:07.250+02:00",  // an offset
            "2017-09-05T08:50:07.25Z",
        ] {
            for line in [
                #"{"$id":1,"d":{"$date":"\#(text)","$seconds":\#(seconds)}}"#,
                #"{"$id":1,"d":{"$seconds":\#(seconds),"$date":"\#(text)"}}"#,
            ] {
                let (direct, general) = Self.both(Array(line.utf8), parser, format, &writer)
                let read = try #require(general, "\(line)")
                #expect(read.record["d"] == .date(Date(timeIntervalSinceReferenceDate: seconds)), "\(line)")
                if let direct { #expect(direct == read, "\(line)") }
            }
        }
        // Proleptic Gregorian before 1582, as ISO 8601 has it; far dates,
        // where a double's step is more than a microsecond.
        for (text, seconds) in [
            ("1500-01-01T00:00:00Z", -15_810_076_800.0), ("1500-01-01T00:00:00.000+00:00", -15_810_076_800.0),
            ("9478-07-13T19:07:17.856Z", 235_968_059_237.857), ("9478-07-13T19:07:17.856+00:00", 235_968_059_237.857),
            ("9478-07-13T20:37:17.856+01:30", 235_968_059_237.857),
        ] {
            let line = #"{"$id":1,"d":{"$date":"\#(text)","$seconds":\#(seconds)}}"#
            let (direct, general) = Self.both(Array(line.utf8), parser, format, &writer)
            #expect(general?.record["d"] == .date(Date(timeIntervalSinceReferenceDate: seconds)), "\(line)")
            if let direct { #expect(direct == general, "\(line)") }
        }
        // Every time export writes, with its text rounded down to the
        // millisecond, reads back exactly, both ways; seconds alone too;
        // the same text with an offset too; two milliseconds off is refused.
        var random = SeededRandom(seed: 0x5EC0)
        for _ in 0..<2_000 {
            let value =
                Double(Int.random(in: -20_000_000_000...250_000_000_000, using: &random))
                / Double(1 << Int.random(in: 0...12, using: &random))
                + Double(Int.random(in: 0...999, using: &random)) / 1000
            var json = JSONWriter()
            json.date(secondsSince2001: value)
            let written = String(decoding: json.bytes, as: UTF8.self)
            let line = Array(#"{"$id":1,"d":"#.utf8) + json.bytes + [UInt8(ascii: "}")]
            let (direct, general) = Self.both(line, parser, format, &writer)
            #expect(direct != nil && direct == general, "\(written)")
            #expect(general?.record["d"] == .date(Date(timeIntervalSinceReferenceDate: value)))
            // `{"$date":"….mmmZ","$seconds":…}`: the text's milliseconds end 5 bytes before the `Z`.
            guard let zone = written.firstIndex(of: "Z") else { continue }
            let millis = written.index(zone, offsetBy: -3)
            let offset = written.replacingCharacters(in: zone...zone, with: "+00:00")
            let number = Int(written[millis..<zone])!
            // Two off: a `$date` of an earlier build (which rounded through
            // seconds since 1970) may say the millisecond beside this one.
            let other = String(format: "%03d", number < 998 ? number + 2 : number - 2)
            let off = written.replacingCharacters(in: millis..<zone, with: other)
            for (variant, reads) in [(offset, true), (off, false)] {
                let line = Array(#"{"$id":1,"d":"#.utf8) + Array(variant.utf8) + [UInt8(ascii: "}")]
                let (direct, general) = Self.both(line, parser, format, &writer)
                #expect((general != nil) == reads, "\(variant)")
                #expect(direct == nil || direct == general, "\(variant)")
                if reads { #expect(general?.record["d"] == .date(Date(timeIntervalSinceReferenceDate: value))) }
            }
        }
    }

    @Test("a table named \"\" is read directly and the general way, as export writes it")
    func emptyTableName() throws {
        let parser = RecordLineParser(table: nil, idField: "$id")
        let format = RecordLineFormat(idField: "$id", table: nil)
        var writer = RecordWriter()
        let (direct, general) = Self.both(Array(#"{"$table":"","$id":1,"x":1}"#.utf8), parser, format, &writer)
        let read = try #require(direct)
        #expect(read == general)
        #expect(read.table == "" && read.id == 1 && read.record == ["x": 1])
    }

    @Test("invalid UTF-8 in a name, a string, a table or an ID is never read directly")
    func invalidUTF8() {
        let parser = RecordLineParser(table: nil, idField: "$id")
        let format = RecordLineFormat(idField: "$id", table: nil)
        var writer = RecordWriter()
        let bad: [UInt8] = [0xC3, 0x28]
        let shapes: [[UInt8]] = [
            Array(#"{"$id":1,"$table":"t",""#.utf8) + bad + Array(#"":1}"#.utf8),
            Array(#"{"$id":1,"$table":"t","a":""#.utf8) + bad + Array(#""}"#.utf8),
            Array(#"{"$id":1,"$table":""#.utf8) + bad + Array(#""}"#.utf8),
            Array(#"{"$id":""#.utf8) + bad + Array(#"","$table":"t"}"#.utf8),
            Array(#"{"$id":1,"$table":"t","r":{"$ref":{"table":""#.utf8) + bad + Array(#"","id":1}}}"#.utf8),
            Array(#"{"$id":1,"$table":"t","r":{"$ref":{"table":"t","id":""#.utf8) + bad + Array(#""}}}"#.utf8),
            // A `$date` the seconds override is still a string, and checked.
            Array(#"{"$id":1,"$table":"t","d":{"$date":""#.utf8) + bad + Array(#"","$seconds":0}}"#.utf8),
            Array(#"{"$id":1,"$table":"t","d":{"$seconds":0,"$date":""#.utf8) + bad + Array(#""}}"#.utf8),
            Array(#"{"$id":1,"$table":"t","d":{"$seconds":0,"$date":""#.utf8) + [0xED, 0xA0, 0x80]
                + Array(#""}}"#.utf8),
        ]
        _ = Record(["r": .reference(RecordReference(table: "t", id: 1))])
        for line in shapes {
            let (direct, general) = Self.both(line, parser, format, &writer)
            #expect(direct == nil && general == nil, "\(line)")
        }
    }

    @Test("an ID member named $map is read the general way, first or not (a record's members are no map wrapper)")
    func idFieldNamedMap() {
        let parser = RecordLineParser(table: "songs", idField: "$map")
        let format = RecordLineFormat(idField: "$map", table: "songs")
        var writer = RecordWriter()
        let lines: [(String, RecordID, Record)] = [
            (#"{"$map":5,"a":2}"#, 5, ["a": 2]), (#"{"a":2,"$map":5}"#, 5, ["a": 2]), (#"{"$map":"x"}"#, "x", [:]),
        ]
        for (line, id, record) in lines {
            let (direct, general) = Self.both(Array(line.utf8), parser, format, &writer)
            #expect(direct == nil, "\(line)")
            #expect(general?.id == id && general?.record == record, "\(line)")
        }
    }

    @Test("a reference to a table no record of the process names yet is left to the general reading")
    func newReferenceTable() {
        let table = Key("table-\(UUID().uuidString)")
        var writer = RecordWriter()
        writer.field("r")
        // Taking the name here would keep it in the process however the line ends.
        let taken = writer.reference(table: table, id: 1)
        #expect(!taken)
        writer.discard()
        // Once a record names it, the direct reading writes it.
        let named = Record(["r": .reference(RecordReference(table: table, id: 1))])
        writer.field("r")
        let written = writer.reference(table: table, id: 1)
        let record = writer.record()
        #expect(written && record == named)
    }

    @Test(
        "lines that repeat, reorder, drop, replace or repeat the names of the line before read as the general reading reads them"
    )
    func repeatedNames() throws {
        let parser = RecordLineParser(table: "songs", idField: "$id")
        let format = RecordLineFormat(idField: "$id", table: "songs")
        var writer = RecordWriter()
        let many = (0..<70).map { #""f\#(1_000 + $0)":\#($0)"# }.joined(separator: ",")
        let lines = [
            #"{"$id":1,"a":1,"b":"x","c":[1,2]}"#,
            #"{"$id":2,"a":2,"b":"y","c":[3]}"#,  // the same names, in order
            #"{"$id":3,"b":"z","a":3,"c":[]}"#,  // reordered
            #"{"$id":4,"a":4,"b":"w","c":[5]}"#,
            #"{"$id":5,"a":5,"b":"v"}"#,  // one fewer
            #"{"$id":6,"a":6,"b":"u","c":7}"#,  // one more again
            #"{"$id":7,"a":7,"b":"t","b2":8}"#,  // the last replaced
            #"{"$id":8,"a":8,"b":"s","b":9}"#,  // a repeat: refused
            #"{"$id":9,"a":9,"b":"r","b2":10}"#,
            #"{"$id":10,"a":9,"a":9,"b2":10}"#,  // a repeat where the line before had another name
            #"{"$id":11,"\#u{E9}":1,"e\#u{301}":2,"e":3}"#,  // precomposed and decomposed: two names
            #"{"$id":12,"e":3,"e\#u{301}":2,"\#u{E9}":1}"#,  // the same, in their order
            #"{"$id":13,\#(many)}"#,  // past the 64 names kept by position
            #"{"$id":14,\#(many)}"#,
            #"{"$id":15,"a":1,"b":"x","c":[1,2]}"#,
            #"{"$id":16}"#,
            #"{"$id":17}"#,
        ]
        var readDirectly = 0
        for line in lines {
            let (direct, general) = Self.both(Array(line.utf8), parser, format, &writer)
            let repeatsAName = line.contains(#""b":9"#) || line.contains(#""a":9,"a""#)
            if let direct {
                readDirectly += 1
                #expect(direct == general, "\(line)")
                // Read back through the packed form: names in order, values whole.
                #expect(Record(fields: direct.record.fields.map { ($0.name, $0.value) }) == direct.record, "\(line)")
            } else {
                // A name given twice is left to the general reading, which refuses it.
                #expect(repeatsAName, "\(line)")
                #expect(general == nil, "\(line)")
            }
        }
        #expect(readDirectly == lines.count - 2)
    }

    @Test("a line that names its ID or its table twice is refused: which record it meant is not known")
    func repeatedIDOrTable() {
        func reason(_ line: String, table: Key? = nil, idField: Key = "$id") -> String? {
            let parser = RecordLineParser(table: table, idField: idField)
            return [UInt8](line.utf8).withUnsafeBufferPointer { text -> String? in
                do {
                    _ = try parser.generalRecord(text, line: 7)
                    return nil
                } catch let error as RecordLineParser.Failure {
                    #expect(error.line == 7)
                    return error.reason
                } catch {
                    return "\(error)"
                }
            }
        }
        #expect(reason(#"{"$table":"t","$id":10,"$id":11,"a":1}"#) == "two $id members: which ID?")
        #expect(reason(#"{"$id":10,"a":1,"$id":10}"#) == "two $id members: which ID?")
        #expect(reason(#"{"key":1,"a":1,"key":"1"}"#, table: "t", idField: "key") == "two key members: which ID?")
        #expect(reason(#"{"$table":"t","$table":"u","$id":12,"a":1}"#) == "two $table members: which table?")
        #expect(reason(#"{"$table":"t","$id":12,"$table":"t"}"#) == "two $table members: which table?")
        // A repeated field too: JSON readers differ on which value counts.
        #expect(reason(#"{"$table":"t","$id":12,"a":1,"a":2}"#) == #"two members named "a": which value?"#)
        #expect(reason(#"{"$id":12,"a":1}"#, table: "t") == nil)
        // And a name repeated inside a value: a map, a special form (which
        // would otherwise read as a map).
        for line in [
            #"{"$id":1,"m":{"x":1,"x":2}}"#, #"{"$id":1,"d":{"$seconds":1,"$seconds":2}}"#,
            #"{"$id":1,"b":{"$bytes":"AA==","$bytes":"AQ=="}}"#, #"{"$id":1,"m":{"$map":{"$k":1,"$k":1}}}"#,
            #"{"$id":1,"l":[{"y":1,"z":0,"y":1}]}"#,
        ] {
            #expect(reason(line, table: "t")?.contains("two members named") == true, "\(line)")
        }
        let many = (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        #expect(reason(#"{"$id":1,"m":{\#(many),"k39":0}}"#, table: "t")?.contains(#"two members named "k39""#) == true)
        #expect(reason(#"{"$id":1,"m":{\#(many)}}"#, table: "t") == nil)
    }
}
