import DeterministicRandom
import PersistentCollections

/// `vector`: PersistentVector<Int64> beside Array<Int64>, measured in this
/// run with interleaved samples, at each record count.
struct VectorScenario {
    static let name = "vector"

    struct Row {
        var metric: String
        var unit: String
        var vector: Double
        var array: Double
        /// What the goal compares: "ratio" (vector / array) or "absolute".
        var goal: String
    }

    func run(_ context: BenchContext, sizes: [Int]) throws {
        for size in sizes {
            try measure(context, size: size)
        }
    }

    func measure(_ context: BenchContext, size: Int) throws {
        let label = "vector: Int64, \(MapScenario.sizeLabel(size)) elements"
        let samples = context.quick ? 3 : 5
        let big = size >= 1_000_000
        var random = SplitMix64(seed: context.seed ^ 0x5EC7 ^ UInt64(size))
        let probes = (0..<200_000).map { _ in Int(random.next() % UInt64(size)) }
        let values = (0..<size).map { Int64($0) }

        var vector = PersistentVector<Int64>()
        for v in values { vector.append(v) }
        let array = values

        var rows: [Row] = []
        func interleave(_ metric: String, _ goal: String, _ a: () throws -> Double, _ b: () throws -> Double) rethrows {
            context.progress.update("\(label): \(metric)")
            var va: [Double] = []
            var vb: [Double] = []
            for _ in 0..<samples {
                va.append(try a())
                vb.append(try b())
            }
            rows.append(
                Row(metric: metric, unit: "ns", vector: Statistics.median(va), array: Statistics.median(vb), goal: goal)
            )
        }

        interleave("append, unique owner", big ? "<= 1.2x" : "") {
            var v = PersistentVector<Int64>()
            return Measure.nanoseconds {
                for x in values { v.append(x) }
                return v.count
            } / Double(size)
        } _: {
            var a: [Int64] = []
            return Measure.nanoseconds {
                for x in values { a.append(x) }
                return a.count
            } / Double(size)
        }
        interleave("random index", big ? "<= 3x" : "") {
            Measure.nanoseconds {
                var sum: Int64 = 0
                for i in probes { sum &+= vector[i] }
                return sum
            } / Double(probes.count)
        } _: {
            Measure.nanoseconds {
                var sum: Int64 = 0
                for i in probes { sum &+= array[i] }
                return sum
            } / Double(probes.count)
        }
        interleave("iteration", big ? "<= 10x" : "") {
            Measure.nanoseconds {
                var sum: Int64 = 0
                for x in vector { sum &+= x }
                return sum
            } / Double(size)
        } _: {
            Measure.nanoseconds {
                var sum: Int64 = 0
                for x in array { sum &+= x }
                return sum
            } / Double(size)
        }

        // Update one element, keeping every old version alive. Array copies
        // everything per version, so it keeps fewer.
        let chain = 10_000
        let arrayChain = max(5, min(1_000, 400_000_000 / (size * 8 * 10)))
        let updates = (0..<chain).map { _ in Int(random.next() % UInt64(size)) }
        interleave("update one, old version kept", big ? "<= 1/250 (0.004x)" : "") {
            var versions: [PersistentVector<Int64>] = []
            versions.reserveCapacity(chain)
            var current = vector
            return Measure.nanoseconds {
                for (n, i) in updates.enumerated() {
                    versions.append(current)
                    current[i] = Int64(-n)
                }
                return current.count
            } / Double(chain)
        } _: {
            var versions: [[Int64]] = []
            versions.reserveCapacity(arrayChain)
            var current = array
            return Measure.nanoseconds {
                for n in 0..<arrayChain {
                    versions.append(current)
                    current[updates[n]] = Int64(-n)
                }
                return current.count
            } / Double(arrayChain)
        }
        let vectorBytes = bytesPerVersion(vector, updates)
        let arrayBytes = bytesPerVersion(array, Array(updates.prefix(arrayChain)))

        // Structural operations are timed as loops over the same input (warm
        // caches, as a repeated operation sees them), each result dropped.
        let repeats = 200
        let arrayRepeats = max(1, 2_000_000 / size)
        interleave("insert in the middle", big ? "<= 3 µs" : "") {
            Measure.nanoseconds {
                var total = 0
                for _ in 0..<repeats {
                    var copy = vector
                    copy.insert(-1, at: size / 2)
                    total &+= copy.count
                }
                return total
            } / Double(repeats)
        } _: {
            var copy = array
            copy.reserveCapacity(size + arrayRepeats)
            return Measure.nanoseconds {
                for _ in 0..<arrayRepeats { copy.insert(-1, at: size / 2) }
                return copy.count
            } / Double(arrayRepeats)
        }
        let left = vector.prefix(size / 2)
        let right = vector.suffix(from: size / 2)
        let leftArray = Array(array[..<(size / 2)])
        let rightArray = Array(array[(size / 2)...])
        interleave("concat of two halves", big ? "<= 2 µs" : "") {
            Measure.nanoseconds {
                var total = 0
                for _ in 0..<repeats { total &+= (left + right).count }
                return total
            } / Double(repeats)
        } _: {
            Measure.nanoseconds {
                var total = 0
                for _ in 0..<arrayRepeats { total &+= (leftArray + rightArray).count }
                return total
            } / Double(arrayRepeats)
        }
        interleave("take + drop", big ? "<= 1.5 µs" : "") {
            Measure.nanoseconds {
                var total = 0
                for _ in 0..<repeats { total &+= vector.prefix(size / 3).count + vector.suffix(from: size / 3).count }
                return total
            } / Double(repeats)
        } _: {
            Measure.nanoseconds {
                var total = 0
                for _ in 0..<arrayRepeats {
                    total &+= Array(array[..<(size / 3)]).count + Array(array[(size / 3)...]).count
                }
                return total
            } / Double(arrayRepeats)
        }

        // Fragment the tree: 1,000 random split/concat operations at constant size.
        context.progress.update("\(label): fragmenting")
        var fragmented = vector
        var model = array
        for _ in 0..<1_000 {
            let a = Int(random.next() % UInt64(size))
            let b = a + Int(random.next() % UInt64(size - a + 1))
            fragmented = fragmented.subrange(a..<b) + fragmented.prefix(a) + fragmented.suffix(from: b)
            if size <= 10_000 { model = Array(model[a..<b]) + Array(model[..<a]) + Array(model[b...]) }
        }
        guard fragmented.count == size, size > 10_000 || Array(fragmented) == model else {
            throw BenchError.verificationFailed("fragmented vector lost elements")
        }
        interleave("random index after 1,000 concat/split", big ? "<= 2x regular" : "") {
            Measure.nanoseconds {
                var sum: Int64 = 0
                for i in probes { sum &+= fragmented[i] }
                return sum
            } / Double(probes.count)
        } _: {
            Measure.nanoseconds {
                var sum: Int64 = 0
                for i in probes { sum &+= vector[i] }
                return sum
            } / Double(probes.count)
        }
        context.progress.done()

        print("\n## \(label)")
        var table = [["metric", "unit", "PersistentVector", "Array", "PV / Array", "goal"]]
        for row in rows {
            let baselineName = row.metric.hasPrefix("random index after") ? "regular tree" : "Array"
            table.append([
                row.metric, row.unit, Report.format(row.vector),
                Report.format(row.array) + (baselineName == "Array" ? "" : " (regular PV)"),
                Report.format(row.vector / row.array) + "x", row.goal,
            ])
            context.report.add(
                Self.name,
                section: label,
                subject: row.metric,
                value: row.vector,
                unit: row.unit,
                baseline: (baselineName, row.array)
            )
        }
        table.append([
            "bytes retained per kept version", "B", Report.format(vectorBytes), Report.format(arrayBytes),
            Report.format(vectorBytes / arrayBytes) + "x", big ? "<= 1.2 KB" : "",
        ])
        context.report.add(
            Self.name,
            section: label,
            subject: "bytes retained per kept version",
            value: vectorBytes,
            unit: "B",
            baseline: ("Array", arrayBytes)
        )
        print(Report.render(table))
        let ratio = { (metric: String) in rows.first { $0.metric == metric }.map { $0.vector / $0.array } ?? .nan }
        if size == 100_000 {
            context.report.gate(
                "vector 100k: update-kept PV/Array",
                measured: ratio("update one, old version kept"),
                .atMost,
                0.05
            )
            context.report.gate("vector 100k: random index PV/Array", measured: ratio("random index"), .atMost, 16)
            context.report.gate(
                "vector 100k: index fragmented/regular",
                measured: ratio("random index after 1,000 concat/split"),
                .atMost,
                8
            )
            context.report.gate("vector 100k: iteration PV/Array", measured: ratio("iteration"), .atMost, 20)
        }
    }

    func bytesPerVersion<C: MutableCollection>(_ start: C, _ updates: [Int]) -> Double
    where C.Element == Int64, C.Index == Int {
        var versions: [C] = []
        versions.reserveCapacity(updates.count)
        var current = start
        let before = MemoryProbe.allocatedBytes()
        for (n, i) in updates.enumerated() {
            versions.append(current)
            current[i] = Int64(-n)
        }
        return Double(MemoryProbe.allocatedBytes() - before) / Double(updates.count)
    }
}
