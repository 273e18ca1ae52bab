import Foundation
import Strata
import Testing

/// What is written must be readable: the codec reads values nested up to
/// `Value.maximumNesting` lists and maps, so nothing deeper may be committed.
@Suite("Nesting limit")
struct NestingLimitTests {
    /// A map nested `depth` deep around `1`.
    static func nested(_ depth: Int) -> Value {
        var value: Value = 1
        for level in 0..<depth { value = level % 2 == 0 ? .map(["k": value]) : .list([value]) }
        return value
    }

    @Test("the builder refuses deeper values and paths, naming table, record and field; the limit itself is kept")
    func builder() throws {
        let limit = Value.maximumNesting
        var builder = TransactionBuilder(on: Database())
        try builder.insert(
            ["a": Self.nested(limit), "pad": .string(String(repeating: "x", count: 300))],
            id: 1,
            into: "t"
        )
        #expect(throws: ApplyError.nestingTooDeep(table: "t", id: 2, field: "a", depth: limit + 1, limit: limit)) {
            try builder.insert(["a": Self.nested(limit + 1)], id: 2, into: "t")
        }
        #expect(throws: ApplyError.self) { try builder.upsert(["b": Self.nested(limit + 5)], id: 1, into: "t") }
        // The repro: a path of 65 keys makes 65 nested maps.
        let deepPath = FieldPath(field: "z", keys: Array(repeating: "k", count: limit + 1))
        #expect(throws: ApplyError.nestingTooDeep(table: "t", id: 1, field: "z", depth: limit + 1, limit: limit)) {
            try builder.update(1, in: "t", [.set(deepPath, 1)])
        }
        try builder.update(1, in: "t", [.set(FieldPath(field: "c", keys: Array(repeating: "k", count: limit)), 1)])
        let transaction = builder.transaction()
        let decoded = try BinaryCodec.decodeTransaction(BinaryCodec.encode(transaction))
        #expect(decoded == transaction)
    }

    @Test("through a store: refused commits write nothing, and the store reopens with what was committed")
    func store() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let limit = Value.maximumNesting
        var store = try await Store.open(at: path, options: testOptions())
        try await store.transact { try $0.insert(["a": Self.nested(limit)], id: 1, into: "t") }
        await #expect(throws: ApplyError.self) {
            try await store.transact {
                try $0.update(1, in: "t", [.set(FieldPath(field: "z", keys: Array(repeating: "k", count: 65)), 1)])
            }
        }
        await #expect(throws: ApplyError.metadataTooDeep(key: "m", depth: limit + 1, limit: limit)) {
            try await store.transact(metadata: ["m": Self.nested(limit + 1)]) {
                try $0.insert(["b": 1], id: 2, into: "t")
            }
        }
        // A prepared transaction built by hand, around the builder.
        let prepared = Transaction(t: 1, basis: 0, changes: ["t": [3: .insert(["deep": Self.nested(limit + 1)])]])
        await #expect(throws: ApplyError.self) { try await store.commit(prepared) }
        let update = Transaction(
            t: 1,
            basis: 0,
            changes: ["t": [1: .update(["x": FieldChange(old: nil, new: Self.nested(100))])]]
        )
        await #expect(throws: ApplyError.self) { try await store.commit(update) }
        #expect(store.current.basis == 1)
        let value = store.current
        try await store.close()
        store = try await Store.open(at: path, options: testOptions())
        #expect(store.current == value)
        #expect(store.warnings.isEmpty)
        try await store.close()
    }
}
