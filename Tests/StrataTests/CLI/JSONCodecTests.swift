import Foundation
import PersistentCollections
import Strata
import StrataCommands
import Testing

/// The JSON the `strata` command writes and reads: every value round-trips
/// exactly; hostile and mutated input is refused with a position, never a crash.
@Suite("strata: JSON reader and writer")
struct JSONCodecTests {
    static func randomString(_ random: inout SeededRandom) -> String {
        let pieces = [
            "a", "Z", " ", "\"", "\\", "\n", "\t", "\u{1}", "\u{1F}", "é", "日本", "🎵", "$", "/", "\u{7F}", "e\u{301}",
        ]
        return (0..<random.int(below: 8)).map { _ in pieces[random.int(below: pieces.count)] }.joined()
    }

    static func randomID(_ random: inout SeededRandom) -> RecordID {
        switch random.int(below: 3) {
        case 0: return RecordID(Int64(bitPattern: random.next()) >> Int64(random.int(below: 63)))
        case 1: return RecordID(randomString(&random))
        default: return RecordID(UUID())
        }
    }

    static func randomValue(_ random: inout SeededRandom, depth: Int = 0) -> Value {
        switch random.int(below: depth > 3 ? 9 : 11) {
        case 0: return .null
        case 1: return .bool(random.chance(50))
        case 2: return .int(Int64(bitPattern: random.next()) >> Int64(random.int(below: 64)))
        case 3:
            let specials: [Double] = [
                0, -0.0, 3, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e21, 0.1,
            ]
            return .double(
                random.chance(50) ? specials[random.int(below: specials.count)] : Double(bitPattern: random.next())
            )
        case 4: return .string(randomString(&random))
        case 5: return .bytes(random.bytes(random.int(below: 10)))
        case 6:
            return .date(Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: random.next()) >> 30) / 1_000))
        case 7: return .reference(RecordReference(table: Key(randomString(&random)), id: randomID(&random)))
        case 8: return .string("")
        case 9:
            return .list(
                PersistentVector((0..<random.int(below: 4)).map { _ in randomValue(&random, depth: depth + 1) })
            )
        default:
            var map = PersistentMap<Key, Value>()
            for _ in 0..<random.int(below: 4) {
                map[Key(randomString(&random))] = randomValue(&random, depth: depth + 1)
            }
            return .map(map)
        }
    }

    static func write(_ value: Value) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }

    static func read(_ bytes: [UInt8]) throws -> Value {
        try bytes.withUnsafeBufferPointer { try JSONReader.value($0) }
    }

    @Test("every value reads back equal (doubles and dates bit for bit), over 5,000 random values", arguments: [1, 2])
    func roundTrip(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        for n in 0..<5_000 {
            let value = Self.randomValue(&random)
            let bytes = Self.write(value)
            let back = try Self.read(bytes)
            #expect(back == value, "seed \(seed), value \(n): \(String(decoding: bytes, as: UTF8.self))")
            // Foundation reads it as JSON too.
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil,
                "seed \(seed), value \(n): not JSON: \(String(decoding: bytes, as: UTF8.self))"
            )
        }
    }

    @Test("record IDs of every kind round-trip through a line's id member")
    func recordIDs() throws {
        var random = SeededRandom(seed: 3)
        for _ in 0..<1_000 {
            let id = Self.randomID(&random)
            var writer = JSONWriter()
            writer.record(Record(["x": 1]), id: id, idField: "$id", table: "t")
            let members = try writer.bytes.withUnsafeBufferPointer { try JSONReader.object($0) }
            #expect(members.first?.1 == .string("t"))
            #expect(members.dropFirst().first.flatMap { JSONReader.recordID($0.1) } == id)
        }
    }

    @Test(
        "a record written from its packed bytes is, byte for byte, its fields written as values (3,000 random records)",
        arguments: [4, 5]
    )
    func recordsFromPackedBytes(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        // Field and table names are interned for the whole process (and a
        // codec test counts them while suites run side by side): 64 of
        // them, each needing what any name may (quotes, controls, UTF-8).
        var namesRandom = SeededRandom(seed: 99)
        let names = (0..<64).map { Key("n\($0)" + Self.randomString(&namesRandom)) }
        func pooled(_ value: Value) -> Value {
            switch value {
            case .reference(let reference):
                return .reference(
                    RecordReference(table: names[reference.table.string.utf8.count % 64], id: reference.id)
                )
            case .list(let items): return .list(PersistentVector(items.map(pooled)))
            case .map(let map): return .map(map.mapValues(pooled))
            default: return value
            }
        }
        for n in 0..<1_500 {
            var fields = (0..<random.int(below: 12)).map { _ in
                (names[random.int(below: names.count)], pooled(Self.randomValue(&random)))
            }
            if random.chance(10) {
                // Over 4 KB: lengths of several varint bytes.
                fields.append(("long", .string(String(repeating: "ü\"x", count: random.int(below: 3_000)))))
            }
            let record = Record(fields: fields)
            let id: RecordID
            let idJSON: [UInt8]
            if random.chance(40) {
                let number = Int64(bitPattern: random.next()) >> Int64(random.int(below: 63))
                (id, idJSON) = (RecordID(number), Self.write(.int(number)))
            } else if random.chance(30) {
                let uuid = UUID()
                (id, idJSON) = (RecordID(uuid), Array(#"{"$uuid":"\#(uuid.uuidString)"}"#.utf8))
            } else {
                let text = Self.randomString(&random)
                (id, idJSON) = (RecordID(text), Self.write(.string(text)))
            }
            var expected = Array(#"{"$table":"t","$id":"#.utf8) + idJSON
            for field in record {
                expected += [UInt8(ascii: ",")] + Self.write(.string(field.name.string)) + [UInt8(ascii: ":")]
                expected += Self.write(field.value)
            }
            expected.append(UInt8(ascii: "}"))
            var writer = JSONWriter()
            writer.record(record, id: id, idField: "$id", table: "t")
            #expect(
                writer.bytes == expected,
                "seed \(seed), record \(n): \(String(decoding: writer.bytes, as: UTF8.self))"
            )
            let members = try writer.bytes.withUnsafeBufferPointer { try JSONReader.object($0) }
            #expect(members.dropFirst(2).map { $0.0 } == record.map(\.name), "seed \(seed), record \(n)")
            #expect(members.dropFirst(2).map { $0.1 } == record.map(\.value), "seed \(seed), record \(n)")
        }
    }

    @Test("dates are written as ISO 8601 in UTC, milliseconds rounded down, from 1583 to 9999")
    func dateText() throws {
        var random = SeededRandom(seed: 6)
        // Times whose fraction is a multiple of 1/8 s are exact doubles, so
        // their milliseconds are known; from 1583-01-01 to 9999-12-31.
        let first: Int64 = -12_212_553_600
        let last: Int64 = 253_402_300_799
        var times: [(seconds: Int64, eighths: Int64)] = [(first, 0), (last, 7), (0, 0), (-1, 1), (951_782_399, 7)]
        // The first and last second of days around leap days, of years
        // divisible by 400, by 100 only, and by 4.
        for day: Int64 in [
            -11_670_998_400, -11_670_912_000, -8_515_324_800, -8_515_238_400, -2_203_977_600, -2_203_891_200,
            951_782_400, 951_868_800, 4_107_456_000, 4_107_542_400, -86_400, -12_181_104_000, 253_375_776_000,
        ] {
            times += [(day, 0), (day + 86_399, 7), (day - 1, 3)]
        }
        for _ in 0..<2_000 {
            times.append((first + Int64(random.next() % UInt64(last - first)), Int64(random.int(below: 8))))
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for (seconds, eighths) in times {
            let date = Date(timeIntervalSince1970: Double(seconds) + Double(eighths) / 8)
            let text = String(decoding: Self.write(.date(date)), as: UTF8.self)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let iso = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                parts.year!,
                parts.month!,
                parts.day!,
                parts.hour!,
                parts.minute!,
                parts.second!,
                Int(eighths * 125)
            )
            #expect(text.hasPrefix(#"{"$date":"\#(iso)","$seconds":"#), "\(seconds) s + \(eighths)/8: \(text)")
        }
        // Never later than the date, whatever its sub-millisecond part:
        // the last instant of 9999 stays in 9999, a time a hair before a
        // new minute, day or year stays before it.
        let edges: [(Double, String)] = [
            (253_402_300_799.9996, "9999-12-31T23:59:59.999Z"), (1_767_225_599.9999, "2025-12-31T23:59:59.999Z"),
            (-0.0004, "1969-12-31T23:59:59.999Z"), (1_700_000_000.1236, "2023-11-14T22:13:20.123Z"),
        ]
        for (seconds, iso) in edges {
            let text = String(decoding: Self.write(.date(Date(timeIntervalSince1970: seconds))), as: UTF8.self)
            #expect(text.hasPrefix(#"{"$date":"\#(iso)","#), "\(seconds): \(text)")
        }
    }

    @Test("a printed time reads back no later than the time it prints, and within a millisecond of it")
    func printedTimeReadsBack() throws {
        // `log --since` with a time `log` printed must keep that transaction.
        var random = SeededRandom(seed: 0xDA7E)
        for round in 0..<5_000 {
            let seconds =
                Double(Int.random(in: -12_000_000_000...252_000_000_000, using: &random))
                + Double(Int.random(in: 0...999_999, using: &random)) / 1_000_000
            let date = Date(timeIntervalSince1970: round % 2 == 0 ? seconds : seconds.rounded(.down))
            var json = JSONWriter()
            json.date(secondsSince2001: date.timeIntervalSinceReferenceDate)
            let text = String(decoding: json.bytes, as: UTF8.self)
            let printed = String(text.dropFirst(#"{"$date":""#.count).prefix(24))
            let parsed = try #require(JSONDates.parse(printed), "\(printed)")
            #expect(parsed <= date, "\(printed): \(parsed.timeIntervalSince1970) > \(date.timeIntervalSince1970)")
            // A millisecond, and the steps of a double this far from 2001.
            let step = Swift.max(date.timeIntervalSinceReferenceDate.ulp, date.timeIntervalSince1970.ulp)
            #expect(date.timeIntervalSince(parsed) < 0.001 + 4 * step, "\(printed)")
        }
    }

    @Test("what JSON allows and Strata reads: escapes, surrogate pairs, big numbers, whitespace")
    func accepted() throws {
        let cases: [(String, Value)] = [
            (#" "\u00e9\ud83c\udfb5\/" "#, .string("é🎵/")),
            ("12345678901234567890.0", .double(12_345_678_901_234_567_168)),
            ("-9223372036854775808", .int(.min)), ("1E2", .double(100)), ("-0", .int(0)), ("[ ]", .list([])),
            (#"{"$date":"2026-11-24T06:00:00Z"}"#, .date(try #require(JSONDates.parse("2026-11-24T06:00:00Z")))),
            (#"{"$bytes":"","x":1}"#, .map(["$bytes": "", "x": 1])),
            // Zero written small, and the smallest double: no underflow.
            ("0e-400", .double(0)), ("-0.000e-999", .double(-0.0)), ("5e-324", .double(.leastNonzeroMagnitude)),
        ]
        for (text, expected) in cases {
            #expect(try Self.read(Array(text.utf8)) == expected, "\(text)")
        }
    }

    @Test(
        "malformed JSON is refused with its position",
        arguments: [
            "", "{", "[1,]", "{\"a\" 1}", "\"open", "01", "1.", "1e", "-", "tru", "nul", "\"\\x\"", "\"\\ud800\"",
            "\"\\udc00\"", "\"\\u12\"", "1 2", "{\"$bytes\": 5}", "{\"$ref\": {\"table\": 1, \"id\": 2}}",
            "{\"$double\": \"big\"}",
            "\"\u{0}\"", "[" + String(repeating: "[", count: 200) + "]", "12345678901234567890", "1e400", "-1e400",
            "1e-400", "-2.5e-330", "0.000001e-320", "{\"$seconds\": 9007199254740993}",
            "{\"$map\": 1}", "{\"$double\": \"nan:7ff8\"}", "{\"$double\": \"nan:zz\"}",
            "{\"$double\": \"nan:-1\"}", "{\"$double\": \"nan:fff80000000000000\"}",
            // Base64 that Foundation's reader would take and make bytes of.
            "{\"$bytes\": \"====\"}", "{\"$bytes\": \"AA=A\"}", "{\"$bytes\": \"AA===\"}", "{\"$bytes\": \"AAA==\"}",
            "{\"$bytes\": \"AA==AA==\"}", "{\"$bytes\": \"A-B_\"}", "{\"$bytes\": \"AAAA \"}",
            // A name twice: which value?
            "{\"a\": 1, \"a\": 2}", "{\"$date\": \"2020-01-01\", \"$date\": \"2021-01-01\"}",
        ]
    )
    func refused(text: String) {
        #expect(throws: JSONReader.Failure.self) { try Self.read(Array(text.utf8)) }
    }

    @Test("$bytes takes base64 in groups of four, padded at the end only; IDs take UUIDs only in their written form")
    func strictForms() throws {
        for (text, bytes) in [
            ("", []), ("AA==", [0]), ("AAA=", [0, 0]), ("AAAA", [0, 0, 0]), ("/+9/", [0xFF, 0xEF, 0x7F]),
        ]
            as [(String, [UInt8])]
        {
            #expect(try Self.read(Array(#"{"$bytes":"\#(text)"}"#.utf8)) == .bytes(bytes), "\(text)")
        }
        let written = "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"
        #expect(JSONReader.uuid(written) == UUID(uuidString: written))
        #expect(JSONReader.uuid(written.lowercased()) == UUID(uuidString: written))
        for text in [
            "+BA7B810-9DAD-11D1-80B4-00C04FD430C8", "-BA7B810-9DAD-11D1-80B4-00C04FD430C8",
            "0xA7B810-9DAD-11D1-80B4-00C04FD430C8", "6BA7B810-9DAD-11D1-80B4-0x04FD430C8",
            "6BA7B8109DAD11D180B400C04FD430C8", "6BA7B810-9DAD-11D1-80B4-00C04FD430C",
            " 6BA7B810-9DAD-11D1-80B4-00C04FD430C",
            "6BA7B810-9DAD-11D1-80B4-00C04FD430C8 ", "6BA7B810-9DAD-11D1-80B4-00C04FD430CG", "",
        ] {
            #expect(JSONReader.uuid(text) == nil, "\(text)")
            // As a record's ID: refused, not read as another UUID.
            #expect(JSONReader.recordID(.map(["$uuid": .string(text)])) == nil, "\(text)")
        }
    }

    @Test("a number too long to read is named by its start and length, not repeated whole")
    func longNumberMessage() {
        let digits = String(repeating: "9", count: 100_000)
        for text in [digits, digits + ".5", "0." + String(repeating: "0", count: 100_000) + "1e-400"] {
            do {
                _ = try Self.read(Array(text.utf8))
                Issue.record("\(text.prefix(30)) read")
            } catch {
                #expect("\(error)".utf8.count < 300, "\("\(error)".prefix(300))")
                #expect("\(error)".contains("characters)"), "\("\(error)".prefix(300))")
            }
        }
    }

    @Test("maps with keys that look like special forms round-trip, however deep")
    func dollarMaps() throws {
        let inner: Value = .map(["$bytes": "AA==", "$map": .map(["$map": .map(["b": 2])]), "$date": 1])
        for value: Value in [
            .map(["$map": .map(["a": 1])]), .map(["$bytes": "AA=="]), .map(["$seconds": 5]), .map(["$ref": "x"]),
            .map(["$map": inner]), .list([inner, .map(["$double": "nan"])]),
        ] {
            #expect(try Self.read(Self.write(value)) == value, "\(String(decoding: Self.write(value), as: UTF8.self))")
        }
    }

    @Test("dates outside what ISO 8601 says are carried as seconds alone, never trap")
    func extremeDates() throws {
        for seconds in [1e300, -1e300, Double.nan, .infinity, -62_135_596_800, 0.5] {
            let value = Value.date(Date(timeIntervalSinceReferenceDate: seconds))
            let back = try Self.read(Self.write(value))
            #expect(back == value, "\(seconds)")
        }
    }

    @Test("a NaN keeps its sign and payload; the standard one is written plainly")
    func nanBits() throws {
        let patterns: [UInt64] = [
            Double.nan.bitPattern, (-Double.nan).bitPattern, 0xFFF8_0000_0000_0000, 0x7FF0_0000_0000_0001,
            Double.signalingNaN.bitPattern, 0x7FFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF,
        ]
        for bits in patterns {
            let value = Value.double(Double(bitPattern: bits))
            let back = try Self.read(Self.write(value))
            guard case .double(let number) = back else {
                Issue.record("\(String(bits, radix: 16)) read back as \(back)")
                continue
            }
            #expect(
                number.bitPattern == bits,
                "\(String(bits, radix: 16)) read back as \(String(number.bitPattern, radix: 16))"
            )
            let date = Value.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
            #expect(try Self.read(Self.write(date)) == date)
        }
        #expect(String(decoding: Self.write(.double(.nan)), as: UTF8.self) == #"{"$double":"nan"}"#)
    }

    @Test("the deepest value the store holds reads back: 64 maps of $ keys around a reference by UUID")
    func deepestValue() throws {
        var value = Value.reference(RecordReference(table: "t", id: RecordID(UUID())))
        for level in 0..<Value.maximumNesting { value = .map(["$k\(level)": value]) }
        #expect(value.nestingDepth == Value.maximumNesting)
        var writer = JSONWriter()
        writer.record(Record(["deep": value]), id: 1, idField: "$id", table: nil)
        let members = try writer.bytes.withUnsafeBufferPointer { try JSONReader.object($0) }
        #expect(members.last?.1 == value)
    }

    @Test("a line may start with a byte order mark; a control byte is named in hex, never echoed")
    func byteOrderMarkAndControlBytes() throws {
        let line: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"$id": 1}"#.utf8)
        let members = try line.withUnsafeBufferPointer { try JSONReader.object($0) }
        #expect(members.count == 1)
        let hostile: [UInt8] = Array(#"{"a": "#.utf8) + [0x1B] + Array("}".utf8)
        do {
            _ = try hostile.withUnsafeBufferPointer { try JSONReader.object($0) }
            Issue.record("a control byte was read as JSON")
        } catch {
            #expect("\(error)".contains("byte 0x1b"), "\(error)")
            #expect(!"\(error)".utf8.contains(0x1B))
        }
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x22], [0x22, 0xFF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]] {
            #expect(throws: JSONReader.Failure.self) { try Self.read(bytes) }
        }
    }

    @Test("random and mutated input never crashes the reader", arguments: [7, 8])
    func fuzz(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = Self.write(Self.randomValue(&random))
            switch random.int(below: 4) {
            case 0: bytes = random.bytes(random.int(below: 40))
            case 1 where !bytes.isEmpty:
                bytes[random.int(below: bytes.count)] = UInt8(truncatingIfNeeded: random.next())
            case 2 where !bytes.isEmpty: bytes.removeLast(random.int(below: bytes.count))
            default:
                bytes.insert(Array("{}[]\",:\\".utf8)[random.int(below: 8)], at: random.int(below: bytes.count + 1))
            }
            if (try? Self.read(bytes)) != nil { accepted += 1 }
            _ = try? bytes.withUnsafeBufferPointer { try JSONReader.object($0) }
        }
        #expect(accepted > 0 && accepted < 20_000, "seed \(seed): some inputs parse, some do not")
    }
}
