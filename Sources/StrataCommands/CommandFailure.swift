import Foundation
import Strata

/// How `strata` ends, as its exit status.
public enum ExitStatus: Int32, Sendable {
    /// Done; for `verify`, the store is sound.
    case ok = 0
    /// Damage found (by `verify`, or met by any command), or the operation failed.
    case failed = 1
    /// The command line is wrong (an unknown option, a bad argument).
    case usage = 2
    /// A writing command found the store open for writing elsewhere.
    case locked = 3
    /// The path holds no store (missing, a file, another directory), or a
    /// store of a newer format than this build reads.
    case notAStore = 4
}

/// Why a command stopped: one line for people, and the exit status.
struct CommandFailure: Error, CustomStringConvertible {
    var status: ExitStatus
    var message: String
    var description: String { message }

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    static func usage(_ message: String) -> CommandFailure { CommandFailure(.usage, message) }

    /// The failure for an error the engine threw working on the store at
    /// `path`: what happened and what to do.
    init(_ error: any Error, path: String) {
        if let failure = error as? CommandFailure {
            self = failure
            return
        }
        guard let error = error as? StoreError else {
            self.init(.failed, "\(path): \(error)")
            return
        }
        switch error {
        case .locked:
            self.init(
                .locked,
                "\(path) is open for writing by another process; close it there first "
                    + "(reading commands such as info, log and export work meanwhile)"
            )
        case .noStore:
            self.init(
                .notAStore,
                "\(path): no such store (the directory does not exist; "
                    + "`strata import \(path) FILE --create` makes a new store there)"
            )
        case .notAStore(_, let reason) where reason.hasPrefix(StoreDirectory.emptyReason):
            // The library's advice names its option; the command's is --create.
            self.init(
                .notAStore,
                "\(path) is not a Strata store: \(StoreDirectory.emptyReason) "
                    + "(`strata import \(path) FILE --create` makes a new store there)"
            )
        case .notAStore(_, let reason):
            self.init(.notAStore, "\(path) is not a Strata store: \(reason)")
        case let .unsupportedVersion(file, found, supported):
            self.init(
                .notAStore,
                "\(file) has format version \(found), newer than this strata reads (\(supported)); "
                    + "use a newer strata"
            )
        case let .missingHistory(reached, expected, reason):
            // The library's advice names its recovery option; here it is repair.
            let reach = expected > reached ? " but the history reached at least t \(expected)" : ""
            self.init(
                .failed,
                "\(path): acknowledged history is missing: the log ends at t \(reached)\(reach) (\(reason)); "
                    + "run `strata verify \(path)` to list the damage and "
                    + "`strata repair \(path) --into NEWPATH` to copy the history up to t \(reached)"
            )
        case .corruptLog, .corruptSnapshot, .corruptManifest:
            self.init(
                .failed,
                "\(path): \(error); run `strata verify \(path)` to list the damage and "
                    + "`strata repair \(path) --into NEWPATH` to copy what is sound"
            )
        case .outOfRange, .unknownTransaction:
            self.init(.usage, "\(path): \(error)")
        default:
            self.init(.failed, "\(path): \(error)")
        }
    }
}
