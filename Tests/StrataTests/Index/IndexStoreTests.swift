import Foundation
import Strata
import Testing

/// Indexes through a store: committed, reopened from the log and from a
/// snapshot, on past values, reverted, and decoders fed damaged bytes.
@Suite("Indexes in a store")
struct IndexStoreTests {
    @Test("an index declared in a transaction survives reopen and snapshots, and past values have the indexes they had")
    func lifeCycle() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var store = try await Store.open(at: path, options: testOptions())
        try await store.transact { builder in
            for n in 0..<300 {
                try builder.insert(
                    ["album": .int(Int64(n % 10)), "track": .int(Int64(n))],
                    id: RecordID(n),
                    into: "songs"
                )
            }
        }
        try await store.transact(message: "index") {
            try $0.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
        }
        try await store.transact { try $0.update(5, in: "songs", [.set("album", 3)]) }
        let expected = try store.current.query("songs").where("album", equals: 3).order(by: "track").ids()
        #expect(expected.count == 31 && expected.contains(5))
        try await store.snapshot()
        try await store.transact { try $0.delete(13, from: "songs") }
        try await store.close()
        for round in 0..<2 {
            store = try await Store.open(at: path, options: testOptions())
            store.current._invariantCheck()
            #expect(
                try store.current.query("songs").where("album", equals: 3).ids() == expected.filter { $0 != 13 },
                "round \(round)"
            )
            let past = try await store.database(asOf: 3)
            #expect(try past.query("songs").where("album", equals: 3).ids() == expected)
            let beforeIndex = try await store.database(asOf: 1)
            #expect(beforeIndex[table: "songs"].indexDefinitions.isEmpty)
            #expect(throws: QueryError.self) { try beforeIndex.query("songs").where("album", equals: 3).ids() }
            if round == 0 {
                for file in snapshotFiles(path) { try FileManager.default.removeItem(atPath: file) }
            }
            try await store.close()
        }
        // Reverting to before the declaration drops it; undoing the revert brings it back.
        store = try await Store.open(at: path, options: testOptions())
        let revert = try await store.revert(to: 1)
        #expect(store.current[table: "songs"].indexDefinitions.isEmpty)
        try await store.revert(transaction: revert.transaction.id)
        #expect(store.current[table: "songs"].indexDefinitions.map(\.name) == ["byAlbum"])
        store.current._invariantCheck()
        try await store.close()
    }

    @Test("transactions and databases with indexes: mutated bytes decode or throw, never crash")
    func damagedBytes() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byA", on: "t", fields: ["a", FieldPath("m", "k")], unique: true)
        try builder.insert(["a": 1, "m": ["k": "x"]], id: 1, into: "t")
        try builder.insert(["a": 2], id: 2, into: "t")
        let transaction = builder.transaction(t: 1)
        let database = builder.database
        var random = SeededRandom(seed: 99)
        for bytes in [
            BinaryCodec.encode(transaction), BinaryCodec.encode(database), try BinaryCodec.encode(database, version: 3),
        ] {
            for _ in 0..<3_000 {
                var mutated = bytes
                for _ in 0..<(1 + random.int(below: 3)) {
                    mutated[random.int(below: mutated.count)] = UInt8(random.int(below: 256))
                }
                if let decoded = try? BinaryCodec.decodeTransaction(mutated) {
                    #expect(try BinaryCodec.decodeTransaction(BinaryCodec.encode(decoded)) == decoded)
                }
                if let decoded = try? BinaryCodec.decodeDatabase(mutated) { decoded._invariantCheck() }
            }
        }
        // A unique index two records violate is refused as such.
        var violating = TransactionBuilder(on: Database())
        try violating.createIndex("byA", on: "t", fields: ["a"])
        try violating.insert(["a": 1], id: 1, into: "t")
        try violating.insert(["a": 1], id: 2, into: "t")
        var bytes = try BinaryCodec.encode(violating.database, version: 3)
        // The definition's unique flag follows its name "byA".
        let name = Array("byA".utf8)
        let at = try #require(bytes.firstRange(of: name)).upperBound
        #expect(bytes[at] == 0)
        bytes[at] = 1
        #expect {
            try BinaryCodec.decodeDatabase(bytes)
        } throws: { error in
            guard case .invalidIndex(_, let table, let index, _)? = error as? CodecError else { return false }
            return table == "t" && index == "byA"
        }
    }

    @Test("transactions of format version 1 (before indexes) still decode")
    func version1() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(["a": 1], id: 1, into: "t")
        let transaction = builder.transaction(t: 1)
        var bytes = BinaryCodec.encode(transaction)
        // Version 2 (and 3: its transactions are 2's) appends an empty
        // index-change count; version 1 ends before it.
        #expect(bytes[4] == 3 && bytes.last == 0)
        var version2 = bytes
        version2[4] = 2
        #expect(try BinaryCodec.decodeTransaction(version2) == transaction)
        bytes[4] = 1
        bytes.removeLast()
        #expect(try BinaryCodec.decodeTransaction(bytes) == transaction)
    }
}
