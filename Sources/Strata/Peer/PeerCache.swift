import Foundation

/// A peer's local copy of a value of the shared history, so that a peer
/// restarting on the same machine reads only the transactions after it
/// from the storage, not a whole snapshot.
///
/// The directory, which belongs to one peer, holds one value (two
/// briefly, while a newer one is written): a snapshot in the file store's
/// format (`snapshot-<t>.strata`,
/// chunked, checksummed, decoded on every core, written atomically), whose
/// header names the ID of transaction t. A cached value is used only when
/// the storage holds that transaction at t; a file that does not check, or
/// belongs to another history, is ignored and replaced.
struct PeerCache: Sendable {
    let directory: String
    let fileSystem: any FileSystem

    init(directory: String, fileSystem: any FileSystem = PosixFileSystem()) {
        self.directory = directory
        self.fileSystem = fileSystem
    }

    /// The cached value and the ID of its basis transaction, or nil when
    /// there is none or it does not read back whole.
    func load() -> (Database, basisID: UUID)? {
        guard let names = try? fileSystem.contents(ofDirectory: directory) else { return nil }
        let newest = names.compactMap { name in SnapshotFile.basis(ofName: name).map { ($0, name) } }.max {
            $0.0 < $1.0
        }
        guard let (_, name) = newest,
            let (value, _, basisID) = try? SnapshotFile.read(name, in: directory, fileSystem: fileSystem),
            let basisID
        else { return nil }
        return (value, basisID)
    }

    /// Writes `value` (whose basis transaction has ID `basisID`) durably,
    /// then removes the cache's other values, older ones and newer ones
    /// alike (no other file). A newer one is from a history cut since
    /// (its transaction is not the storage's any more, or this peer,
    /// which writes its values in order, would be past it): left there, it
    /// would be the one `load()` finds at every open. O(value size).
    func write(_ value: Database, basisID: UUID) throws {
        try fileSystem.createDirectory(directory)
        _ = try SnapshotFile.write(value, basisID: basisID, to: directory, fileSystem: fileSystem, level: 1)
        removeValues(except: value.basis)
    }

    /// Removes the cached values (and temporary files of unfinished
    /// writes), but the one at basis `kept`; no other file. Best effort.
    func removeValues(except kept: Int64? = nil) {
        for name in (try? fileSystem.contents(ofDirectory: directory)) ?? [] {
            let isTemporary = name.hasSuffix(SnapshotFile.temporarySuffix)
            let final = isTemporary ? String(name.dropLast(SnapshotFile.temporarySuffix.count)) : name
            if let basis = SnapshotFile.basis(ofName: final), isTemporary || basis != kept {
                try? fileSystem.remove(directory + "/" + name)
            }
        }
    }
}
