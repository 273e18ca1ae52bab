import Foundation
import PersistentCollections
import Strata
import Testing

@Suite("Value")
struct ValueTests {
    @Test("equality is exact and reflexive, hashing agrees with it")
    func equality() {
        let nan = Value.double(.nan)
        #expect(nan == nan)
        #expect(Value.double(0.0) != Value.double(-0.0))
        #expect(Value.int(1) != Value.double(1))
        #expect(Value.string("1") != Value.int(1))
        let values: [Value] = [
            .null, true, 42, 2.5, "text", .bytes([1, 2]), .date(Date(timeIntervalSinceReferenceDate: 1_000)),
            .reference(RecordReference(table: "songs", id: 7)), [1, "two", [3]], ["a": 1, "b": ["c": true]],
        ]
        for (i, a) in values.enumerated() {
            for (j, b) in values.enumerated() {
                #expect((a == b) == (i == j), "\(a) vs \(b)")
            }
            #expect(a.hashValue == Value(copying: a).hashValue)
        }
        #expect(Set(values + values).count == values.count)
    }

    @Test("a value stays small: boxed lists, maps and references")
    func layout() {
        #expect(MemoryLayout<Value>.size <= 17)
    }

    @Test("typed accessors and nested paths")
    func reading() {
        let value: Value = ["feeds": ["42": ["editedName": "Daily", "unread": 3]], "flag": true]
        #expect(value[path: ["feeds", "42", "editedName"]]?.stringValue == "Daily")
        #expect(value[path: ["feeds", "42", "unread"]]?.intValue == 3)
        #expect(value[path: ["feeds", "7"]] == nil)
        #expect(value[path: ["flag", "x"]] == nil)
        #expect(value[path: [Key]()] == value)
        #expect(Value.int(3).doubleValue == 3)
        #expect(Value.null.isNull && !Value.int(0).isNull)
        #expect(Value.string("a").intValue == nil)
        #expect(value.mapValue?.count == 2)
    }

    @Test("descriptions read like literals")
    func descriptions() {
        #expect(Value.null.description == "null")
        #expect(Value.string("hi").description == "\"hi\"")
        #expect(([1, 2] as Value).description == "[1, 2]")
        // Maps in key order (UTF-8 bytes), whatever their hash order; empty ones as literals.
        let keys = (0..<40).map { "k\($0)" }
        let map = Value.map(PersistentMap(uniqueKeysWithValues: keys.reversed().map { (Key($0), Value.int(1)) }))
        #expect(map.description == "[" + keys.sorted().map { "\"\($0)\": 1" }.joined(separator: ", ") + "]")
        #expect(
            Value.list([.map([:]), .list([]), .map(["é": [.null, "x"]])]).description
                == #"[[:], [], ["é": [null, "x"]]]"#
        )
        #expect(Value.reference(RecordReference(table: "songs", id: "a")).description == "@songs/\"a\"")
    }

    @Test("a date prints as ISO 8601 with the digits that tell it apart, a far or odd one as its seconds")
    func dateDescriptions() throws {
        func text(_ seconds: Double) -> String { Value.date(Date(timeIntervalSinceReferenceDate: seconds)).description }
        #expect(text(0) == "2001-01-01T00:00:00Z")
        #expect(text(10.5) == "2001-01-01T00:00:10.5Z")
        #expect(text(-0.25) == "2000-12-31T23:59:59.75Z")
        #expect(text(-123.001) == "2000-12-31T23:57:56.999Z")
        #expect(text(817_192_800.001) == "2026-11-24T06:00:00.001Z")
        #expect(text(-0.0) == "Date(timeIntervalSinceReferenceDate: -0.0)")
        #expect(text(.nan) == "Date(timeIntervalSinceReferenceDate: nan)")
        #expect(text(.infinity) == "Date(timeIntervalSinceReferenceDate: inf)")
        #expect(text(1e20) == "Date(timeIntervalSinceReferenceDate: 1e+20)")
        #expect(text(-1e20) == "Date(timeIntervalSinceReferenceDate: -1e+20)")
        #expect(text(0.00001) == "Date(timeIntervalSinceReferenceDate: 1e-05)")
        // Nineteen digits after the point, counted down from the second below.
        let small = text(-0.0012345678901234567)
        #expect(small.hasPrefix("2000-12-31T23:59:59.99876543210987654") && small.hasSuffix("Z"), "\(small)")
        #expect(
            text(Double(bitPattern: Double.nan.bitPattern | 5)).hasPrefix("Date(timeIntervalSinceReferenceDate: nan(0x")
        )
        // 1583-01-01 and the last second of 9999 print as dates, the
        // seconds past them as numbers.
        #expect(text(-13_190_860_800) == "1583-01-01T00:00:00Z")
        #expect(text(252_423_993_599.5) == "9999-12-31T23:59:59.5Z")
        #expect(text(252_423_993_600) == "Date(timeIntervalSinceReferenceDate: 252423993600.0)")
        // Distinct dates never print alike: neighbouring doubles, and
        // random ones across the range and beyond.
        var random = SeededRandom(seed: 31)
        var seen: [String: UInt64] = [:]
        var samples: [Double] = [0, -0.0, .nan, -.nan, .infinity, -.infinity]
        for _ in 0..<3_000 {
            let seconds = (Double(random.int(below: 1 << 40)) - Double(1 << 39)) / Double(1 << random.int(below: 30))
            samples += [seconds, seconds.nextUp, seconds.nextDown, seconds.rounded()]
        }
        let whole = ISO8601DateFormatter()
        for seconds in samples {
            let printed = text(seconds)
            // The second printed is the one the date lies in, and the
            // digits after it are the date's distance from it.
            if printed.hasSuffix("Z"), let dot = printed.firstIndex(of: ".") ?? printed.lastIndex(of: "Z") {
                let second = try #require(whole.date(from: String(printed[..<dot]) + "Z"))
                    .timeIntervalSinceReferenceDate
                // ".5", or "" for a whole second.
                let digits = String(printed[dot..<printed.index(before: printed.endIndex)])
                let fraction = digits.isEmpty ? 0 : try #require(Double("0" + digits))
                #expect(second <= seconds && seconds < second + 1, "\(seconds) prints \(printed)")
                #expect(
                    abs(second + fraction - seconds) <= 2 * Swift.max(abs(second), 1).ulp,
                    "\(seconds) prints \(printed)"
                )
            }
            if let other = seen[printed] {
                #expect(
                    other == seconds.bitPattern,
                    "\(seconds) and \(Double(bitPattern: other)) both print \(printed)"
                )
            }
            seen[printed] = seconds.bitPattern
        }
    }
}

extension Value {
    /// A structurally equal value built independently (no shared storage).
    init(copying value: Value) {
        switch value {
        case .list(let list): self = .list(PersistentVector(list.map { Value(copying: $0) }))
        case .map(let map):
            self = .map(PersistentMap(uniqueKeysWithValues: map.map { ($0.key, Value(copying: $0.value)) }))
        default: self = value
        }
    }
}

@Suite("RecordID")
struct RecordIDTests {
    @Test("kinds never collide, order is total and deterministic")
    func kinds() {
        let uuid = UUID()
        let ids: [RecordID] = [RecordID(1), RecordID("1"), RecordID(uuid), 2, "b", "a"]
        #expect(Set(ids).count == ids.count)
        #expect(ids.sorted() == [1, 2, "1", "a", "b", RecordID(uuid)])
        #expect(RecordID(7 as Int) == RecordID(7 as Int64))
        #expect(RecordID("x").description == "\"x\"")
    }
}
