import Foundation

/// Why a ``Peer`` could not go on.
public enum PeerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The storage holds a transaction that does not follow the one before
    /// it (a gap, a wrong basis, changes that do not apply): the history is
    /// damaged or was written by something that did not check; or it no
    /// longer holds the transaction this peer built on: its history was
    /// cut under the peer (a file store's `truncate(after:)`). The peer
    /// stops; open a new one.
    case divergentHistory(t: Int64, reason: String)
    /// Other writers took every number this commit tried; it was not stored.
    case tooManyAttempts(t: Int64, attempts: Int)
    /// The peer was closed.
    case closed
    /// An append failed, and what the storage holds could not be read
    /// afterwards: the transaction (by its ID) may or may not be stored.
    case outcomeUnknown(id: UUID, t: Int64, reason: String)
    /// The cache directory given to ``Peer/open(_:cache:)`` cannot be one
    /// (an empty path).
    case invalidCacheDirectory(path: String)

    /// One line: what happened and what to do.
    public var description: String {
        switch self {
        case let .divergentHistory(t, reason):
            return "the shared history is damaged at transaction \(t): \(reason); verify the storage"
        case let .tooManyAttempts(t, attempts):
            return "commit not stored: other writers took every number up to \(t) in \(attempts) attempts; try again"
        case .closed:
            return "the peer is closed: open a new one"
        case let .outcomeUnknown(id, t, reason):
            return "commit \(id) may or may not be stored as transaction \(t) (\(reason)): "
                + "catch up and look for its ID before committing it again"
        case let .invalidCacheDirectory(path):
            return "\(path.isEmpty ? "an empty path" : path) cannot be a peer's cache directory: name a directory"
        }
    }
}

extension PeerError {
    /// The divergence found when the storage holds `stored` (nil: nothing)
    /// at `t`, where the peer holds another transaction: the storage's
    /// history was cut under it.
    static func historyCut(at t: Int64, holding stored: UUID?) -> PeerError {
        .divergentHistory(
            t: t,
            reason: stored == nil
                ? "the storage's history no longer reaches transaction \(t): it was cut"
                : "the storage holds another transaction at \(t): its history was cut and rewritten"
        )
    }
}
