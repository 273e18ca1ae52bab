import Foundation
import Strata
import Testing

/// As-of values reached by walking back from the current value over runs
/// of thousands of changes per table: such runs are applied reversed as
/// they are read, on every core, instead of through a built inverse.
@Suite("Store walk back over large runs")
struct StoreWalkBackTests {
    @Test(
        "walking back over thousands of inserts, updates and deletes gives the published values",
        arguments: [false, true]
    )
    func walkBackOverLargeRuns(indexed: Bool) async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions()
        options.checkpointInterval = 1_000_000
        options.snapshotEveryTransactions = nil
        options.snapshotEveryLogBytes = nil
        options.rebuildBudget = nil
        var store = try await Store.open(at: path, options: options)
        var random = SeededRandom(seed: indexed ? 41 : 40)
        var values = [store.current]
        let first = (0..<3_000).map { id -> Record in
            ["title": .string("Song \(id)"), "plays": .int(0), "album": .string("A\(id % 40)")]
        }
        try await store.transact { builder in
            if indexed { try builder.createIndex("byPlays", on: "songs", fields: ["plays", "title"]) }
            for (id, record) in first.enumerated() { try builder.insert(record, id: RecordID(id), into: "songs") }
        }
        values.append(store.current)
        var live = Set(0..<3_000)
        var next = 3_000
        // Each large run mixes every kind of change, on two tables (one
        // of them always below the size applied on every core).
        for round in 1...4 {
            let ids = live.sorted().shuffled(using: &random)
            let updates = ids.prefix(1_500).map { id -> (Int, Patch) in
                let plays = Int64(random.int(below: 1_000))
                let patch =
                    random.int(below: 4) == 0
                    ? Patch([.unset("album"), .set("plays", .int(plays))])
                    : Patch([.set("plays", .int(plays)), .set("title", .string("Song \(id) take \(round)"))])
                return (id, patch)
            }
            let deletes = Array(ids.suffix(600))
            let inserts = Array(next..<(next + 900))
            live.subtract(deletes)
            live.formUnion(inserts)
            next += 900
            try await store.transact { builder in
                for (id, patch) in updates { try builder.update(RecordID(id), in: "songs", patch) }
                for id in deletes { try builder.delete(RecordID(id), from: "songs") }
                for id in inserts {
                    try builder.insert(
                        ["title": .string("New \(id)"), "plays": .int(1)],
                        id: RecordID(id),
                        into: "songs"
                    )
                }
                for k in 0..<50 {
                    try builder.upsert(
                        ["round": .int(Int64(round)), "k": .int(Int64(k))],
                        id: RecordID(k),
                        into: "albums"
                    )
                }
            }
            values.append(store.current)
        }
        let now = Int64(values.count - 1)
        // Reopened, the store has no checkpoints: the current value is the
        // cheapest start for the last few t.
        try await store.close()
        store = try await Store.open(at: path, options: options)
        var walkedBack = 0
        for t in (0..<now).reversed() {
            let plan = try await store.rebuildPlan(for: t)
            if plan.start == .current { walkedBack += 1 }
            let rebuilt = try await store.database(asOf: t)
            #expect(rebuilt == values[Int(t)], "t \(t) from \(plan.start)")
            #expect(rebuilt.basis == t)
            if indexed, t > 0 {
                // The index entries follow the records: songs of a few play
                // counts, through the index, against the records themselves.
                for plays in [0, 1, Int64(random.int(below: 1_000))] {
                    let found = try rebuilt.query("songs").where("plays", equals: .int(plays)).ids()
                    var model: [(title: String, id: RecordID)] = []
                    for (id, record) in values[Int(t)][table: "songs"] where record["plays"] == .int(plays) {
                        guard case .string(let title) = record["title"] else { continue }
                        model.append((title, id))
                    }
                    model.sort { $0.title == $1.title ? $0.id < $1.id : $0.title < $1.title }
                    #expect(found == model.map(\.id), "t \(t), plays \(plays)")
                }
            }
        }
        #expect(walkedBack >= 2, "no t was rebuilt by walking back from the current value")
        try await store.close()
    }
}
