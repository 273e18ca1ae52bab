import DeterministicRandom
import PersistentCollections
import Strata
import Testing

/// Values nested far past what a record may hold (``Value/maximumNesting``)
/// given where a program can pass any value: query conditions,
/// comparisons, records and patches refused for their depth. None may
/// overflow the stack (a cold review found a query's value did).
@Suite("Values nested thousands deep")
struct DeepValueTests {
    static func nestedList(_ depth: Int) -> Value {
        var value: Value = .int(1)
        for _ in 0..<depth { value = .list(PersistentVector([value])) }
        return value
    }

    static func nestedMap(_ depth: Int) -> Value {
        var value: Value = .string("leaf")
        for level in 0..<depth { value = .map(PersistentMap(uniqueKeysWithValues: [(Key("k\(level % 3)"), value)])) }
        return value
    }

    static func database() throws -> Database {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byA", on: "t", fields: ["a"])
        try builder.insert(["a": Self.nestedList(3)], id: 1, into: "t")
        try builder.insert(["a": Self.nestedList(64)], id: 2, into: "t")
        try builder.insert(["a": 5], id: 3, into: "t")
        return builder.database
    }

    @Test(
        "a query's value nested 12,000 deep selects nothing, as an equality, a range bound and an order",
        arguments: [300, 12_000]
    )
    func queryValue(depth: Int) throws {
        let database = try Self.database()
        for deep in [Self.nestedList(depth), Self.nestedMap(depth)] {
            #expect(try database.query("t").where("a", equals: deep).ids() == [])
            #expect(try database.query("t").where("a", equals: deep).count() == 0)
            // Lists sort after integers: everything from 5 up to the deep
            // list, then the lists; the records' lists nest less deeply.
            let below = try database.query("t").where("a", in: Value.int(0)..<deep).ids()
            #expect(below.contains(RecordID(3)))
            #expect(try database.query("t").filter { $0["a"] == deep }.ids() == [])
            // Two equalities on one path, both deep: compared without recursion.
            #expect(try database.query("t").where("a", equals: deep).where("a", equals: deep).ids() == [])
        }
    }

    @Test("comparing and measuring values nested 12,000 deep gives the order and depth of shallower ones")
    func compareAndMeasure() {
        let deep = Self.nestedList(12_000)
        let deeper = Self.nestedList(12_001)
        #expect(deep.nestingDepth == 12_000)
        #expect(Self.nestedMap(12_000).nestingDepth == 12_000)
        // A list whose first element is a smaller list sorts first, as at
        // depth 2: [[1]] < [[[1]]]? The inner list [1] < [[1]] (an int
        // before a list), so the deeper list sorts after.
        #expect(Self.nestedList(2) < Self.nestedList(3))
        #expect(deep < deeper)
        #expect(!(deeper < deep))
        #expect(!(deep < deep))
    }

    /// A random value of lists, maps and scalars, at most `depth` deep.
    static func randomValue(_ random: inout SplitMix64, depth: Int) -> Value {
        switch depth == 0 ? 0 : random.int(below: 4) {
        case 1:
            return .list(
                PersistentVector((0..<random.int(below: 3)).map { _ in randomValue(&random, depth: depth - 1) })
            )
        case 2:
            let keys = (0..<random.int(below: 3)).map { _ in Key(["a", "b", "ab", ""][random.int(below: 4)]) }
            return .map(PersistentMap(keys.map { ($0, randomValue(&random, depth: depth - 1)) }) { first, _ in first })
        default:
            return [Value.int(Int64(random.int(below: 5))), .string(["", "x", "y"][random.int(below: 3)]), .null][
                random.int(below: 3)
            ]
        }
    }

    /// `value` inside `levels` single-element lists and single-key maps.
    static func wrapped(_ value: Value, levels: Int) -> Value {
        (0..<levels).reduce(value) { inner, level in
            level % 2 == 0 ? .list([inner]) : .map(["w": inner])
        }
    }

    @Test("past the recursion limit, values order and pack as they do above it", arguments: [UInt64(1), 2, 3])
    func deepEncodingsAgree(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<300 {
            let a = Self.randomValue(&random, depth: 4)
            let b = Self.randomValue(&random, depth: 4)
            // Wrapped 300 levels deep, their parts are written without
            // recursion; the order must be the same as unwrapped.
            let (deepA, deepB) = (Self.wrapped(a, levels: 300), Self.wrapped(b, levels: 300))
            #expect((deepA < deepB) == (a < b), "seed \(seed): \(a) against \(b)")
            #expect((deepB < deepA) == (b < a), "seed \(seed): \(b) against \(a)")
            // Packed into a record and read back.
            let record: Record = ["deep": deepA]
            #expect(record["deep"] == deepA, "seed \(seed): \(a)")
            #expect(deepA.nestingDepth == 300 + a.nestingDepth)
        }
    }

    @Test("a record or patch nested 12,000 deep is refused for its depth, naming the field")
    func refusedWrites() throws {
        let deep = Self.nestedList(12_000)
        var builder = TransactionBuilder(on: try Self.database())
        #expect(throws: ApplyError.nestingTooDeep(table: "t", id: RecordID(9), field: "a", depth: 12_000, limit: 64)) {
            try builder.insert(["a": deep], id: 9, into: "t")
        }
        #expect(throws: ApplyError.nestingTooDeep(table: "t", id: RecordID(3), field: "a", depth: 12_000, limit: 64)) {
            try builder.update(3, in: "t", [.set("a", deep)])
        }
        #expect(builder.database == (try Self.database()))
    }
}
