import Benchmark
import PersistentCollections

/// Allocation gates for PersistentVector: reads and in-place writes allocate
/// nothing, appends allocate one leaf per 32 elements, a kept-version update
/// copies one node per level, and concatenation touches O(log n) nodes.
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
    var built = PersistentVector<Int>()
    for i in 0..<size { built.append(i) }
    let base = built

    Benchmark("vector_index_1k_in_100k") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(base[(i &* 7_919) % size])
        }
    }

    Benchmark("vector_update_unique_1k_in_100k") { benchmark in
        var vector = PersistentVector<Int>()
        for i in 0..<size { vector.append(i) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            vector[(i &* 7_919) % size] = -i
        }
        benchmark.stopMeasurement()
        blackHole(vector.count)
    }

    // One leaf per 32 appends, plus the occasional new branch.
    Benchmark(
        "vector_append_1k_unique",
        configuration: .init(thresholds: [.mallocCountTotal: .init(absolute: [.p90: 4])])
    ) { benchmark in
        var vector = PersistentVector<Int>()
        for i in benchmark.scaledIterations { vector.append(i) }
        blackHole(vector.count)
    }

    // One node per level (4 at 100k elements) for each kept version.
    Benchmark(
        "vector_update_kept_1k_in_100k",
        configuration: .init(thresholds: [.mallocCountTotal: .init(absolute: [.p90: 100])])
    ) { benchmark in
        var versions: [PersistentVector<Int>] = []
        versions.reserveCapacity(benchmark.scaledIterations.count)
        var current = base
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            versions.append(current)
            current[(i &* 7_919) % size] = -i
        }
        benchmark.stopMeasurement()
        blackHole(versions.count)
    }

    Benchmark("vector_iterate_100k", configuration: .init(scalingFactor: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            var sum = 0
            for x in base { sum &+= x }
            blackHole(sum)
        }
    }

    // Concatenating two halves rebuilds only the seam.
    Benchmark(
        "vector_concat_halves_100k",
        configuration: .init(scalingFactor: .one, thresholds: [.mallocCountTotal: .init(absolute: [.p90: 4])])
    ) { benchmark in
        let left = base.prefix(size / 2)
        let right = base.suffix(from: size / 2)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole((left + right).count)
        }
    }
}
