// swift-tools-version: 6.1
//
// Strata: an embedded database for Swift in which the whole database is an
// immutable value. Layers import downward only:
//
//   strata (executable) ──► StrataCommands ──┐
//   bench (executable) ──────────────────────┤
//   StrataPostgres (CLibPQ) ─────────────────┴──► Strata ──► PersistentCollections ──► CPrefetch (C)
//                                                   │
//                                                   └──► CZstd, CChecksum (C)
//
// The malloc-count micro-benchmarks in `Benchmarks/` (ordo-one/benchmark)
// join the package only with STRATA_MALLOC_GATES=1 (see the end of this
// file), so that this build stays lean.

import PackageDescription

// The `strata` command runs on jemalloc (see Sources/strata/main.swift),
// except in sanitizer builds, which must set STRATA_SANITIZED=1 (as
// `make test-optimized` does): the CLI tests build the command beside them
// and the test bundle links its module, where a second allocator beside
// the sanitizer's fails at the first free. (So an unsanitized test bundle
// runs on jemalloc too.)
let strataAllocator: [Target.Dependency] =
    Context.environment["STRATA_SANITIZED"] == "1" ? [] : ["CJemalloc", "CJemallocOptions"]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "PersistentCollections", targets: ["PersistentCollections"]),
        .library(name: "Strata", targets: ["Strata"]),
        .executable(name: "strata", targets: ["strata"]),
        .executable(name: "bench", targets: ["bench"]),
        .executable(name: "strata-cluster-bench", targets: ["strata-cluster-bench"]),
        .library(name: "StrataPostgres", targets: ["StrataPostgres"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        // The SQLite baseline of the bench's `store` scenario.
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // `make docs`: the DocC catalogs of Strata and PersistentCollections.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: C libraries
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        .systemLibrary(
            name: "CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"]), .brew(["jemalloc"])]
        ),
        // StrataPostgres talks to the server through libpq, PostgreSQL's
        // own client (a few C calls, where a Swift client brought in
        // swift-nio and two copies of BoringSSL: most of CI's build time).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "CChecksum"),
        // A prefetch instruction for the collections' node copies and frees.
        .target(name: "CPrefetch"),
        .target(name: "CBenchmarkSink"),
        .target(name: "CJemallocOptions"),

        // MARK: Support
        // Seeded generator shared by the bench workloads and the property tests.
        .target(name: "DeterministicRandom"),

        // MARK: Libraries
        .target(name: "PersistentCollections", dependencies: ["CPrefetch"]),
        .target(
            name: "Strata",
            dependencies: ["PersistentCollections", "CZstd", "CChecksum"]
        ),

        // A HistoryStorage on PostgreSQL: peers on many hosts share one
        // history. The core does not depend on it.
        .target(
            name: "StrataPostgres",
            dependencies: ["Strata", "CLibPQ"]
        ),

        // The `strata` command's subcommands (a library, so that tests
        // reach its JSON reader and writer).
        .target(
            name: "StrataCommands",
            dependencies: [
                "Strata",
                "PersistentCollections",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // The music library the benchmarks measure, shared by `bench` and
        // `strata-cluster-bench`.
        .target(name: "BenchWorkloads", dependencies: ["Strata", "PersistentCollections", "DeterministicRandom"]),

        // MARK: Executables
        .executableTarget(name: "strata", dependencies: ["StrataCommands"] + strataAllocator),
        .executableTarget(
            name: "bench",
            dependencies: [
                "Strata",
                "PersistentCollections",
                "BenchWorkloads",
                "CJemalloc",
                "CBenchmarkSink",
                "DeterministicRandom",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),

        // The `cluster` scenario's measurements on PostgreSQL, in an
        // executable of its own (also its writer processes), so that the
        // runner and its CI gates build without StrataPostgres and libpq.
        .executableTarget(
            name: "strata-cluster-bench",
            dependencies: [
                "Strata", "StrataPostgres", "BenchWorkloads",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/cluster-bench"
        ),

        // MARK: Tests
        // The child process of the store's crash tests: commits in a loop,
        // reporting each returned commit, until the test kills it.
        .executableTarget(
            name: "StrataCrashWriter",
            dependencies: ["Strata"],
            path: "Tests/StrataCrashWriter"
        ),
        .testTarget(
            name: "PersistentCollectionsTests",
            dependencies: ["PersistentCollections", "DeterministicRandom"]
        ),
        // The writer processes of the PostgreSQL tests, killed by them.
        .executableTarget(
            name: "StrataPostgresWriter",
            dependencies: ["Strata", "StrataPostgres"],
            path: "Tests/StrataPostgresWriter"
        ),
        .testTarget(
            name: "StrataPostgresTests",
            dependencies: ["Strata", "StrataPostgres", "StrataPostgresWriter"]
        ),
        .testTarget(
            name: "StrataTests",
            dependencies: [
                "Strata", "StrataCommands", "PersistentCollections", "DeterministicRandom", "StrataCrashWriter",
                "strata",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `make test-optimized` builds every test target under AddressSanitizer but
// runs only the core's suites: with STRATA_CORE_ONLY=1 the PostgreSQL
// targets (which run in a debug build of their own) and the bench runner
// (GRDB) are left out of that build, a few minutes of CI.
if Context.environment["STRATA_CORE_ONLY"] == "1" {
    let heavy: Set = ["StrataPostgres", "strata-cluster-bench", "StrataPostgresWriter", "StrataPostgresTests", "bench"]
    package.targets.removeAll { heavy.contains($0.name) }
    package.products.removeAll { heavy.contains($0.name) }
}

// `make test`: with STRATA_INTERNAL_CHECKS=1 the collections check their
// invariants inside every mutation (the nodes on the changed path, the
// whole collection when it is small; see
// Sources/PersistentCollections/NodeStorage/_InternalChecks.swift). Builds
// without the variable, the ones apps and the benchmarks use, compile the
// checks out.
if Context.environment["STRATA_INTERNAL_CHECKS"] == "1" {
    for target in package.targets where target.name == "PersistentCollections" {
        target.swiftSettings = (target.swiftSettings ?? []) + [.define("STRATA_INTERNAL_CHECKS")]
    }
}

// `make test` runs the suites of StrataPostgres in a debug build of their
// own: with STRATA_POSTGRES_ONLY=1 it leaves out the core's test targets,
// the `strata` command and the bench runner, which the optimized builds of
// `make test-optimized` and `make perf-gate` compile anyway (several
// minutes of CI on 2 cores).
if Context.environment["STRATA_POSTGRES_ONLY"] == "1" {
    let core: Set = [
        "PersistentCollectionsTests", "StrataTests", "StrataCrashWriter", "StrataCommands", "strata", "bench",
    ]
    package.targets.removeAll { core.contains($0.name) }
    package.products.removeAll { core.contains($0.name) }
}

// `make perf-gate` and `make perf-thresholds`: with STRATA_MALLOC_GATES=1 the
// malloc-count micro-benchmarks in Benchmarks/ (ordo-one/benchmark) are
// targets of this package, so that they link the release build of the
// libraries that the bench runner uses, where a package of their own
// compiled a second copy. Without the variable the package does not depend
// on ordo-one/benchmark.
if Context.environment["STRATA_MALLOC_GATES"] == "1" {
    package.dependencies.append(
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"])
    )
    let benchmarks: [(name: String, library: Target.Dependency)] = [
        ("CodecBenchmarks", "Strata"),
        ("PersistentMapBenchmarks", "PersistentCollections"),
        ("PersistentSortedBenchmarks", "PersistentCollections"),
        ("PersistentVectorBenchmarks", "PersistentCollections"),
    ]
    for benchmark in benchmarks {
        package.targets.append(
            .executableTarget(
                name: benchmark.name,
                dependencies: [benchmark.library, .product(name: "Benchmark", package: "benchmark")],
                path: "Benchmarks/\(benchmark.name)",
                plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
            )
        )
    }
}
