import Foundation
import PersistentCollections
import Strata
import Testing

@Suite("Typed edge values: Unicode, numeric limits, dates, enums, non-String keys, large records")
struct TypedEdgeValueTests {
    enum Shape: Codable, Equatable, Sendable {
        case circle(radius: Double)
        case rect(Double, Double)
        case empty
        case labelled(String?, [Int])
    }

    enum Color: String, Codable, Hashable, Sendable { case red, green }

    struct Point: Codable, Equatable, Hashable, Sendable {
        var x: Int
        var y: Int
    }

    struct Inner: Codable, Equatable, Sendable {
        var name: String
        var value: Double?
        var tags: [String]
    }

    struct Everything: StoredRecord, Equatable {
        static let table: Key = "everything"
        var id: Int64
        var empty: String
        var combining: String
        var emoji: String
        var nfc: String
        var nfd: String
        var rtl: String
        var minInt: Int64
        var maxInt: Int64
        var intMin: Int
        var negZero: Double
        var inf: Double
        var negInf: Double
        var subnormal: Double
        var leastNormal: Double
        var greatest: Double
        var float: Float
        var floatSub: Float
        var distantPast: Date
        var distantFuture: Date
        var epoch: Date
        var fraction: Date
        var nested: String??
        var shapes: [Shape]
        var inners: [Inner]
        var byPoint: [Point: String]
        var byInt: [Int: String]
        var byColor: [Color: Int]
        var byUUID: [UUID: Int]
        var blob: Data
        var emptyBlob: Data
        var set: Set<Int>
        var optionalArray: [Int?]
        var nestedArrays: [[String]]
        var uint8: UInt8
        var int8: Int8
        var uint64: UInt64
        var url: URL
        var uuid: UUID
        var decimal: Decimal
    }

    static func sample(id: Int64) -> Everything {
        Everything(
            id: id,
            empty: "",
            combining: "e\u{301}\u{302}\u{303} Z\u{0335}\u{0361}a\u{0338}",
            emoji: "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽",
            nfc: "caf\u{E9}",
            nfd: "cafe\u{301}",
            rtl: "\u{202E}שלום عربى\u{202C}",
            minInt: .min,
            maxInt: .max,
            intMin: .min,
            negZero: -0.0,
            inf: .infinity,
            negInf: -.infinity,
            subnormal: .leastNonzeroMagnitude,
            leastNormal: .leastNormalMagnitude,
            greatest: .greatestFiniteMagnitude,
            float: .greatestFiniteMagnitude,
            floatSub: .leastNonzeroMagnitude,
            distantPast: .distantPast,
            distantFuture: .distantFuture,
            epoch: Date(timeIntervalSince1970: 0),
            fraction: Date(timeIntervalSinceReferenceDate: 0.000_001),
            nested: .some("x"),
            shapes: [.circle(radius: 1.5), .rect(-0.0, 2), .empty, .labelled(nil, []), .labelled("a", [1, 2])],
            inners: [Inner(name: "", value: nil, tags: []), Inner(name: "b", value: -0.0, tags: ["", "x"])],
            byPoint: [Point(x: 1, y: 2): "a", Point(x: -1, y: 0): "b"],
            byInt: [Int.min: "min", Int.max: "max", 0: "zero", -1: "neg"],
            byColor: [.red: 1, .green: 2],
            byUUID: [UUID(): 1, UUID(): 2],
            blob: Data((0..<5000).map { UInt8($0 % 251) }),
            emptyBlob: Data(),
            set: [3, 1, 2, Int.min],
            optionalArray: [1, nil, 3],
            nestedArrays: [[], [""], ["a", "b"]],
            uint8: 255,
            int8: -128,
            uint64: UInt64(Int64.max),
            url: URL(string: "https://example.com/a%20b?q=é#frag")!,
            uuid: UUID(),
            decimal: Decimal(string: "12345678901234567890.123456789")!
        )
    }

    @Test("edge values round-trip through a store and a reopen")
    func edgeValuesRoundTrip() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let model = Self.sample(id: 1)
        var store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.insert(model) }
        let read = try #require(try store.current.record(Everything.self, id: 1))
        #expect(read == model)
        #expect(read.negZero.sign == .minus)
        #expect(read.nested == .some("x"))
        // Saving back records nothing.
        let report = try await store.transact { try $0.save(read) }
        #expect(report.transaction.isEmpty)
        try await store.close()
        store = try await Store.open(at: path, options: testOptions())
        let again = try #require(try store.current.record(Everything.self, id: 1))
        #expect(again == model)
        let report2 = try await store.transact { try $0.save(again) }
        #expect(report2.transaction.isEmpty)
        try await store.close()
    }

    struct Big: StoredRecord, Equatable {
        static let table: Key = "big"
        var id: String
        var text: String
        var blob: Data
        var list: [Int]
    }

    @Test("records of 5 KB and several MB, string IDs with Unicode", arguments: [5_000, 3_000_000])
    func bigRecords(size: Int) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var store = try await Store.open(at: path, options: testOptions())
        let text = String(repeating: "é👩‍👩‍👧", count: size / 20)
        var ids = ["", "cafe\u{301}", "caf\u{E9}", "👩‍👩‍👧‍👦"]
        ids.append(String(repeating: "x", count: 300))
        for (i, id) in ids.enumerated() {
            let big = Big(
                id: id,
                text: text + "\(i)",
                blob: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }),
                list: Array(0..<(size / 100))
            )
            try await store.transact { try $0.insert(big) }
        }
        try await store.snapshot()
        try await store.close()
        store = try await Store.open(at: path, options: testOptions())
        for (i, id) in ids.enumerated() {
            let read = try #require(try store.current.record(Big.self, id: id))
            #expect(read.text == text + "\(i)")
            #expect(read.blob.count == size)
            #expect(read.blob == Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }))
            #expect(read.list == Array(0..<(size / 100)))
            #expect(read.id.utf8.elementsEqual(id.utf8))
        }
        #expect(try store.current.records(Big.self).count == ids.count)
        try await store.close()
    }
}
