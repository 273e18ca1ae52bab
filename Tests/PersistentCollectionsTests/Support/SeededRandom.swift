import DeterministicRandom

/// The tests' seeded generator: a failure prints its seed and replays.
typealias SeededRandom = SplitMix64
