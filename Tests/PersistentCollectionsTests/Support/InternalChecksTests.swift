import Foundation
import PersistentCollections
import Synchronization
import Testing

/// A key whose hash differs every time it is computed: a broken `Hashable`
/// conformance, which a map cannot notice until it rehashes a stored key.
struct DriftingKey: Hashable {
    static let draws = Atomic<Int>(0)
    let id: Int

    static func == (a: DriftingKey, b: DriftingKey) -> Bool { a.id == b.id }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(Self.draws.add(1, ordering: .relaxed).newValue)
    }
}

/// An element whose order answers at random: a broken `Comparable`
/// conformance, which leaves a set's leaves out of order.
struct CoinFlipElement: Comparable {
    let id: Int

    static func < (a: CoinFlipElement, b: CoinFlipElement) -> Bool { Bool.random() }
    static func == (a: CoinFlipElement, b: CoinFlipElement) -> Bool { a.id == b.id }
}

/// The build flag behind the checks inside every mutation: `make test`
/// builds and runs the tests with STRATA_INTERNAL_CHECKS=1, and then every
/// mutation checks the nodes it changed (see `_InternalChecks.swift`).
@Suite("Invariant checks inside every mutation")
struct InternalChecksTests {
    static var checking: Bool { PersistentMap<Int, Int>._isConsistencyCheckingEnabled }

    @Test("a test run with STRATA_INTERNAL_CHECKS=1 runs a build that checks every mutation")
    func theFlagReachesTheBuild() {
        let requested = ProcessInfo.processInfo.environment["STRATA_INTERNAL_CHECKS"] == "1"
        #expect(PersistentMap<Int, Int>._isConsistencyCheckingEnabled == requested)
        #expect(PersistentVector<Int>._isConsistencyCheckingEnabled == requested)
        #expect(PersistentSortedSet<Int>._isConsistencyCheckingEnabled == requested)
    }

    // A map or a set with a broken conformance stays memory-safe without
    // the checks (wrong answers, no trap); with them, the first insert
    // whose node holds a key that now hashes or orders differently traps.

    @Test("a key whose hash drifts traps inside an insert", .enabled(if: checking))
    func driftingHashTraps() async {
        await #expect(processExitsWith: .failure) {
            var map = PersistentMap<DriftingKey, Int>()
            for id in 0..<64 { map[DriftingKey(id: id)] = id }
        }
    }

    @Test("an order that answers at random traps inside an insert", .enabled(if: checking))
    func randomOrderTraps() async {
        await #expect(processExitsWith: .failure) {
            var set = PersistentSortedSet<CoinFlipElement>()
            for id in 0..<64 { set.insert(CoinFlipElement(id: id)) }
        }
    }

    @Test("large collections are checked along each mutation's path, and pass", arguments: [300, 5_000])
    func largeCollectionsPassTheirPathChecks(count: Int) {
        var map = PersistentMap<Int, Int>()
        var set = PersistentSortedSet<Int>()
        var vector = PersistentVector<Int>()
        for i in 0..<count {
            map[i &* 7_919] = i
            set.insert(i &* 7_919 % 10_007)
            vector.append(i)
        }
        let kept = (map, set, vector)
        for i in stride(from: 0, to: count, by: 3) {
            map[i &* 7_919] = nil
            set.remove(i &* 7_919 % 10_007)
            vector[i] = -i
        }
        vector = vector.subrange(count / 3..<count) + kept.2.prefix(count / 2)
        map._invariantCheck()
        set._invariantCheck()
        vector._invariantCheck()
        kept.0._invariantCheck()
        kept.1._invariantCheck()
        #expect(map.count == count - (count + 2) / 3)
        #expect(vector.count == count - count / 3 + count / 2)
        #expect(kept.0.count == count && kept.2.count == count)
    }
}
