/// A seedable generator for property tests: a failure prints its seed, and
/// the same seed replays the same case.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            withUnsafeBytes(of: next()) { out.append(contentsOf: $0) }
        }
        out.removeLast(out.count - count)
        return out
    }

    /// Text shaped like database records: repeated field names, words, numbers.
    mutating func recordLikeBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 64)
        while out.count < count {
            out.append(contentsOf: Self.recordWords[Int(next() % UInt64(Self.recordWords.count))])
            out.append(contentsOf: Self.numbers[Int(next() % UInt64(Self.numbers.count))])
        }
        out.removeLast(out.count - count)
        return out
    }

    private static let recordWords: [[UInt8]] = [
        "title", "artist", "album", "path", "duration", "plays", "love", "night", "river", "/Music/",
    ].map { Array("\"\($0)\":".utf8) }
    private static let numbers: [[UInt8]] = (0..<1000).map { Array("\($0),".utf8) }
}
