/// What ``Store/verify(at:fileSystem:)`` found in a store's files.
public struct VerificationReport: Sendable {
    /// One piece of damage: the file, where in it, and what is wrong.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The file's path.
        public var file: String
        /// The byte offset in the file, when the damage has one.
        public var offset: Int?
        /// What is wrong.
        public var reason: String

        /// `path at offset N: reason`.
        public var description: String {
            offset.map { "\(file) at offset \($0): \(reason)" } ?? "\(file): \(reason)"
        }
    }

    /// Damage found; empty for a sound store.
    public var problems: [Problem] = []
    /// What is not damage but worth knowing: a partial last record (a
    /// write in progress, or cut short by a crash), files the next open
    /// removes (a temporary, a snapshot or block of a history since cut).
    public var notes: [String] = []
    /// Transactions that read back, check and replay, from t 1 up to the
    /// first damage (all of them in a sound store).
    public var transactions: Int64 = 0
    /// Log segments read.
    public var segments = 0
    /// Segment summaries read.
    public var summaries = 0
    /// Snapshots read and compared.
    public var snapshots = 0
    /// Compaction blocks read.
    public var blocks = 0
    /// Bytes of the files read.
    public var bytes = 0

    /// Whether no damage was found.
    public var isSound: Bool { problems.isEmpty }
}
