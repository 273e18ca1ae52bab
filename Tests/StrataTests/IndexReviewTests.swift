import Foundation
import Strata
import Testing

/// Review of issue 14's indexes and queries, read cold: every kind of value
/// through an index against a plain-Swift model and against a scan,
/// uniqueness at its edges, the apply/flatten/inverse/diff laws on values
/// with indexes created and dropped inside runs, and hostile transactions.
@Suite("Indexes and queries: review of issue 14")
struct IndexReviewTests {
    typealias Row = (id: RecordID, record: Record)

    // MARK: Values of every kind

    /// Values chosen to sit at the edges of the encoding: signs and byte
    /// lengths of integers, IEEE specials, NUL bytes, non-ASCII text,
    /// strings and bytes longer than an inline entry (30 bytes; a longer
    /// one keeps 16 inline), and nested lists and maps.
    static let pool: [Value?] = {
        let long = String(repeating: "x", count: 40)
        let longSamePrefix = String(repeating: "x", count: 27)
        // Entries whose lengths straddle 16 and 30 bytes, differing in the
        // bytes on either side of those boundaries.
        let edges: [Value?] = [12, 13, 14, 15, 24, 25, 26, 27, 28].flatMap { n -> [Value?] in
            let stem = String(repeating: "q", count: n)
            return [.string(stem), .string(stem + "a"), .string(stem + "b"), .string(stem + "\u{0}")]
        }
        // Bytes values with 0x00, 0x01 and 0xFF on either side of 16 and 30.
        let byteEdges: [Value?] = [13, 14, 15, 26, 27, 28].flatMap { n -> [Value?] in
            [0x00, 0x01, 0xFF].map { (last: UInt8) in .bytes([UInt8](repeating: 0x01, count: n) + [last]) }
        }
        return edges + byteEdges + [
            nil, .null, false, true,
            .int(.min), .int(.min + 1), -65_536, -256, -255, -1, 0, 1, 255, 256, 65_536, .int(.max),
            .double(-.infinity), .double(-.greatestFiniteMagnitude), -1.5, .double(-.leastNonzeroMagnitude),
            .double(-0.0), 0.0, .double(.leastNonzeroMagnitude), 2.5, .double(.infinity), .double(.nan),
            .double(-.nan),
            "", "a", "a\u{0}", "a\u{0}b", "a\u{1}", "ab", "\u{E9}", "e\u{301}", "日本語", "🎵 song",
            .string(long), .string(long + "\u{0}"), .string(long + "y"), .string(longSamePrefix + "a"),
            .string(longSamePrefix + "ab"), .string(longSamePrefix + "b" + long),
            .bytes([]), .bytes([0]), .bytes([0, 0]), .bytes([0, 0xFF]), .bytes([1]), .bytes([0xFF]),
            .bytes([UInt8](repeating: 7, count: 35)),
            .date(Date(timeIntervalSinceReferenceDate: -5)), .date(Date(timeIntervalSinceReferenceDate: 0)),
            .date(Date(timeIntervalSinceReferenceDate: 1e9)),
            .reference(RecordReference(table: "a", id: 1)), .reference(RecordReference(table: "a", id: "x")),
            .reference(RecordReference(table: "a\u{0}", id: -1)),
            [], [.null], [1], [1, 2], [2], ["a\u{0}"], [[]], [[1]],
            ["a": 1], ["a": .null], ["a": 1, "b": "\u{0}"], ["b": 0],
        ]
    }()

    /// The kind of a value, in the documented order.
    static func kind(_ value: Value) -> Int {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .int: return 2
        case .double: return 3
        case .string: return 4
        case .bytes: return 5
        case .date: return 6
        case .reference: return 7
        case .list: return 8
        case .map: return 9
        }
    }

    static func id(_ random: inout SeededRandom, _ n: Int) -> RecordID {
        switch random.int(below: 3) {
        case 0: return RecordID(Int64(n) - 200)
        case 1: return RecordID("id-\(n)\(n % 3 == 0 ? "\u{0}" : "")")
        default:
            let b = random.bytes(16)
            return RecordID(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )
                )
            )
        }
    }

    /// The same records twice: in "indexed" (by v, and by w then v) and in
    /// "plain" (no index, so queries with a filter scan).
    static func database(seed: UInt64, count: Int) throws -> (Database, [Row]) {
        var random = SeededRandom(seed: seed)
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byV", on: "indexed", fields: ["v"])
        try builder.createIndex("byWV", on: "indexed", fields: ["w", "v"])
        var rows: [Row] = []
        var used = Set<RecordID>()
        for n in 0..<count {
            let id = id(&random, n)
            guard used.insert(id).inserted else { continue }
            var record: Record = ["w": .int(Int64(random.int(below: 3)))]
            if let value = pool[random.int(below: pool.count)] { record["v"] = value }
            try builder.insert(record, id: id, into: "indexed")
            try builder.insert(record, id: id, into: "plain")
            rows.append((id, record))
        }
        let database = try apply(Database(), builder.transaction(t: 1))
        database._invariantCheck()
        return (database, rows)
    }

    /// The model's order: by v (null when missing), then ID.
    static func sorted(_ rows: [Row]) -> [Row] {
        rows.sorted { a, b in
            let x = a.record["v"] ?? .null
            let y = b.record["v"] ?? .null
            return x != y ? x < y : a.id < b.id
        }
    }

    @Test("equality on every kind of value: index, scan and model agree", arguments: [UInt64(41), 42])
    func equalityOnEveryKind(seed: UInt64) throws {
        let (database, rows) = try Self.database(seed: seed, count: 600)
        for probe in Self.pool {
            let value = probe ?? .null
            let expected = Self.sorted(rows.filter { ($0.record["v"] ?? .null) == value }).map(\.id)
            let indexed = database.query("indexed").where("v", equals: value)
            #expect(try indexed.explain().access == .index("byV"))
            #expect(try indexed.ids() == expected, "seed \(seed) probe \(value)")
            #expect(try indexed.count() == expected.count, "seed \(seed) probe \(value)")
            #expect(try indexed.first()?.id == expected.first, "seed \(seed) probe \(value)")
            #expect(try indexed.last()?.id == expected.last, "seed \(seed) probe \(value)")
            #expect(try indexed.reversed().ids() == expected.reversed(), "seed \(seed) probe \(value)")
            let scanned = database.query("plain").where("v", equals: value).filter { _ in true }
            #expect(try scanned.explain().access == .scan)
            #expect(try scanned.ids() == expected, "seed \(seed) probe \(value) (scan)")
            // The second field of a two-field index, after an equality on the first.
            for w in 0..<3 {
                let both = rows.filter { ($0.record["v"] ?? .null) == value && $0.record["w"] == .int(Int64(w)) }
                #expect(
                    try database.query("indexed").where("w", equals: .int(Int64(w))).where("v", equals: value).ids()
                        == Self.sorted(both).map(\.id),
                    "seed \(seed) probe \(value) w \(w)"
                )
            }
        }
    }

    @Test(
        "ranges on every kind of value, both directions, with limit and offset: index, scan and model agree",
        arguments: [UInt64(43), 44]
    )
    func rangesOnEveryKind(seed: UInt64) throws {
        let (database, rows) = try Self.database(seed: seed, count: 500)
        var random = SeededRandom(seed: seed &+ 1_000)
        let values = Self.pool.map { $0 ?? .null }
        for _ in 0..<250 {
            var a = values[random.int(below: values.count)]
            var b = values[random.int(below: values.count)]
            if b < a { swap(&a, &b) }
            let shape = random.int(below: 6)
            let descending = random.chance(50)
            let limit = random.chance(30) ? random.int(below: 40) : nil
            let offset = random.chance(30) ? random.int(below: 600) : 0
            func build(_ table: Key) -> Query {
                var query = database.query(table)
                switch shape {
                case 0: query = query.where("v", in: a...b)
                case 1: query = query.where("v", in: a..<b)
                case 2: query = query.where("v", in: a...)
                case 3: query = query.where("v", in: ...b)
                case 4: query = query.where("v", in: ..<b)
                default: query = query.where("v", greaterThan: a)
                }
                query = query.order(by: "v", descending: descending)
                if let limit {
                    query = query.limit(limit, offset: offset)
                } else if offset > 0 {
                    query = query.limit(Int.max, offset: offset)
                }
                return query
            }
            // One-sided ranges stay within their bound's kind.
            let matching = rows.filter { row in
                let v = row.record["v"] ?? .null
                switch shape {
                case 0: return !(v < a) && !(b < v)
                case 1: return !(v < a) && v < b
                case 2: return !(v < a) && Self.kind(v) == Self.kind(a)
                case 3: return !(b < v) && Self.kind(v) == Self.kind(b)
                case 4: return v < b && Self.kind(v) == Self.kind(b)
                default: return a < v && Self.kind(v) == Self.kind(a)
                }
            }
            var ordered = Self.sorted(matching).map(\.id)
            if descending { ordered.reverse() }
            let page = Array(ordered.dropFirst(offset).prefix(limit ?? Int.max))
            let context =
                "seed \(seed) shape \(shape) a \(a) b \(b) desc \(descending) limit \(String(describing: limit)) offset \(offset)"
            let indexed = build("indexed")
            #expect(try indexed.ids() == page, "\(context)")
            #expect(try indexed.records().map(\.id) == page, "\(context)")
            #expect(try indexed.count() == page.count, "\(context)")
            #expect(try indexed.first()?.id == page.first, "\(context)")
            #expect(try indexed.last()?.id == page.last, "\(context)")
            #expect(try indexed.filter { _ in true }.ids() == page, "\(context) (index + filter)")
            #expect(try build("plain").filter { _ in true }.ids() == page, "\(context) (scan)")
        }
    }

    // MARK: Limits and offsets

    @Test("limit(0) selects nothing: records, ids, count, first and last all agree")
    func limitZeroSelectsNothing() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byN", on: "t", fields: ["n"])
        for n in 0..<10 { try builder.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t") }
        let database = try apply(Database(), builder.transaction(t: 1))
        let query = database.query("t").order(by: "n").limit(0)
        #expect(try query.records().isEmpty)
        #expect(try query.ids().isEmpty)
        #expect(try query.count() == 0)
        #expect(try query.last() == nil)
        #expect(try query.first() == nil, "first() ignores limit(0) and returns the first record")
        // The same on a scan.
        let scan = database.query("t").filter { _ in true }.limit(0)
        #expect(try scan.records().isEmpty)
        #expect(try scan.first() == nil, "first() ignores limit(0) on a scan too")
    }

    @Test("offsets at and past the end, in both directions, on an index and a scan")
    func offsetsPastTheEnd() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byN", on: "t", fields: ["n"])
        for n in 0..<100 {
            try builder.insert(["n": .int(Int64(n % 7)), "k": .int(Int64(n))], id: RecordID(n), into: "t")
        }
        let database = try apply(Database(), builder.transaction(t: 1))
        let all = try database.query("t").order(by: "n").ids()
        #expect(all.count == 100)
        for descending in [false, true] {
            let expected = descending ? Array(all.reversed()) : all
            for (limit, offset) in [(5, 0), (5, 95), (5, 98), (5, 100), (5, 1_000), (Int.max, 99), (0, 0), (200, 0)] {
                let query = database.query("t").order(by: "n", descending: descending).limit(limit, offset: offset)
                let page = Array(expected.dropFirst(offset).prefix(limit))
                #expect(try query.ids() == page, "\(descending) \(limit) \(offset)")
                // Each row pairs its ID with that record (records come from one batched lookup).
                let rows = try query.records()
                #expect(rows.map(\.id) == page, "\(descending) \(limit) \(offset)")
                for row in rows { #expect(row.record == database[table: "t"][row.id], "row \(row.id)") }
                #expect(try query.count() == page.count, "\(descending) \(limit) \(offset)")
                #expect(try query.last()?.id == page.last, "\(descending) \(limit) \(offset)")
                let scan = database.query("t").order(by: "n", descending: descending).filter { _ in true }
                #expect(try scan.limit(limit, offset: offset).ids() == page, "scan \(descending) \(limit) \(offset)")
            }
        }
    }

    // MARK: Uniqueness

    @Test(
        "unique indexes: nulls and missing fields never collide, values differing past 28 bytes or by a NUL do not, equal ones do"
    )
    func uniquenessEdges() throws {
        let prefix = String(repeating: "p", count: 30)
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byKey", on: "t", fields: ["a", "b"], unique: true)
        try builder.insert(["a": 1], id: 1, into: "t")  // b missing
        try builder.insert(["a": 1], id: 2, into: "t")  // b missing again: null, allowed
        try builder.insert(["a": 1, "b": .null], id: 3, into: "t")
        try builder.insert(["a": .string(prefix + "x"), "b": 1], id: 4, into: "t")
        try builder.insert(["a": .string(prefix + "y"), "b": 1], id: 5, into: "t")
        try builder.insert(["a": "k", "b": 1], id: 6, into: "t")
        try builder.insert(["a": "k\u{0}", "b": 1], id: 7, into: "t")
        try builder.insert(["a": .double(0.0), "b": 1], id: 8, into: "t")
        try builder.insert(["a": .double(-0.0), "b": 1], id: 9, into: "t")
        try builder.insert(["a": .int(1), "b": 1], id: 10, into: "t")
        try builder.insert(["a": .double(1), "b": 1], id: 11, into: "t")
        let before = builder.database
        before._invariantCheck()
        #expect(
            throws: ApplyError.uniqueViolation(
                table: "t",
                index: "byKey",
                key: [.string(prefix + "x"), 1],
                existing: 4,
                new: 12
            )
        ) {
            try builder.insert(["a": .string(prefix + "x"), "b": 1], id: 12, into: "t")
        }
        #expect(throws: ApplyError.self) { try builder.update(6, in: "t", [.set("a", "k\u{0}")]) }
        #expect(builder.database == before)
        // A rotation of three unique values in one transaction, a delete and
        // a re-insert of its value under another ID, both pass.
        let rotation = Transaction(
            t: 1,
            basis: 0,
            changes: [
                "t": [
                    4: .update(["a": FieldChange(old: .string(prefix + "x"), new: .string(prefix + "y"))]),
                    5: .update(["a": FieldChange(old: .string(prefix + "y"), new: "k")]),
                    6: .update(["a": FieldChange(old: "k", new: .string(prefix + "x"))]),
                    7: .delete(["a": "k\u{0}", "b": 1]),
                    13: .insert(["a": "k\u{0}", "b": 1]),
                ]
            ]
        )
        let rotated = try apply(before, rotation)
        rotated._invariantCheck()
        #expect(try rotated.query("t").where("a", equals: "k").where("b", equals: 1).ids() == [5])
        #expect(try rotated.query("t").where("a", equals: "k\u{0}").ids() == [13])
        #expect(try apply(rotated, inverse(rotation)) == before)
        // Two inserts of one value in one transaction are refused, naming both.
        let twice = Transaction(
            t: 1,
            basis: 0,
            changes: ["t": [20: .insert(["a": 9, "b": 9]), 21: .insert(["a": 9, "b": 9])]]
        )
        #expect(throws: ApplyError.self) { try apply(before, twice) }
    }

    // MARK: Laws on values with indexes

    /// A random run of transactions over a small table, declaring and
    /// dropping indexes (unique ones too) among record edits.
    static func run(seed: UInt64, length: Int, from start: Database) -> [Transaction] {
        var random = SeededRandom(seed: seed)
        var database = start
        var run: [Transaction] = []
        let names: [Key] = ["i1", "i2", "u1"]
        let fieldSets: [[FieldPath]] = [["a"], ["b", "a"], ["m.k"], ["a", "b"]]
        while run.count < length {
            var builder = TransactionBuilder(on: database)
            for _ in 0..<random.int(below: 5) {
                let id = RecordID(random.int(below: 12))
                let value: Value = [.int(Int64(random.int(below: 6))), .string("s\(random.int(below: 4))"), .null][
                    random.int(below: 3)
                ]
                do {
                    switch random.int(below: 8) {
                    case 0, 1:
                        try builder.upsert(
                            ["a": value, "b": .int(Int64(random.int(below: 3))), "m": ["k": value]],
                            id: id,
                            into: "t"
                        )
                    case 2: try builder.update(id, in: "t", [.set("a", value)])
                    case 3: try builder.update(id, in: "t", [.unset("a"), .set("m.k", value)])
                    case 4: try builder.delete(id, from: "t")
                    case 5, 6:
                        let name = names[random.int(below: names.count)]
                        try builder.createIndex(
                            name,
                            on: "t",
                            fields: fieldSets[random.int(below: fieldSets.count)],
                            unique: name == "u1"
                        )
                    default: try builder.dropIndex(names[random.int(below: names.count)], on: "t")
                    }
                } catch {
                    // Refused edits (missing records, unique violations,
                    // conflicting declarations) leave the builder as it was.
                }
            }
            let transaction = builder.transaction(t: database.basis + 1)
            database = try! apply(database, transaction)
            run.append(transaction)
        }
        return run
    }

    /// Every index's entries, by what queries return: a full ordered walk of each.
    static func indexContents(_ database: Database) throws -> [Key: [RecordID]] {
        var contents: [Key: [RecordID]] = [:]
        let table = database[table: "t"]
        for definition in table.indexDefinitions {
            contents[definition.name] = try database.query("t").order(by: definition.fields[0]).ids()
        }
        return contents
    }

    @Test(
        "apply(flatten(run)) equals the fold, inverse undoes, diff redoes, with indexes declared and dropped inside runs",
        arguments: [UInt64(51), 52, 53]
    )
    func lawsWithIndexes(seed: UInt64) throws {
        let run = Self.run(seed: seed, length: 40, from: Database())
        var states: [Database] = [Database()]
        for transaction in run { states.append(try apply(states.last!, transaction)) }
        var random = SeededRandom(seed: seed &+ 7)
        for _ in 0..<30 {
            let a = random.int(below: run.count)
            let b = a + random.int(below: run.count - a)
            let context = "seed \(seed) run \(a)...\(b)"
            let flattened = try flatten(run[a...b])
            let viaFlatten = try apply(states[a], flattened)
            viaFlatten._invariantCheck()
            #expect(viaFlatten == states[b + 1], "\(context)")
            // Table == compares declarations only: compare the entries too.
            #expect(try Self.indexContents(viaFlatten) == Self.indexContents(states[b + 1]), "\(context)")
            let undone = try apply(viaFlatten, inverse(flattened))
            undone._invariantCheck()
            #expect(undone == states[a], "\(context) inverse")
            #expect(try Self.indexContents(undone) == Self.indexContents(states[a]), "\(context) inverse")
            let redone = try apply(states[b + 1], diff(from: states[b + 1], to: states[a]).transaction(t: Int64(a)))
            redone._invariantCheck()
            #expect(redone == states[a], "\(context) diff")
        }
        for state in states { state._invariantCheck() }
    }

    // MARK: Hostile transactions and declarations

    @Test("apply refuses an index change filed under another index's name")
    func misnamedIndexChangeIsRefused() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("b", on: "t", fields: ["x"])
        try builder.insert(["x": 1], id: 1, into: "t")
        let database = try apply(Database(), builder.transaction(t: 1))
        // Filed under "a", but declaring "b": the codec refuses this, apply does not.
        let misnamed = Transaction(
            t: 2,
            basis: 1,
            indexChanges: ["t": ["a": IndexChange(old: nil, new: IndexDefinition(name: "b", fields: ["y"]))]]
        )
        #expect(throws: (any Error).self, "apply accepted it, leaving two indexes named b") {
            let result = try apply(database, misnamed)
            // What it produced, for the record: a table with two indexes named "b".
            #expect(result[table: "t"].indexDefinitions.map(\.name) == ["b"])
        }
    }

    @Test("createIndex refuses a field path no query can name (an empty field or key)")
    func createIndexRefusesInvalidPaths() throws {
        var builder = TransactionBuilder(on: Database())
        #expect(throws: (any Error).self, "an index on an empty field was declared") {
            try builder.createIndex("bad", on: "t", fields: [FieldPath(field: "", keys: [])])
        }
        #expect(throws: (any Error).self, "an index on an empty nested key was declared") {
            try builder.createIndex("bad2", on: "t", fields: [FieldPath(field: "m", keys: [""])])
        }
        // Queries refuse such paths, so such an index can never be used.
        #expect(throws: QueryError.invalidPath(FieldPath(field: "", keys: []))) {
            try builder.database.query("t").where(FieldPath(field: "", keys: []), equals: 1).ids()
        }
    }

    @Test("a past value keeps the index entries it had; queries on it ignore later edits")
    func pastValuesKeepTheirEntries() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byA", on: "t", fields: ["a"], unique: true)
        for n in 0..<600 { try builder.insert(["a": .int(Int64(n))], id: RecordID(n), into: "t") }
        let past = try apply(Database(), builder.transaction(t: 1))
        var current = past
        var random = SeededRandom(seed: 61)
        for t in 2..<60 {
            var edit = TransactionBuilder(on: current)
            for i in 0..<10 {
                let id = RecordID(random.int(below: 600))
                try edit.update(id, in: "t", [.set("a", .int(Int64(10_000 + t * 10 + i)))])
            }
            current = try apply(current, edit.transaction(t: Int64(t)))
        }
        past._invariantCheck()
        current._invariantCheck()
        #expect(try past.query("t").where("a", in: Value.int(0)..<Value.int(600)).count() == 600)
        #expect(try past.query("t").order(by: "a").ids() == (0..<600).map { RecordID($0) })
        #expect(try current.query("t").where("a", in: Value.int(10_000)...).count() > 0)
    }
}

/// What a second cold review of indexes and queries found: literal paths
/// with an empty part trapped, and a history filtered by table left out
/// the table's index declarations.
@Suite("Indexes and queries: second review")
struct IndexSecondReviewTests {
    static func database() throws -> Database {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byA", on: "t", fields: ["a"])
        try builder.insert(["a": 1], id: 1, into: "t")
        return builder.database
    }

    @Test("a literal path with an empty part throws where it is used, naming the path as written")
    func emptyPartsInLiterals() throws {
        let database = try Self.database()
        for literal: FieldPath in ["", ".", "a..b", "a.", ".a"] {
            #expect(throws: QueryError.invalidPath(literal)) { try database.query("t").where(literal, equals: 1).ids() }
            #expect(throws: QueryError.invalidPath(literal)) { try database.query("t").order(by: literal).ids() }
            #expect(throws: QueryError.invalidPath(literal)) {
                try database.query("t").where(literal, in: 0...1).count()
            }
            var builder = TransactionBuilder(on: database)
            #expect(throws: ApplyError.self) { try builder.createIndex("bad", on: "t", fields: ["a", literal]) }
            #expect(builder.database == database)
        }
        let written: FieldPath = "a..b"
        #expect(written.description == "a..b")
        #expect(QueryError.invalidPath(written).description.contains("'a..b'"))
        // A declaration with no fields is refused when applied, not trapped on.
        let empty = IndexDefinition(name: "none", fields: [])
        let declare = Transaction(t: 2, basis: 1, indexChanges: ["t": ["none": IndexChange(old: nil, new: empty)]])
        #expect(throws: ApplyError.self) { try apply(database, declare) }
    }

    @Test("a history filtered by table lists the table's index declarations and drops too")
    func historyByTableHasIndexChanges() async throws {
        let path = temporaryStorePath("history-index-filter")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "insert") { try $0.insert(["a": 1], id: 1, into: "songs") }
        try await store.transact(message: "index") { try $0.createIndex("byA", on: "songs", fields: ["a"]) }
        try await store.transact(message: "other") { try $0.insert(["b": 1], id: 1, into: "albums") }
        try await store.transact(message: "drop") { try $0.dropIndex("byA", on: "songs") }
        #expect(try await store.history(HistoryFilter(table: "songs")).map(\.message) == ["drop", "index", "insert"])
        #expect(try await store.history(HistoryFilter(table: "albums")).map(\.message) == ["other"])
        // A record filter matches the record's changes only.
        #expect(try await store.history(HistoryFilter(table: "songs", record: 1)).map(\.message) == ["insert"])
        try await store.close()
    }
}
