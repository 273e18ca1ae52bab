import PersistentCollections
import Testing

/// Random operation sequences against `Array`, keeping earlier versions to
/// check that no mutation leaks into a kept copy.
@Suite("PersistentVector against an Array model")
struct PersistentVectorModelTests {
    static func check(_ vector: PersistentVector<Int>, _ model: [Int], _ context: @autoclosure () -> String) {
        vector._invariantCheck()
        #expect(vector.count == model.count, "count, \(context())")
        #expect(Array(vector) == model, "contents, \(context())")
        // Every element through the subscript (a descent of its own, not
        // the iterator's walk), and the first that differs named.
        if let index = model.indices.first(where: { vector[$0] != model[$0] }) {
            Issue.record("index \(index): \(vector[index]) against \(model[index]), \(context())")
        }
    }

    /// A vector of `count` elements built by appends, starting at `start`.
    static func make(_ count: Int, from start: Int) -> PersistentVector<Int> {
        var vector = PersistentVector<Int>()
        for i in 0..<count { vector.append(start + i) }
        return vector
    }

    @Test("random append, update, insert, remove, concat, split and replace", arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func randomSequences(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var vector = PersistentVector<Int>()
        var model: [Int] = []
        var kept: [(PersistentVector<Int>, [Int])] = []
        var next = 0
        let context = { (step: Int, op: String) in "seed \(seed) step \(step) (\(op))" }
        for step in 0..<1_500 {
            var op = ""
            switch random.int(below: 100) {
            case 0..<25:
                op = "append"
                for _ in 0..<(1 + random.int(below: 80)) {
                    vector.append(next)
                    model.append(next)
                    next += 1
                }
            case 25..<40 where !model.isEmpty:
                op = "update"
                let i = random.int(below: model.count)
                vector[i] = -next
                model[i] = -next
                next += 1
            case 40..<50:
                op = "insert"
                let i = random.int(below: model.count + 1)
                vector.insert(next, at: i)
                model.insert(next, at: i)
                next += 1
            case 50..<58 where !model.isEmpty:
                op = "remove"
                let i = random.int(below: model.count)
                #expect(vector.remove(at: i) == model.remove(at: i), "\(context(step, op))")
            case 58..<72:
                op = "concat"
                let length = [0, 1, 31, 32, 33, 100, 1_000, 1_500][random.int(below: 8)]
                let other = Self.make(length, from: next)
                vector += other
                model += Array(next..<(next + length))
                next += length
            case 72..<82 where !model.isEmpty:
                op = "split"
                let a = random.int(below: model.count + 1)
                let b = a + random.int(below: model.count - a + 1)
                vector = vector.subrange(a..<b)
                model = Array(model[a..<b])
            case 82..<88:
                op = "split and rejoin"
                let cut = random.int(below: model.count + 1)
                vector = vector.prefix(cut) + vector.suffix(from: cut)
            case 88..<94 where !model.isEmpty:
                op = "replaceSubrange"
                let a = random.int(below: model.count + 1)
                let b = a + random.int(below: Swift.min(model.count - a, 50) + 1)
                let replacement = Array(next..<(next + random.int(below: 40)))
                next += replacement.count
                vector.replaceSubrange(a..<b, with: replacement)
                model.replaceSubrange(a..<b, with: replacement)
            case 94..<97:
                op = "self-concat"
                vector = vector + vector
                model = model + model
                if model.count > 40_000 {
                    vector = vector.prefix(20_000)
                    model = Array(model.prefix(20_000))
                }
            default:
                op = "keep"
                kept.append((vector, model))
            }
            if step % 25 == 0 { Self.check(vector, model, context(step, op)) }
        }
        Self.check(vector, model, "seed \(seed), end")
        for (index, version) in kept.enumerated() {
            Self.check(version.0, version.1, "kept version \(index), seed \(seed)")
        }
    }

    @Test("long chains of concat and split build deep relaxed trees that still index correctly")
    func deepRelaxedTrees() {
        var random = SeededRandom(seed: 42)
        var vector = Self.make(5_000, from: 0)
        var model = Array(0..<5_000)
        for round in 0..<400 {
            let a = random.int(below: model.count)
            let b = a + random.int(below: model.count - a + 1)
            let piece = vector.subrange(a..<b)
            let pieceModel = Array(model[a..<b])
            if random.chance(50) {
                vector = piece + vector
                model = pieceModel + model
            } else {
                vector = vector + piece
                model = model + pieceModel
            }
            if model.count > 60_000 {
                let start = random.int(below: model.count - 30_000)
                vector = vector.subrange(start..<(start + 30_000))
                model = Array(model[start..<(start + 30_000)])
            }
            if round % 40 == 0 {
                Self.check(vector, model, "round \(round)")
                for _ in 0..<200 {
                    let i = random.int(below: model.count)
                    #expect(vector[i] == model[i], "round \(round) index \(i)")
                }
            }
        }
        Self.check(vector, model, "end")
    }

    @Test(
        "a relaxed tree joined below regular branches indexes through both",
        arguments: [1, 31, 33, 1_000, 32 * 32 + 5, 32 * 32 * 32 + 77]
    )
    func relaxedBelowRegular(relaxedLength: Int) {
        // A relaxed subtree (a split and rejoin) followed by appends: the
        // tree grows above it, and its regular ancestors leave in the
        // index the digits of their levels, which the relaxed branches
        // must drop before searching their size tables.
        var random = SeededRandom(seed: UInt64(relaxedLength))
        for prefixLength in [0, 32 * 32, 32 * 32 * 32, 40_000] {
            var model = Array(0..<prefixLength)
            var vector = Self.make(prefixLength, from: 0)
            let cut = relaxedLength / 3
            let piece = Self.make(relaxedLength, from: prefixLength)
            vector += piece.prefix(cut) + Self.make(7, from: -7) + piece.suffix(from: cut)
            model +=
                Array(prefixLength..<(prefixLength + cut)) + Array(-7..<0)
                + Array((prefixLength + cut)..<(prefixLength + relaxedLength))
            for _ in 0..<(32 * 32 * 3 + random.int(below: 32 * 32)) {
                vector.append(model.count)
                model.append(model.count)
            }
            Self.check(vector, model, "relaxed \(relaxedLength) after \(prefixLength)")
        }
    }

    @Test(
        "edges: empty, one, and multiples of 32 and 1024 around the tail",
        arguments: [0, 1, 2, 31, 32, 33, 63, 64, 65, 1_023, 1_024, 1_025, 1_056, 1_057, 32_768, 32_800, 32_801]
    )
    func edges(count: Int) {
        var vector = PersistentVector<Int>()
        for i in 0..<count { vector.append(i) }
        Self.check(vector, Array(0..<count), "count \(count)")
        let before = vector
        if count > 0 {
            vector[count - 1] = -1
            vector[0] = -2
            #expect(before[0] == 0 && before[count - 1] == count - 1, "persistence at count \(count)")
        }
        for cut in Set([0, count / 2, count, Swift.max(0, count - 32), Swift.min(count, 32)]) {
            let left = before.prefix(cut)
            let right = before.suffix(from: cut)
            Self.check(left, Array(0..<cut), "prefix \(cut) of \(count)")
            Self.check(right, Array(cut..<count), "suffix from \(cut) of \(count)")
            Self.check(left + right, Array(0..<count), "rejoined at \(cut) of \(count)")
        }
        var grown = before
        grown.append(contentsOf: before)
        Self.check(grown, Array(0..<count) + Array(0..<count), "doubled \(count)")
    }
}

@Suite("PersistentVector concatenation plan")
struct PersistentVectorConcatPlanTests {
    @Test("the plan keeps slot order and totals, fills to at most 32, and ends within 2 nodes of optimal")
    func planBound() {
        var random = SeededRandom(seed: 9)
        for trial in 0..<5_000 {
            let n = 1 + random.int(below: 64)
            let counts = (0..<n).map { _ in 1 + random.int(below: 32) }
            let plan = PersistentVector<Int>._concatenationPlan(counts)
            let total = counts.reduce(0, +)
            let optimal = (total + 31) / 32
            #expect(plan.reduce(0, +) == total, "trial \(trial): \(counts)")
            #expect(plan.allSatisfy { $0 >= 1 && $0 <= 32 }, "trial \(trial): \(counts) -> \(plan)")
            #expect(plan.count <= n, "trial \(trial): the plan never adds nodes")
            #expect(
                plan.count <= Swift.max(n <= optimal + 2 ? n : 0, optimal + 2),
                "trial \(trial): \(counts) -> \(plan)"
            )
        }
    }
}
