import Foundation
import PersistentCollections
import Strata
import Testing

/// Records with hundreds of fields changed many fields at a time: a patch,
/// an update's transaction, its inverse and its combination with another
/// go through one pass over the record, which must give what changing
/// the fields one at a time gives (the model). Names include canonically
/// equivalent spellings, which are distinct fields.
@Suite("Wide records, many fields changed at once")
struct WideRecordTests {
    static let names: [Key] =
        (0..<300).map { Key("field\($0)") } + ["\u{E9}", "e\u{301}", "", "meta", "z\u{0}", "\u{1F600}"]

    static func value(_ random: inout SeededRandom) -> Value {
        switch random.int(below: 5) {
        case 0: return .int(Int64(random.int(below: 4)))
        case 1: return .string(["a", "b", "\u{E9}"][random.int(below: 3)])
        case 2: return ["x": .int(Int64(random.int(below: 2)))]
        case 3: return .null
        default: return .bytes([UInt8](repeating: 7, count: random.int(below: 40)))
        }
    }

    static func record(_ random: inout SeededRandom) -> Record {
        var record = Record()
        let count = random.int(below: 250)
        for _ in 0..<count { record[names[random.int(below: names.count)]] = value(&random) }
        return record
    }

    static func path(_ random: inout SeededRandom) -> FieldPath {
        let field = names[random.int(below: names.count)]
        return random.chance(20) ? FieldPath(field: field, keys: ["x"]) : FieldPath(field: field, keys: [])
    }

    static func patch(_ random: inout SeededRandom) -> Patch {
        var patch = Patch()
        for _ in 0..<random.int(below: 80) {
            if random.chance(75) { patch.set(path(&random), to: value(&random)) } else { patch.unset(path(&random)) }
        }
        return patch
    }

    /// The patch's edits one at a time, through the record's own setters.
    static func model(_ patch: Patch, _ record: Record) throws -> Record {
        var result = record
        for operation in patch.operations {
            switch operation {
            case let .set(path, value): try result.setValue(value, at: path)
            case let .unset(path): result.removeValue(at: path)
            }
        }
        return result
    }

    @Test("a patch of many edits gives the record its edits one at a time give", arguments: 0..<4)
    func patches(chunk: Int) throws {
        for seed in UInt64(chunk * 100)..<UInt64((chunk + 1) * 100) {
            var random = SeededRandom(seed: seed)
            let record = Self.record(&random)
            let patch = Self.patch(&random)
            let expected = Result { try Self.model(patch, record) }
            let applied = Result { try patch.applied(to: record) }
            switch (expected, applied) {
            case let (.success(a), .success(b)):
                #expect(a == b, "seed \(seed): \(patch.operations.count) edits")
            case (.failure, .failure):
                break
            default:
                Issue.record("seed \(seed): the model gave \(expected), the patch \(applied)")
            }
        }
    }

    @Test("an update of many fields applies, inverts, combines, and refuses what it does not replace")
    func transactions() throws {
        var random = SeededRandom(seed: 99)
        for round in 0..<60 {
            var record = Self.record(&random)
            record["field0"] = 1
            let base = try apply(Database(), Self.insert(record))
            // A patch the builder accepts (a set through a non-map is refused).
            var patch = Self.patch(&random)
            while (try? patch.applied(to: record)) == nil { patch = Self.patch(&random) }
            var builder = TransactionBuilder(on: base)
            try builder.update(1, in: "wide", patch)
            let update = builder.transaction(t: 2)
            let after = try apply(base, update)
            #expect(after.record(1, in: "wide") == (try patch.applied(to: record)), "round \(round)")
            #expect(try apply(after, inverse(update)) == base, "round \(round): inverse")
            // A second wide update, then the pair combined.
            var second = TransactionBuilder(on: after)
            try second.update(1, in: "wide", Self.patch(&random).dropsFailing(on: after.record(1, in: "wide")!))
            let next = second.transaction(t: 3)
            let final = try apply(after, next)
            #expect(try apply(base, flatten([update, next])) == final, "round \(round): flatten")
            // The update on a record whose fields it changes hold other values.
            guard case .update(let fields)? = update.changes[Key("wide")]?[1], fields.count > 8 else { continue }
            var other = record
            let changed = Array(fields.keys)
            for name in changed.prefix(3) { other[name] = .string("elsewhere") }
            let elsewhere = try apply(Database(), Self.insert(other))
            #expect {
                _ = try apply(elsewhere, update)
            } throws: { error in
                guard case .conflict(_, _, let field, _, let found)? = error as? ApplyError else { return false }
                return changed.prefix(3).contains(field) && found == .string("elsewhere")
            }
        }
    }

    @Test("removing many fields no record ever had interns none of their names")
    func removingUnknownNames() throws {
        var random = SeededRandom(seed: 5)
        let record = Self.record(&random)
        var patch = Patch()
        let fresh = (0..<20).map { Key("never-held-\($0)-\(UUID().uuidString)") }
        for name in fresh { patch.unset(FieldPath(field: name, keys: [])) }
        patch.set("field1", to: 5)
        let applied = try patch.applied(to: record)
        #expect(applied == (try Self.model(patch, record)))
        #expect(applied["field1"] == 5)
        #expect(fresh.allSatisfy { !Record.isFieldNameInterned($0) })
    }

    @Test("inserted then updated, and updated then deleted, in one transaction and combined in runs")
    func combinedChanges() throws {
        var random = SeededRandom(seed: 17)
        for round in 0..<20 {
            let record = Self.record(&random)
            var patch = Self.patch(&random)
            while (try? patch.applied(to: record)) == nil { patch = Self.patch(&random) }
            // Insert then update in one builder: one insert of the final record.
            var builder = TransactionBuilder(on: Database())
            try builder.insert(record, id: 1, into: "wide")
            try builder.update(1, in: "wide", patch)
            let inserted = try apply(Database(), builder.transaction(t: 1))
            #expect(inserted.record(1, in: "wide") == (try patch.applied(to: record)), "round \(round)")
            // A wide update then a delete, combined: a delete of the record before both.
            let base = try apply(Database(), Self.insert(record))
            var update = TransactionBuilder(on: base)
            try update.update(1, in: "wide", patch)
            let updated = update.transaction(t: 2)
            let after = try apply(base, updated)
            var delete = TransactionBuilder(on: after)
            try delete.delete(1, from: "wide")
            let deleted = delete.transaction(t: 3)
            let combined = try flatten([updated, deleted])
            #expect(combined.changes[Key("wide")]?[1] == .delete(record), "round \(round)")
            #expect(try apply(base, combined) == (try apply(after, deleted)), "round \(round)")
        }
    }

    @Test("a store's wide updates: as-of walks back through them, and a record's versions read them")
    func storeHistory() async throws {
        let path = temporaryStorePath("wide-history")
        defer { removeStore(path) }
        var options = StoreOptions()
        options.createIfMissing = true
        let store = try await Store.open(at: path, options: options)
        var random = SeededRandom(seed: 23)
        var record = Self.record(&random)
        try await store.transact { try $0.insert(record, id: 1, into: "wide") }
        var values = [store.current]
        var records = [record]
        for _ in 0..<12 {
            var patch = Self.patch(&random)
            while (try? patch.applied(to: record)) == nil { patch = Self.patch(&random) }
            try await store.transact { try $0.update(1, in: "wide", patch) }
            record = try patch.applied(to: record)
            values.append(store.current)
            records.append(record)
        }
        // Newest first, walked back from the current value.
        for (value, t) in zip(values, values.map(\.basis)).reversed() {
            #expect(try await store.database(asOf: t) == value, "as-of \(t)")
        }
        let versions = try await store.versions(of: 1, in: "wide")
        #expect(versions.first?.record == record)
        #expect(versions.last?.record == records[0])
        #expect(versions.allSatisfy { version in records.contains { $0 == version.record } })
        try await store.close()
    }

    static func insert(_ record: Record) throws -> Transaction {
        var builder = TransactionBuilder(on: Database())
        try builder.insert(record, id: 1, into: "wide")
        return builder.transaction(t: 1)
    }
}

extension Patch {
    /// The edits that apply to `record` one after another, the others left out.
    fileprivate func dropsFailing(on record: Record) -> Patch {
        var kept = Patch()
        var current = record
        for operation in operations {
            var attempt = current
            switch operation {
            case let .set(path, value):
                guard (try? attempt.setValue(value, at: path)) != nil else { continue }
                kept.set(path, to: value)
            case let .unset(path):
                attempt.removeValue(at: path)
                kept.unset(path)
            }
            current = attempt
        }
        return kept
    }
}
