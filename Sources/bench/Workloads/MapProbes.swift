import DeterministicRandom

/// The state and timed operations for one map type of the `map` scenario,
/// measured one sample at a time so that the scenario can interleave
/// subjects.
final class MapProbes<S: MapSubject> {
    static var metrics: [(name: String, unit: String)] {
        [
            ("build by insert", "ns"), ("bulk build", "ns"), ("lookup hit", "ns"), ("lookup miss", "ns"),
            ("update, old version kept", "ns"), ("remove", "ns"), ("iteration", "ns"),
            ("equality, one key differs", "ns"),
        ]
    }

    let keys: [S.Key]
    let misses: [S.Key]
    let probes: [S.Key]
    let entries: [(S.Key, Int)]
    let updateKeys: [S.Key]
    let built: S
    let other: S

    init(keys: [S.Key], misses: [S.Key], probes: [S.Key]) {
        self.keys = keys
        self.misses = misses
        self.probes = probes
        entries = keys.enumerated().map { ($0.element, $0.offset) }
        var map = S()
        for (i, key) in keys.enumerated() { map.set(key, i) }
        built = map
        var changed = map
        changed.set(keys[keys.count / 2], -1)
        other = changed
        // Dictionary copies everything per kept version, so it keeps fewer.
        let chain = S.name == "Dictionary" ? max(5, min(1_000, 40_000_000 / (keys.count * 40))) : 10_000
        var random = SplitMix64(seed: 99)
        updateKeys = (0..<chain).map { _ in keys[Int(random.next() % UInt64(keys.count))] }
    }

    /// Runs one sample of `metric`; returns nanoseconds per operation.
    func sample(_ metric: String) throws -> Double {
        let n = Double(keys.count)
        switch metric {
        case "build by insert":
            var map = S()
            let ns = Measure.nanoseconds {
                for (i, key) in keys.enumerated() { map.set(key, i) }
                return map.count
            }
            guard map.count == keys.count else {
                throw BenchError.verificationFailed("\(S.name) built \(map.count) of \(keys.count) entries")
            }
            return ns / n
        case "bulk build":
            return Measure.nanoseconds { S(bulk: entries).count } / n
        case "lookup hit":
            return Measure.nanoseconds {
                var found = 0
                for key in probes { found &+= built.lookup(key) ?? 0 }
                return found
            } / Double(probes.count)
        case "lookup miss":
            return Measure.nanoseconds {
                var found = 0
                for key in misses { found &+= built.lookup(key) ?? 1 }
                return found
            } / Double(misses.count)
        case "update, old version kept":
            var versions: [S] = []
            versions.reserveCapacity(updateKeys.count)
            var current = built
            let ns = Measure.nanoseconds {
                for (i, key) in updateKeys.enumerated() {
                    versions.append(current)
                    current.set(key, -i)
                }
                return current.count
            }
            return ns / Double(updateKeys.count)
        case "remove":
            var victim = S(bulk: entries)
            let removals = probes.prefix(max(1, keys.count / 10))
            return Measure.nanoseconds {
                for key in removals { victim.remove(key) }
                return victim.count
            } / Double(removals.count)
        case "iteration":
            return Measure.nanoseconds { built.sumValues() } / n
        case "equality, one key differs":
            return Measure.nanoseconds { S.equal(built, other) ? 1 : 0 }
        default:
            throw BenchError.verificationFailed("unknown map metric \(metric)")
        }
    }

    /// Heap figures, measured once (they do not vary between samples).
    func footprint() -> [String: Double] {
        var map = S()
        let before = MemoryProbe.allocatedBytes()
        for (i, key) in keys.enumerated() { map.set(key, i) }
        let heapPerEntry = Double(MemoryProbe.allocatedBytes() - before) / Double(keys.count)

        var versions: [S] = []
        versions.reserveCapacity(updateKeys.count)
        var current = built
        let chainStart = MemoryProbe.allocatedBytes()
        for (i, key) in updateKeys.enumerated() {
            versions.append(current)
            current.set(key, -i)
        }
        let perVersion = Double(MemoryProbe.allocatedBytes() - chainStart) / Double(updateKeys.count)
        return ["heap bytes per entry": heapPerEntry, "bytes retained per kept version": perVersion]
    }
}
