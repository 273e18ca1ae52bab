import PersistentCollections
import Strata
import Testing

@Suite("Database diff")
struct DiffTests {
    /// The diff by brute force: every record of both values compared.
    static func modelDiff(_ old: Database, _ new: Database) -> [Key: DatabaseDiff.TableDiff] {
        var result: [Key: DatabaseDiff.TableDiff] = [:]
        for name in Set(old.tableNames + new.tableNames) {
            let before = old[table: name]
            let after = new[table: name]
            var tableDiff = DatabaseDiff.TableDiff(inserted: [], deleted: [], changed: [:])
            for (id, record) in after.records {
                guard let previous = before[id] else {
                    tableDiff.inserted.append(id)
                    continue
                }
                let names = Set(record.names + previous.names).filter { record[$0] != previous[$0] }
                if !names.isEmpty { tableDiff.changed[id] = names.sorted() }
            }
            for (id, _) in before.records where after[id] == nil { tableDiff.deleted.append(id) }
            tableDiff.inserted.sort()
            tableDiff.deleted.sort()
            if !tableDiff.isEmpty { result[name] = tableDiff }
        }
        return result
    }

    @Test("diff matches a brute-force model, and its transaction turns one value into the other")
    func againstModel() throws {
        for seed in UInt64(0)..<300 {
            var generator = RunGenerator(seed: seed)
            let base = generator.base()
            let (_, values) = generator.run(from: base, maxLength: 20)
            let old = values[generator.random.int(below: values.count)]
            let new = values[generator.random.int(below: values.count)]
            let difference = diff(from: old, to: new)
            #expect(difference.tables == Self.modelDiff(old, new), "seed \(seed)")
            #expect(difference.isEmpty == (old.tables == new.tables), "seed \(seed)")
            let transaction = difference.transaction(t: new.basis)
            #expect(try apply(old, transaction) == new, "seed \(seed): diff transaction")
            #expect(diff(from: new, to: old).tables.count == difference.tables.count, "seed \(seed): symmetric")
        }
    }
}
