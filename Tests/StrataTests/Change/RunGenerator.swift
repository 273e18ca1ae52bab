import Foundation
import PersistentCollections
import Strata

/// Random bases and random runs of transactions for the algebra's property
/// tests. Every transaction is built with `TransactionBuilder` on the value
/// the previous one produced, so the run applies in order.
///
/// Names, keys, IDs and strings are drawn from pools that hold canonically
/// equivalent but byte-different spellings (precomposed and decomposed, and
/// combining marks in both orders): Swift's `String` calls them equal, the
/// database must keep them apart.
struct RunGenerator {
    var random: SeededRandom
    /// "é" precomposed and decomposed; "ạ́" as a precomposed base with one
    /// mark, and decomposed with its two marks in either order.
    static let equivalents: [String] = ["\u{E9}", "e\u{301}", "\u{1EA1}\u{301}", "a\u{323}\u{301}", "a\u{301}\u{323}"]
    static let tables: [Key] = ["songs", "albums", "caf\u{E9}", "cafe\u{301}"]
    static let fields: [Key] = [
        "title", "plays", "rating", "path", "meta", "\u{E9}", "e\u{301}", "a\u{323}\u{301}", "a\u{301}\u{323}",
    ]
    static let mapKeys: [Key] = ["a", "b", "c"] + equivalents.map { Key($0) }

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    mutating func pick<T>(_ pool: [T]) -> T {
        pool[random.int(below: pool.count)]
    }

    mutating func id() -> RecordID {
        if random.chance(80) { return RecordID(random.int(below: 12)) }
        return random.chance(50) ? RecordID("s\(random.int(below: 4))") : RecordID("s" + pick(Self.equivalents))
    }

    mutating func value() -> Value {
        switch random.int(below: 8) {
        case 0: return .int(Int64(random.int(below: 5)))
        case 1: return .string(["a", "b", "Blue River"][random.int(below: 3)])
        case 2: return ["a": .int(Int64(random.int(below: 3))), "b": "x"]
        case 3: return .null
        case 4: return .double(Double(random.int(below: 3)) / 2)
        case 5: return .string(pick(Self.equivalents))
        case 6:
            // A map whose keys may be equivalent spellings of one another.
            var map = PersistentMap<Key, Value>()
            for _ in 0..<(1 + random.int(below: 3)) { map[pick(Self.mapKeys)] = .int(Int64(random.int(below: 2))) }
            return .map(map)
        default: return [.int(1), .string("two")]
        }
    }

    mutating func record() -> Record {
        var record = Record()
        for field in Self.fields where random.chance(50) { record[field] = value() }
        return record
    }

    mutating func path() -> FieldPath {
        random.chance(70) ? FieldPath(pick(Self.fields)) : FieldPath("meta", pick(Self.mapKeys))
    }

    mutating func base() -> Database {
        var builder = TransactionBuilder(on: Database())
        for table in Self.tables {
            for _ in 0..<random.int(below: 10) {
                let id = id()
                try? builder.upsert(record(), id: id, into: table)
            }
        }
        for table in Self.tables where random.chance(30) {
            var attempt = builder
            if (try? indexEdit(&attempt, table: table)) != nil { builder = attempt }
        }
        return (try? apply(Database(), builder.transaction(t: 0))) ?? Database()
    }

    /// One random edit; throws for edits the database refuses (those are
    /// simply not part of the transaction).
    mutating func edit(_ builder: inout TransactionBuilder) throws {
        let table = pick(Self.tables)
        if random.chance(8) { return try indexEdit(&builder, table: table) }
        let id = id()
        let exists = builder.database.record(id, in: table) != nil
        switch random.int(below: 100) {
        case 0..<20:
            if exists { try builder.delete(id, from: table) } else { try builder.insert(record(), id: id, into: table) }
        case 20..<30:
            try builder.upsert(record(), id: id, into: table)
        case 30..<45 where exists:
            // Unset-then-set or set-then-unset of one field.
            let path = path()
            if random.chance(50) {
                try builder.update(id, in: table, [.unset(path), .set(path, value())])
            } else {
                try builder.update(id, in: table, [.set(path, value()), .unset(path)])
            }
        case 45..<55 where exists:
            // Two updates unsetting different fields.
            try builder.update(id, in: table, [.unset(path())])
            try builder.update(id, in: table, [.unset(path())])
        case 55..<65 where exists:
            // Delete then re-insert.
            try builder.delete(id, from: table)
            try builder.insert(record(), id: id, into: table)
        case 65..<72 where !exists:
            // Insert, update, delete.
            try builder.insert(record(), id: id, into: table)
            try builder.update(id, in: table, [.set(path(), value())])
            try builder.delete(id, from: table)
        case 72..<80 where exists:
            // Update then upsert.
            try builder.update(id, in: table, [.set(path(), value())])
            try builder.upsert(record(), id: id, into: table)
        default:
            if exists {
                var patch = Patch()
                for _ in 0..<(1 + random.int(below: 3)) {
                    if random.chance(70) { patch.set(path(), to: value()) } else { patch.unset(path()) }
                }
                try builder.update(id, in: table, patch)
            } else {
                try builder.insert(record(), id: id, into: table)
            }
        }
    }

    static let indexNames: [Key] = ["byTitle", "byPlays", "byMeta", "pair"]

    /// Creates or drops an index: on title, plays, a nested path, or two
    /// fields; sometimes unique (then often refused by the data).
    mutating func indexEdit(_ builder: inout TransactionBuilder, table: Key) throws {
        let declared = builder.database[table: table].indexDefinitions
        if !declared.isEmpty && random.chance(40) {
            return try builder.dropIndex(pick(declared).name, on: table)
        }
        let name = pick(Self.indexNames)
        let fields: [FieldPath]
        switch name {
        case "byTitle": fields = ["title"]
        case "byPlays": fields = ["plays", "rating"]
        case "byMeta": fields = [FieldPath("meta", pick(Self.mapKeys))]
        default: fields = [path(), path()]
        }
        if declared.contains(where: { $0.name == name }) { try builder.dropIndex(name, on: table) }
        try builder.createIndex(name, on: table, fields: fields, unique: random.chance(20))
    }

    /// A run of 1...`maxLength` transactions from `base`, with the value
    /// after each.
    mutating func run(from base: Database, maxLength: Int) -> (transactions: [Transaction], values: [Database]) {
        var transactions: [Transaction] = []
        var values = [base]
        var current = base
        for _ in 0..<(1 + random.int(below: maxLength)) {
            var builder = TransactionBuilder(on: current)
            let edits = random.chance(10) ? 0 : 1 + random.int(below: 4)  // some empty transactions
            for _ in 0..<edits {
                var attempt = builder
                if (try? edit(&attempt)) != nil { builder = attempt }
            }
            let transaction = builder.transaction(
                t: current.basis + 1,
                id: UUID(
                    uuidString: String(format: "00000000-0000-0000-0000-%012llx", random.next() & 0xFFFF_FFFF_FFFF)
                )!,
                timestamp: Date(timeIntervalSinceReferenceDate: Double(current.basis + 1)),
                message: "tx \(current.basis + 1)"
            )
            current = builder.database
            current = (try? apply(values.last!, transaction)) ?? current
            transactions.append(transaction)
            values.append(current)
        }
        return (transactions, values)
    }
}
