import Benchmark
import PersistentCollections

/// Allocation gates for PersistentMap. Malloc counts are deterministic (with
/// SWIFT_DETERMINISTIC_HASHING=1, set by perf/gate.sh), so they hold the
/// structural promises: no allocation to update a key of an unshared map or
/// to read, one exact-size copy per level for a kept-version update.
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
    let keys = (0..<size).map { $0 &* 7_919 &+ 13 }
    let base = PersistentMap(uniqueKeysWithValues: keys.map { ($0, $0) })

    // 1,000 lookups: no allocation at all.
    Benchmark("map_lookup_1k_in_100k") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(base[keys[(i &* 31) % size]])
        }
    }

    // 1,000 updates of existing keys in a uniquely owned map: in place, no
    // allocation.
    Benchmark("map_update_unique_1k_in_100k") { benchmark in
        var map = PersistentMap<Int, Int>()
        for i in 0..<size { map[keys[i]] = i }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            map[keys[(i &* 31) % size]] = i
        }
        benchmark.stopMeasurement()
        blackHole(map.count)
    }

    // 1,000 updates, each keeping the previous version: one exact-size copy
    // per node on the path (5 at 100k entries: 16-slot nodes), nothing else.
    Benchmark(
        "map_update_kept_1k_in_100k",
        configuration: .init(thresholds: [.mallocCountTotal: .init(absolute: [.p90: 200])])
    ) { benchmark in
        var versions: [PersistentMap<Int, Int>] = []
        versions.reserveCapacity(benchmark.scaledIterations.count)
        var current = base
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            versions.append(current)
            current[keys[(i &* 31) % size]] = -i
        }
        benchmark.stopMeasurement()
        blackHole(versions.count)
    }

    // Iterating 100k entries: only the iterator's small stack.
    Benchmark("map_iterate_100k", configuration: .init(scalingFactor: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            var sum = 0
            for (_, value) in base { sum &+= value }
            blackHole(sum)
        }
    }

    // Equality of two versions one key apart: shared subtrees are skipped.
    Benchmark("map_equality_one_key_apart", configuration: .init(scalingFactor: .one)) { benchmark in
        var other = base
        other[keys[size / 2]] = -1
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(base == other)
        }
    }
}
