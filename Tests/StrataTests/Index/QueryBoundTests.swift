import Foundation
import Strata
import Testing

/// Range conditions written with Swift's own types (`1.5...10`, `low..<high`),
/// checked against what the Swift range itself contains.
@Suite("Query ranges of Int, Double and Date")
struct QueryBoundTests {
    static let doubleBounds: [Double] = [-.infinity, -10, -1.5, -0.0, 0, 1.5, 9.99, 10, 25, .infinity]
    static let nans: [Double] = [.nan, -.nan]
    static let start = Date(timeIntervalSinceReferenceDate: 0)

    /// Prices: ints, doubles (with ±0, ±∞ and both NaNs), dates, strings
    /// and missing ones.
    static func prices(count: Int, seed: UInt64) throws -> (Database, [RecordID: Value]) {
        var random = SeededRandom(seed: seed)
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byPrice", on: "items", fields: ["price"])
        var model: [RecordID: Value] = [:]
        let specials = doubleBounds + nans + [9.990000000000002, 1.4999999999999998]
        for n in 0..<count {
            let price: Value? =
                switch random.int(below: 7) {
                case 0: .int(Int64(random.int(below: 30)) - 10)
                case 1: .double(specials[random.int(below: specials.count)])
                case 2: .string(["", "a", "m", "z"][random.int(below: 4)])
                case 3: nil
                case 4: .date(Date(timeIntervalSinceReferenceDate: specials[random.int(below: specials.count)]))
                default: .double(Double(random.int(below: 3_000)) / 100 - 10)
                }
            var record: Record = ["n": .int(Int64(n))]
            if let price { record["price"] = price }
            try builder.insert(record, id: RecordID(Int64(n)), into: "items")
            model[RecordID(Int64(n))] = price ?? .null
        }
        return (try apply(Database(), builder.transaction(t: 1)), model)
    }

    /// The IDs whose price, read as a `B`, `contains` accepts.
    static func expected<B>(
        _ model: [RecordID: Value],
        _ read: (Value) -> B?,
        _ contains: (B) -> Bool
    ) -> [RecordID] {
        model.filter { _, value in read(value).map(contains) ?? false }.keys.sorted()
    }

    static func int(_ value: Value) -> Int? { if case .int(let v) = value { Int(v) } else { nil } }
    static func double(_ value: Value) -> Double? { if case .double(let v) = value { v } else { nil } }
    /// A date, but none whose seconds are NaN: `Date` takes `<=` from
    /// `Comparable` (`!(b < a)`), so Swift's date ranges contain them; a
    /// query's, as its double ranges, never do.
    static func date(_ value: Value) -> Date? {
        if case .date(let v) = value, !v.timeIntervalSinceReferenceDate.isNaN { v } else { nil }
    }

    @Test("a range of mixed literals is a range of doubles, and never traps")
    func mixedLiterals() throws {
        let (database, model) = try Self.prices(count: 2_000, seed: 3)
        let found = try database.query("items").where("price", in: 1.5...10).ids().sorted()
        #expect(found == Self.expected(model, Self.double) { (1.5...10).contains($0) })
        #expect(!found.isEmpty)
        let ints = try database.query("items").where("price", in: 1...5).ids().sorted()
        #expect(ints == Self.expected(model, Self.int) { (1...5).contains($0) })
        #expect(!ints.isEmpty)
        let wide = try database.query("items").where("price", in: Int64(-3)...Int64(5)).ids().sorted()
        #expect(wide == Self.expected(model, Self.int) { (-3...5).contains($0) })
        let below = try database.query("items").where("price", in: ..<9.99).order(by: "price").ids()
        #expect(below.sorted() == Self.expected(model, Self.double) { $0 < 9.99 })
        #expect(!below.isEmpty)
    }

    @Test("zeros, infinities and NaN records: the range selects what Swift's range contains")
    func zerosAndNaNs() throws {
        let (database, model) = try Self.prices(count: 3_000, seed: 4)
        let query = database.query("items")
        #expect(try query.where("price", in: 0.0...0.0).ids().sorted() == Self.expected(model, Self.double) { $0 == 0 })
        #expect(
            try query.where("price", in: 0.0...(-0.0)).ids().sorted() == Self.expected(model, Self.double) { $0 == 0 }
        )
        #expect(try query.where("price", in: -0.0..<0.0).count() == 0)
        let atLeast = try query.where("price", in: 100.0...).ids().sorted()
        #expect(atLeast == Self.expected(model, Self.double) { $0 >= 100 })
        #expect(!atLeast.isEmpty)  // +∞
        let upTo = try query.where("price", in: ..<Self.start).ids().sorted()
        #expect(upTo == Self.expected(model, Self.date) { $0 < Self.start })
        #expect(!upTo.isEmpty)
    }

    @Test(
        "random Int, Double and Date ranges of every shape select what Swift's range contains",
        arguments: [UInt64(5), 6, 7]
    )
    func randomRanges(seed: UInt64) throws {
        let (database, model) = try Self.prices(count: 800, seed: seed)
        var random = SeededRandom(seed: seed &+ 100)
        for round in 0..<400 {
            let shape = random.int(below: 5)
            let query = database.query("items")
            let found: [RecordID]
            let expected: [RecordID]
            // No NaN bound: every Swift range traps on one.
            let bounds = Self.doubleBounds
            switch random.int(below: 3) {
            case 0:
                let a = random.int(below: 30) - 12
                let b = max(a, random.int(below: 30) - 12)
                (found, expected) = try Self.run(query, shape, a, b, model, Self.int)
            case 1:
                let a = bounds[random.int(below: bounds.count)]
                let b =
                    shape >= 2
                    ? bounds[random.int(below: bounds.count)] : max(a, bounds[random.int(below: bounds.count)])
                (found, expected) = try Self.run(query, shape, a, b, model, Self.double)
            default:
                let a = Date(timeIntervalSinceReferenceDate: bounds[random.int(below: bounds.count)])
                let other = Date(timeIntervalSinceReferenceDate: bounds[random.int(below: bounds.count)])
                let b = shape >= 2 ? other : max(a, other)
                (found, expected) = try Self.run(query, shape, a, b, model, Self.date)
            }
            #expect(found.sorted() == expected, "seed \(seed), round \(round), shape \(shape)")
        }
    }

    /// Runs `query` with the range of shape `shape` (closed, half-open,
    /// from, through, up to) between `a` and `b`: the IDs found, and those
    /// of the model's records the Swift range contains.
    static func run<B: QueryBound>(
        _ query: Query,
        _ shape: Int,
        _ a: B,
        _ b: B,
        _ model: [RecordID: Value],
        _ read: (Value) -> B?
    ) throws -> ([RecordID], [RecordID]) {
        switch shape {
        case 0: (try query.where("price", in: a...b).ids(), expected(model, read) { (a...b).contains($0) })
        case 1: (try query.where("price", in: a..<b).ids(), expected(model, read) { (a..<b).contains($0) })
        case 2: (try query.where("price", in: a...).ids(), expected(model, read) { (a...).contains($0) })
        case 3: (try query.where("price", in: ...b).ids(), expected(model, read) { (...b).contains($0) })
        default: (try query.where("price", in: ..<b).ids(), expected(model, read) { (..<b).contains($0) })
        }
    }

    /// A bound whose `<` is the reverse of its values' order.
    struct Descending: QueryBound {
        var n: Int
        var queryValue: Value { .int(Int64(n)) }
        static func < (a: Descending, b: Descending) -> Bool { a.n > b.n }
    }

    /// A bound whose values are of two kinds: doubles below 10, ints above.
    struct Mixed: QueryBound {
        var x: Double
        var queryValue: Value { x < 10 ? .double(x) : .int(Int64(x)) }
        static func < (a: Mixed, b: Mixed) -> Bool { a.x < b.x }
    }

    @Test("an adopter's bounds of two kinds select what lies between them in Value's order")
    func mixedKinds() throws {
        let (database, model) = try Self.prices(count: 1_000, seed: 10)
        let found = try database.query("items").where("price", in: Mixed(x: 1.5)...Mixed(x: 12)).ids().sorted()
        let expected = model.filter { _, value in !(value < .double(1.5)) && !(Value.int(12) < value) }.keys.sorted()
        #expect(found == expected)
        #expect(try database.query("items").where("price", in: Mixed(x: 12)...Mixed(x: 13)).count() > 0)
    }

    @Test("bounds the adopter orders one way and Value the other select nothing, in a query and in an observation")
    func invertedBounds() async throws {
        let (database, _) = try Self.prices(count: 500, seed: 9)
        #expect(try database.query("items").where("price", in: Descending(n: 5)...Descending(n: 1)).count() == 0)
        #expect(try database.query("items").where("price", in: Descending(n: 5)..<Descending(n: 1)).count() == 0)

        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact { builder in
            try builder.createIndex("byPrice", on: "items", fields: ["price"])
            try builder.insert(["price": .int(3)], id: 1, into: "items")
        }
        let observation = await store.observe {
            try $0.query("items").where("price", in: Descending(n: 5)...Descending(n: 1)).count()
        }
        try await store.transact { builder in try builder.insert(["price": .int(2)], id: 2, into: "items") }
        try await store.close()
        var seen: [Int] = []
        for try await count in observation { seen.append(count) }
        #expect(seen == [0])
    }

    @Test("Int and Date variables bound a range as they are")
    func variables() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byTrack", on: "songs", fields: ["track"])
        try builder.createIndex("byAdded", on: "songs", fields: ["added"])
        for n in 0..<100 {
            try builder.insert(
                ["track": .int(Int64(n)), "added": .date(Self.start.addingTimeInterval(Double(n) * 3_600))],
                id: RecordID(Int64(n)),
                into: "songs"
            )
        }
        let database = try apply(Database(), builder.transaction(t: 1))
        let (low, high) = (10, 19)
        #expect(
            try database.query("songs").where("track", in: low...high).ids() == (10...19).map { RecordID(Int64($0)) }
        )
        let from = Self.start.addingTimeInterval(3_600 * 90)
        let ids = try database.query("songs").where("added", in: from...).order(by: "added", descending: true).ids()
        #expect(ids == (90..<100).reversed().map { RecordID(Int64($0)) })
        let until = Self.start.addingTimeInterval(3_600 * 5)
        #expect(try database.query("songs").where("added", in: Self.start..<until).count() == 5)
        #expect(try database.query("songs").where("added", in: ...until).count() == 6)
    }
}
