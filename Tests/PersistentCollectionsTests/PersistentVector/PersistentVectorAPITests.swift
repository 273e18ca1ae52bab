import Foundation
import PersistentCollections
import Testing

@Suite("PersistentVector API")
struct PersistentVectorAPITests {
    @Test("literals, collection protocols and descriptions")
    func basics() {
        let empty: PersistentVector<Int> = []
        #expect(empty.isEmpty && empty.count == 0 && Array(empty) == [])
        #expect(empty.description == "[]")
        let songs: PersistentVector = ["a", "b", "c"]
        #expect(songs.count == 3 && songs[1] == "b" && songs.first == "a" && songs.last == "c")
        #expect(songs.description == #"["a", "b", "c"]"#)
        #expect(songs.debugDescription == #"PersistentVector<String>(["a", "b", "c"])"#)
        #expect(Array(songs.reversed()) == ["c", "b", "a"])
        #expect(songs.firstIndex(of: "c") == 2)
        var sorted = PersistentVector([5, 3, 9, 1])
        sorted.sort()
        #expect(Array(sorted) == [1, 3, 5, 9])
        sorted.swapAt(0, 3)
        #expect(Array(sorted) == [9, 3, 5, 1])
        #expect(sorted.removeLast() == 1 && sorted.count == 3)
        let prefix: PersistentVector<Int> = sorted.prefix(2)
        #expect(Array(prefix) == [9, 3])
        let suffix: PersistentVector<Int> = sorted.suffix(2)
        #expect(Array(suffix) == [3, 5])
    }

    @Test("equality and hashing, including shared leaves")
    func equality() {
        let a = PersistentVector(0..<5_000)
        var b = a
        #expect(a == b)
        b[4_000] = -1
        #expect(a != b)
        b[4_000] = 4_000
        #expect(a == b && a.hashValue == b.hashValue)
        let rebuilt = PersistentVector(0..<2_500) + PersistentVector(2_500..<5_000)
        #expect(rebuilt == a && rebuilt.hashValue == a.hashValue)
        #expect(PersistentVector(0..<4_999) != a)
        #expect(Set([a, b, rebuilt]).count == 1)
    }

    @Test("Codable round trip")
    func codable() throws {
        let vector = PersistentVector((0..<3_000).map { "song \($0)" })
        let data = try JSONEncoder().encode(vector)
        let back = try JSONDecoder().decode(PersistentVector<String>.self, from: data)
        #expect(back == vector)
        back._invariantCheck()
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PersistentVector<Int>.self, from: Data(#"[1, "x"]"#.utf8))
        }
    }

    @Test("class elements are retained and released exactly")
    func ownership() {
        final class Tracked {
            nonisolated(unsafe) static var alive = 0
            init() { Tracked.alive += 1 }
            deinit { Tracked.alive -= 1 }
        }
        do {
            var vector = PersistentVector<Tracked>()
            for _ in 0..<3_000 { vector.append(Tracked()) }
            let copy = vector
            vector[10] = Tracked()
            vector = vector.subrange(100..<2_900) + copy.prefix(500)
            vector.remove(at: 7)
            vector.insert(Tracked(), at: 1_000)
            #expect(Tracked.alive > 0)
            vector._invariantCheck()
        }
        #expect(Tracked.alive == 0)
    }

    @Test("forEachChunk visits every element once, in order")
    func chunks() {
        let vector = PersistentVector(0..<1_000).suffix(from: 17) + PersistentVector(1_000..<2_000)
        var seen: [Int] = []
        vector.forEachChunk { seen.append(contentsOf: $0) }
        #expect(seen == Array(17..<2_000))
    }

    @Test("isIdentical: a vector and its unchanged copies, not an equal vector built apart nor a changed copy")
    func identity() {
        for count in [0, 1, 33, 2_000] {
            let vector = PersistentVector(0..<count)
            let copy = vector
            #expect(vector.isIdentical(to: copy))
            #expect(!vector.isIdentical(to: PersistentVector(0..<count)) || count == 0)
            var changed = copy
            changed.append(-1)
            #expect(!vector.isIdentical(to: changed))
            if count > 0 {
                var replaced = copy
                replaced[count / 2] = -1
                #expect(!vector.isIdentical(to: replaced))
                #expect(vector.isIdentical(to: copy))
            }
        }
    }
}
