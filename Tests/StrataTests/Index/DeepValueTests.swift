import DeterministicRandom
import Foundation
import PersistentCollections
import Strata
import Testing

/// Values nested far past what a record may hold (``Value/maximumNesting``)
/// given where a program can pass any value: query conditions,
/// comparisons, records and patches refused for their depth. None may
/// overflow the stack (a cold review found a query's value did).
@Suite("Values nested thousands deep")
struct DeepValueTests {
    /// Far past ``Value/recursionLimit`` (256 levels).
    static let depth = 12_000

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
        "a query's value nested thousands deep selects nothing, as an equality, a range bound and an order",
        arguments: [300, DeepValueTests.depth]
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

    @Test("comparing and measuring values nested thousands deep gives the order and depth of shallower ones")
    func compareAndMeasure() {
        let deep = Self.nestedList(Self.depth)
        let deeper = Self.nestedList(Self.depth + 1)
        #expect(deep.nestingDepth == Self.depth)
        #expect(Self.nestedMap(Self.depth).nestingDepth == Self.depth)
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

    /// `depth` levels of a 40-element list holding a 40-key map holding the
    /// level below (and scalars beside it): nodes of every kind on the way.
    static func wide(_ depth: Int) -> Value {
        (0..<depth).reduce(Value.int(0)) { inner, level in
            var entries = PersistentMap<Key, Value>(
                uniqueKeysWithValues: (0..<39).map { (Key("k\($0)"), .int(Int64($0))) }
            )
            entries["deeper"] = inner
            var elements = PersistentVector<Value>((0..<39).map { .int(Int64($0 + level)) })
            elements.insert(.map(entries), at: 20)
            return .list(elements)
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

    @Test("equal values nested thousands deep, built apart, are equal and hash alike; another leaf makes them differ")
    func equalityAndHashing() {
        func list(_ depth: Int, leaf: Value) -> Value {
            (0..<depth).reduce(leaf) { inner, _ in .list([inner]) }
        }
        func map(_ depth: Int, leaf: Value) -> Value {
            (0..<depth).reduce(leaf) { inner, level in .map([Key("k\(level % 3)"): inner]) }
        }
        for build in [list, map] {
            let (a, b, other) = (build(Self.depth, 1), build(Self.depth, 1), build(Self.depth, 2))
            #expect(a == b)
            #expect(a.hashValue == b.hashValue)
            #expect(a != other)
            #expect(Set([a, b, other]).count == 2)
        }
        #expect(list(Self.depth, leaf: 1) != map(Self.depth, leaf: 1))
        #expect(list(Self.depth, leaf: 1) != list(Self.depth + 1, leaf: 1))
    }

    @Test(
        "past the recursion limit, equality and hashing agree with the same values unwrapped",
        arguments: [UInt64(4), 5]
    )
    func deepEqualityAgrees(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<300 {
            let a = Self.randomValue(&random, depth: 3)
            let b = random.int(below: 3) == 0 ? a : Self.randomValue(&random, depth: 3)
            // Built apart: no storage shared between the two wrappings.
            let (deepA, deepB) = (Self.wrapped(a, levels: 300), Self.wrapped(b, levels: 300))
            #expect((deepA == deepB) == (a == b), "seed \(seed): \(a) against \(b)")
            if a == b { #expect(deepA.hashValue == deepB.hashValue, "seed \(seed): \(a)") }
        }
    }

    @Test("two equalities on one path with equal values nested thousands deep, built apart, select nothing")
    func twoDeepEqualities() throws {
        let database = try Self.database()
        for build in [Self.nestedList, Self.nestedMap] {
            let (first, second) = (build(Self.depth), build(Self.depth))
            #expect(try database.query("t").where("a", equals: first).where("a", equals: second).ids() == [])
            #expect(try database.query("t").where("a", equals: first).where("a", equals: second).count() == 0)
            #expect(
                try database.query("t").filter { _ in true }.where("a", equals: first).where("a", equals: second)
                    .ids() == []
            )
        }
        // Different values on one path contradict each other: nothing, on the index and by a scan.
        let (one, two) = (Self.nestedList(Self.depth), Self.wrapped(.int(2), levels: Self.depth))
        #expect(try database.query("t").where("a", equals: one).where("a", equals: two).ids() == [])
    }

    @Test("values nested 200,000 deep are freed without overflowing the stack, also on a small thread stack")
    func freeing() async {
        @Sendable func build(_ depth: Int) -> [Value] {
            [
                Self.nestedList(depth), Self.nestedMap(depth), Self.wrapped(.string("leaf"), levels: depth),
                // Wide at the top, deep below: the deep parts freed one after another.
                .list(PersistentVector((0..<3).map { _ in Self.nestedList(depth / 4) })),
            ]
        }
        var values = build(200_000)
        #expect(values.count == 4)
        values = []  // freed here
        // A thread of 256 KiB (a tenth of a dispatch worker's): at most 64
        // nested destructions stand on it, however deep the value.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                var built: [Value]? = build(50_000)
                #expect(built?.count == 4)
                built = nil
                done.resume()
            }
            thread.stackSize = 256 << 10
            thread.start()
        }
        // Wide levels (through vector branches and map child nodes, set
        // aside past 64 levels), freed on a small stack, and deep values
        // freed on eight threads at once.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                // Only built and freed here: measuring it recurses up to
                // `Value.recursionLimit` levels, too deep for this stack in
                // a debug build.
                var wide = Self.wide(20_000)
                #expect(wide != .null)
                wide = .null
                done.resume()
            }
            thread.stackSize = 256 << 10
            thread.start()
        }
        await withTaskGroup(of: Int.self) { group in
            for n in 0..<8 { group.addTask { build(5_000 + n).count } }
            for await count in group { #expect(count == 4) }
        }
        #expect(Self.wide(300).nestingDepth == 600)
        // A value shared with another is not freed with it: the other keeps it whole.
        let shared = Self.nestedList(100_000)
        var holder: Value? = .list([shared, shared])
        holder = nil
        #expect(shared.nestingDepth == 100_000 && holder == nil)
    }

    @Test("a record or patch nested thousands deep is refused for its depth, naming the field")
    func refusedWrites() throws {
        let deep = Self.nestedList(Self.depth)
        var builder = TransactionBuilder(on: try Self.database())
        #expect(
            throws: ApplyError.nestingTooDeep(table: "t", id: RecordID(9), field: "a", depth: Self.depth, limit: 64)
        ) {
            try builder.insert(["a": deep], id: 9, into: "t")
        }
        #expect(
            throws: ApplyError.nestingTooDeep(table: "t", id: RecordID(3), field: "a", depth: Self.depth, limit: 64)
        ) {
            try builder.update(3, in: "t", [.set("a", deep)])
        }
        #expect(builder.database == (try Self.database()))
    }

    /// What `description` writes for ``nestedMap(_:)``: the outermost key first.
    static func nestedMapText(_ depth: Int) -> String {
        (0..<depth).reversed().map { "[\"k\($0 % 3)\": " }.joined() + "\"leaf\"" + String(repeating: "]", count: depth)
    }

    @Test(
        "a record built in memory holding a value nested thousands deep reads back, prints, encodes and diffs",
        arguments: [DeepValueTests.depth, 60_000]
    )
    func recordsInMemory(depth: Int) throws {
        let list = Self.nestedList(depth)
        let map = Self.nestedMap(depth)
        #expect(list.description == String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth))
        #expect(map.description == Self.nestedMapText(depth))
        for deep in [list, map, Self.wrapped(.string("leaf"), levels: depth)] {
            let record: Record = ["a": 1, "deep": deep, "z": "after"]
            #expect(record["deep"] == deep)
            #expect(record["z"] == "after")
            #expect(record.fields.map(\.name) == ["a", "deep", "z"])
            #expect(record.fields[1].value == deep)
            #expect("\(record)".contains("\"after\""))
            // Encoded (a record, a database) as written, then refused for its depth when read.
            #expect(throws: (any Error).self) { try BinaryCodec.decodeRecord(BinaryCodec.encode(record)) }
            let database = try apply(
                Database(),
                Transaction(t: 1, basis: 0, changes: ["t": [1: .insert(record), 2: .insert(["a": 2])]])
            )
            #expect(throws: (any Error).self) { try BinaryCodec.decodeDatabase(BinaryCodec.encode(database)) }
            // The difference from a shallow value and back.
            let shallow = try apply(
                Database(),
                Transaction(t: 1, basis: 0, changes: ["t": [1: .insert(["a": 1]), 2: .insert(["a": 2])]])
            )
            let forward = diff(from: shallow, to: database)
            #expect(forward.tables["t"]?.changed[RecordID(1)]?.sorted() == ["deep", "z"])
            #expect(try apply(shallow, forward.transaction()).tables == database.tables)
            #expect(try apply(database, diff(from: database, to: shallow).transaction()).tables == shallow.tables)
            // A refused change whose expected value is the deep one: the error prints.
            let stale = Transaction(
                t: 2,
                basis: 1,
                changes: ["t": [2: .update(["a": FieldChange(old: deep, new: 3)])]]
            )
            #expect(throws: ApplyError.self) { try apply(database, stale) }
            do {
                _ = try apply(database, stale)
            } catch {
                #expect("\(error)".contains(String(deep.description.prefix(200))))
            }
        }
    }

    @Test(
        "an index over values nested thousands deep, in memory, answers queries and names a unique key's values",
        arguments: [DeepValueTests.depth, 60_000]
    )
    func indexedInMemory(depth: Int) throws {
        var declare = TransactionBuilder(on: Database())
        try declare.createIndex("byDeep", on: "t", fields: ["deep", "n"])
        try declare.createIndex("unique", on: "u", fields: ["deep"], unique: true)
        let empty = declare.database
        let (list, map) = (Self.nestedList(depth), Self.nestedMap(depth))
        let database = try apply(
            empty,
            Transaction(
                t: empty.basis + 1,
                basis: empty.basis,
                changes: [
                    "t": [
                        1: .insert(["deep": list, "n": 1]), 2: .insert(["deep": map, "n": 2]),
                        3: .insert(["deep": 5, "n": 3]), 4: .insert(["deep": list, "n": 0]),
                    ]
                ]
            )
        )
        // Integers sort before lists, lists before maps; equal lists by `n`.
        #expect(try database.query("t").order(by: "deep").ids() == [3, 4, 1, 2].map { RecordID($0) })
        #expect(try database.query("t").order(by: "deep", descending: true).ids() == [2, 1, 4, 3].map { RecordID($0) })
        #expect(
            try database.query("t").where("deep", equals: list).order(by: "n").ids() == [4, 1].map { RecordID($0) }
        )
        #expect(try database.query("t").where("deep", equals: map).count() == 1)
        #expect(try database.query("t").order(by: "deep").last()?.record["deep"] == map)
        #expect(try database.query("t").order(by: "deep").records().map { $0.record["n"] } == [3, 0, 1, 2])
        // A unique index refuses a second record with the deep value; its error names the key's start.
        let twice = Transaction(
            t: empty.basis + 1,
            basis: empty.basis,
            changes: ["u": [1: .insert(["deep": map]), 2: .insert(["deep": map])]]
        )
        #expect(throws: ApplyError.self) { try apply(empty, twice) }
        do {
            _ = try apply(empty, twice)
        } catch {
            // The key's start, cut short: a message stays short however deep the value.
            let message = "\(error)"
            #expect(message.contains(#"would have (["k2": ["k1": ["k0": ["#) && message.contains("… (a map of 1)"))
            #expect(message.utf8.count < 1_000)
        }
    }

    @Test("a field path thousands of keys long writes, reads and removes its value without overflowing the stack")
    func longPaths() throws {
        let keys = (0..<60_000).map { Key("k\($0 % 7)") }
        let path = FieldPath(field: "deep", keys: keys)
        var record: Record = ["other": 1]
        #expect(try record.setValue("leaf", at: path) == nil)
        #expect(record[path: path] == "leaf")
        #expect(record["deep"]?.nestingDepth == keys.count)
        #expect(try record.setValue("again", at: path) == "leaf")
        // A value that is not a map, halfway down, is named with its place.
        var blocked = record
        let halfway = FieldPath(field: "deep", keys: Array(keys.prefix(30_000)))
        #expect(try blocked.setValue(7, at: halfway) != nil)
        #expect(throws: FieldPathError.notAMap(path: path, prefix: halfway, found: 7)) {
            try blocked.setValue("x", at: path)
        }
        #expect(blocked[path: halfway] == 7)
        // Removed: the maps on the way stay, now holding nothing at the end.
        #expect(record.removeValue(at: path) == "again")
        #expect(record[path: path] == nil)
        #expect(record[path: FieldPath(field: "deep", keys: Array(keys.dropLast()))] == .map([:]))
        #expect(record.removeValue(at: path) == nil)
        #expect(record["other"] == 1)
    }
}
