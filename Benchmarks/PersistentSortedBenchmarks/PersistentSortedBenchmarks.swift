import Benchmark
import PersistentCollections

/// Allocation gates for the B+tree (PersistentSortedSet and
/// PersistentSortedMap): reads allocate nothing, an update of an unshared
/// map is made in place, and a kept-version update copies the nodes on one
/// path, one allocation per node (a leaf's elements and an internal node's
/// children and counts live in the node's own allocation; separators are a
/// shared array that a path copy does not copy).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.mallocCountTotal],
        warmupIterations: 1,
        scalingFactor: .kilo,
        // Malloc counts repeat exactly: a few iterations decide the gate.
        maxDuration: .seconds(2),
        maxIterations: 10,
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0])]
    )

    let size = 100_000
    let keys = (0..<size).map { $0 * 2 }
    let set = PersistentSortedSet(sortedElements: keys)
    let map = PersistentSortedMap(sortedUniqueKeysWithValues: keys.map { ($0, $0) })

    // 1,000 lookups, ranks and offsets: no allocation.
    Benchmark("sorted_lookup_rank_offset_1k_in_100k") { benchmark in
        for i in benchmark.scaledIterations {
            let key = keys[(i &* 31) % size]
            blackHole(set.contains(key))
            blackHole(set.rank(of: key))
            blackHole(set.element(at: (i &* 17) % size))
            blackHole(map[key])
        }
    }

    // 1,000 updates of existing keys in a uniquely owned map: in place.
    Benchmark("sorted_map_update_unique_1k_in_100k") { benchmark in
        var owned = PersistentSortedMap<Int, Int>()
        for key in keys { owned[key] = key }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            owned[keys[(i &* 31) % size]] = i
        }
        benchmark.stopMeasurement()
        blackHole(owned.count)
    }

    // 1,000 updates, each keeping the previous version: one allocation per
    // level of the path (a leaf and 3 internal levels at 100k: 4,000).
    Benchmark(
        "sorted_map_update_kept_1k_in_100k",
        configuration: .init(thresholds: [.mallocCountTotal: .init(absolute: [.p90: 4_000])])
    ) { benchmark in
        var versions: [PersistentSortedMap<Int, Int>] = []
        versions.reserveCapacity(benchmark.scaledIterations.count)
        var current = map
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            versions.append(current)
            current[keys[(i &* 31) % size]] = -i
        }
        benchmark.stopMeasurement()
        blackHole(versions.count)
    }

    // Iterating 100k elements: no allocation beyond the cursor's path.
    Benchmark(
        "sorted_set_iterate_100k",
        configuration: .init(scalingFactor: .one, thresholds: [.mallocCountTotal: .init(absolute: [.p90: 2])])
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            var sum = 0
            for element in set { sum &+= element }
            blackHole(sum)
        }
    }
}
