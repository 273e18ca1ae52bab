import DeterministicRandom

/// The tests' seeded generator: a failure prints its seed and replays.
typealias SeededRandom = SplitMix64

extension SplitMix64 {
    /// Text shaped like database records: repeated field names and numbers.
    mutating func recordLikeBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 64)
        while out.count < count {
            out.append(contentsOf: Self.recordWords[int(below: Self.recordWords.count)])
            out.append(contentsOf: Self.numbers[int(below: Self.numbers.count)])
        }
        out.removeLast(out.count - count)
        return out
    }

    private static let recordWords: [[UInt8]] = [
        "title", "artist", "album", "path", "duration", "plays", "love", "night", "river", "/Music/",
    ].map { Array("\"\($0)\":".utf8) }
    private static let numbers: [[UInt8]] = (0..<1000).map { Array("\($0),".utf8) }
}
