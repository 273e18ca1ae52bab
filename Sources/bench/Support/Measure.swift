import CBenchmarkSink

/// Timing helpers. Each figure is the median of several samples; the
/// result of every measured closure goes through `strata_sink` so the
/// optimizer cannot delete the work.
enum Measure {
    /// Nanoseconds taken by one call of `body`.
    static func nanoseconds<R>(_ body: () throws -> R) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var result = try body()
        let elapsed = clock.now - start
        consume(&result)
        return nanoseconds(of: elapsed)
    }

    /// Nanoseconds taken by one call of async `body`.
    static func nanoseconds<R>(_ body: () async throws -> R) async rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var result = try await body()
        let elapsed = clock.now - start
        consume(&result)
        return nanoseconds(of: elapsed)
    }

    static func nanoseconds(of duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }

    /// The median of `samples` timings of `body`, in nanoseconds.
    static func median<R>(samples: Int, _ body: () throws -> R) rethrows -> Double {
        var times: [Double] = []
        for _ in 0..<max(samples, 1) {
            times.append(try nanoseconds(body))
        }
        return Statistics.median(times)
    }

    /// Hands `value`'s bytes to an opaque C function.
    static func consume<T>(_ value: inout T) {
        withUnsafeBytes(of: &value) { strata_sink($0.baseAddress, $0.count) }
    }
}

/// Order statistics over samples.
enum Statistics {
    static func median(_ values: [Double]) -> Double {
        percentile(values, 50)
    }

    /// The `p`-th percentile (nearest rank) of `values`; 0 for no values.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}
