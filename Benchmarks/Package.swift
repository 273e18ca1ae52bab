// swift-tools-version: 6.1
//
// Micro-benchmarks with malloc-count gates (ordo-one/benchmark), kept out of
// the main package so that `swift build` at the root stays lean.
//   swift package benchmark                       run them
//   ../perf/gate.sh                               check the committed thresholds

import PackageDescription

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Strata", package: "Strata"),
            ],
            path: "Benchmarks/CodecBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "PersistentMapBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PersistentCollections", package: "Strata"),
            ],
            path: "Benchmarks/PersistentMapBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "PersistentSortedBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PersistentCollections", package: "Strata"),
            ],
            path: "Benchmarks/PersistentSortedBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "PersistentVectorBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PersistentCollections", package: "Strata"),
            ],
            path: "Benchmarks/PersistentVectorBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
