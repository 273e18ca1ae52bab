import PersistentCollections
import Testing

/// Appends push a full tail down the tree's right edge to the deepest
/// branch with a free slot, copying the shared nodes on the way. These cut
/// and join vectors so that the edge ends at every kind of node (a partial
/// leaf, a relaxed branch, a full branch at each height), keep the
/// original, then append to both: each must read as its model, and the
/// counted elements must all be freed at the end.
@Suite("PersistentVector appends after cuts and joins")
struct PersistentVectorAppendTests {
    /// Whether `vector` holds the elements `model` names, read through
    /// both the iterator and the subscript, with its invariants intact.
    static func matches(_ vector: PersistentVector<Tracked>, _ model: [ObjectIdentifier]) -> Bool {
        vector._invariantCheck()
        guard vector.count == model.count else { return false }
        guard vector.map(ObjectIdentifier.init).elementsEqual(model) else { return false }
        return stride(from: 0, to: model.count, by: 97).allSatisfy { ObjectIdentifier(vector[$0]) == model[$0] }
    }

    /// The element counts where a level of the tree fills up, and one
    /// either side.
    static let boundaries = [1, 31, 32, 33, 1_023, 1_024, 1_025, 1_056, 32_767, 32_768, 32_769, 40_000, 69_999]

    @Test("appends after prefix, suffix and subrange, to the cut and to the kept original")
    func afterCuts() {
        let life = LiveCount()
        do {
            let elements = (0..<70_000).map { _ in Tracked(life) }
            let ids = elements.map(ObjectIdentifier.init)
            let base = PersistentVector(elements)
            for cut in Self.boundaries {
                let windows: [(String, Range<Int>)] = [
                    ("prefix", 0..<cut), ("suffix", cut..<70_000), ("subrange", (cut / 3)..<cut),
                ]
                for (label, range) in windows {
                    let kept: PersistentVector<Tracked> =
                        switch label {
                        case "prefix": base.prefix(cut)
                        case "suffix": base.suffix(from: cut)
                        default: base.subrange(range)
                        }
                    var cutModel = Array(ids[range])
                    var grown = kept
                    // 2,100 appends: 65 pushes, into more than one branch.
                    for _ in 0..<2_100 {
                        let element = Tracked(life)
                        grown.append(element)
                        cutModel.append(ObjectIdentifier(element))
                    }
                    var other = kept
                    var otherModel = Array(ids[range])
                    for _ in 0..<1_100 {
                        let element = Tracked(life)
                        other.append(element)
                        otherModel.append(ObjectIdentifier(element))
                    }
                    #expect(Self.matches(grown, cutModel), "\(label) at \(cut): appended")
                    #expect(Self.matches(other, otherModel), "\(label) at \(cut): appended to the kept copy")
                    #expect(Self.matches(kept, Array(ids[range])), "\(label) at \(cut): kept copy changed")
                }
            }
            #expect(Self.matches(base, ids), "the vector cut from changed")
        }
        #expect(life.live == 0, "\(life.live) elements outlived every vector")
    }

    @Test("appends after joins of every size pair, with both halves kept")
    func afterJoins() {
        let life = LiveCount()
        do {
            for leftCount in [1, 31, 33, 1_000, 1_057, 33_000] {
                for rightCount in [33, 100, 1_025, 40_000] {
                    let left = PersistentVector((0..<leftCount).map { _ in Tracked(life) })
                    let right = PersistentVector((0..<rightCount).map { _ in Tracked(life) })
                    let joined = left + right
                    var model = (Array(left) + Array(right)).map(ObjectIdentifier.init)
                    var grown = joined
                    for _ in 0..<3_000 {
                        let element = Tracked(life)
                        grown.append(element)
                        model.append(ObjectIdentifier(element))
                    }
                    let context = "\(leftCount) + \(rightCount)"
                    #expect(Self.matches(grown, model), "\(context): appended")
                    #expect(Self.matches(joined, Array(model.prefix(leftCount + rightCount))), "\(context): kept join")
                    #expect(left.count == leftCount && right.count == rightCount, "\(context): halves changed")
                    left._invariantCheck()
                    right._invariantCheck()
                }
            }
        }
        #expect(life.live == 0, "\(life.live) elements outlived every vector")
    }
}
