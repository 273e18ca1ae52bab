import PersistentCollections
import Testing

/// Small windows of tall vectors: a cut on each side of a boundary of the
/// root rebuilds both edges, which must not leave the window as tall as
/// the vector it came from (found by a cold review).
@Suite("PersistentVector windows across the root's boundaries")
struct PersistentVectorWindowTests {
    @Test(
        "a window across a boundary of each level keeps the height bound, and so do edits of it",
        arguments: [1_024, 32_768, 1 << 20]
    )
    func windowAcrossBoundary(boundary: Int) {
        let vector = PersistentVectorModelTests.make(boundary + 1_100, from: 0)
        vector._invariantCheck()
        for width in [2, 3, 33, 200, 1_100] {
            for before in [1, width / 2, width - 1] where before >= 1 && before < width && before <= boundary {
                let range = (boundary - before)..<(boundary - before + width)
                let window = vector.subrange(range)
                PersistentVectorModelTests.check(window, Array(range), "window \(range)")
                // Edits and further windows of the window.
                var edited = window
                edited.remove(at: edited.count / 2)
                edited.insert(-1, at: 1)
                edited.append(-2)
                var model = Array(range)
                model.remove(at: model.count / 2)
                model.insert(-1, at: 1)
                model.append(-2)
                PersistentVectorModelTests.check(edited, model, "edited window \(range)")
                let inner = window.subrange(1..<(window.count - 1))
                PersistentVectorModelTests.check(inner, Array(range.dropFirst().dropLast()), "inner of \(range)")
                PersistentVectorModelTests.check(window + inner, Array(range) + Array(inner), "joined \(range)")
            }
        }
    }

    @Test("a window reaching the end shares the tail, and edits of either leave the other as it was")
    func windowSharingTail() {
        for count in [5, 32, 33, 40, 1_000, 1_056, 33_000] {
            let vector = PersistentVectorModelTests.make(count, from: 0)
            for start in Set([0, 1, count / 2, count - 1, Swift.max(0, count - 32), Swift.max(0, count - 33)]) {
                var window = vector.subrange(start..<count)
                var original = vector
                // Appends fill the shared tail's free room, or push it when full.
                for k in 0..<40 { window.append(-k - 1) }
                window[window.count - 41] = -100
                original.append(-200)
                original[count - 1] = -300
                var windowModel = Array(start..<count) + (0..<40).map { -$0 - 1 }
                windowModel[windowModel.count - 41] = -100
                var originalModel = Array(0..<count) + [-200]
                originalModel[count - 1] = -300
                PersistentVectorModelTests.check(window, windowModel, "window from \(start) of \(count), edited")
                PersistentVectorModelTests.check(original, originalModel, "vector of \(count), edited")
                PersistentVectorModelTests.check(vector, Array(0..<count), "vector of \(count), unedited")
            }
        }
    }

    @Test(
        "windows across boundaries, joined in random orders, stay within the height bound",
        arguments: [UInt64(7), 8]
    )
    func joinedWindows(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let vector = PersistentVectorModelTests.make(3 * 32_768 + 500, from: 0)
        for round in 0..<10 {
            var joined = PersistentVector<Int>()
            var model: [Int] = []
            for _ in 0..<40 {
                let boundary = 32_768 * (1 + random.int(below: 2))
                let lower = boundary - 1 - random.int(below: 40)
                let upper = boundary + 1 + random.int(below: 40)
                let piece = vector.subrange(lower..<upper)
                if random.chance(50) {
                    joined = joined + piece
                    model += Array(lower..<upper)
                } else {
                    joined = piece + joined
                    model = Array(lower..<upper) + model
                }
                joined._invariantCheck()
            }
            PersistentVectorModelTests.check(joined, model, "round \(round), seed \(seed)")
        }
    }
}
