import Synchronization

/// A writable store's hold on its directory: the lock file and the
/// directory, locked, and the directories it writes into, kept open.
///
/// The store holds it, and so does its background work (a snapshot or a
/// compaction round being written), which may outlive a store let go of
/// without ``Store/close()``. The files close when the last holder lets
/// go, or at ``release()``. Until then no other writer can open the
/// store, so a dropped store's unfinished snapshot never races a new
/// store's writes to the same files.
///
/// Locks held in this process are known by their directory, so that an
/// open that finds the lock taken by a store already let go of waits for
/// its background work instead of reporting the store as locked: an app
/// that drops and reopens its store must not see its own past self as
/// another writer.
final class StoreLock: Sendable {
    /// What identifies a store's directory within the process.
    enum Key: Hashable, Sendable {
        case identity(FileIdentity)
        /// A file system that cannot tell files apart: the absolute path.
        case path(String)

        /// The key of the store directory at `path` (absolute). A file
        /// system without identities is keyed by the path with `.`, `..`
        /// and repeated or trailing slashes resolved, but not symbolic
        /// links: another spelling through one reads as another store.
        init(_ path: String, fileSystem: any FileSystem) {
            self = fileSystem.identity(of: path).map(Key.identity) ?? .path(Self.normalized(path))
        }

        static func normalized(_ path: String) -> String {
            var parts: [Substring] = []
            for part in path.split(separator: "/", omittingEmptySubsequences: true) {
                switch part {
                case ".": continue
                case "..": _ = parts.popLast()
                default: parts.append(part)
                }
            }
            return "/" + parts.joined(separator: "/")
        }
    }

    let key: Key
    /// The files, until released. `StorageFile` is not `Sendable`: these
    /// are only closed, once, never read or written through the lock.
    private nonisolated(unsafe) var files: [any StorageFile]
    private let released = Mutex(false)

    init(files: [any StorageFile], key: Key) {
        self.key = key
        self.files = files
        Self.held.withLock { $0[key, default: []].append(Entry(lock: ObjectIdentifier(self))) }
    }

    deinit { release() }

    /// Closes the files, letting another writer in. Idempotent.
    func release() {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        guard first else { return }
        // Only the first release reaches here, so `files` is read and
        // changed by one thread.
        for file in files { file.close() }
        files = []
        let waiters = Self.held.withLock { held -> [CheckedContinuation<Bool, Never>] in
            guard var entries = held[key], let i = entries.firstIndex(where: { $0.lock == ObjectIdentifier(self) })
            else { return [] }
            let waiters = entries.remove(at: i).waiters
            held[key] = entries.isEmpty ? nil : entries
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Marks the store that took this lock as let go of: only background
    /// work holds the lock now, and an open of the same store waits for it.
    func storeDropped() {
        Self.held.withLock { held in
            guard let i = held[key]?.firstIndex(where: { $0.lock == ObjectIdentifier(self) }) else { return }
            held[key]![i].storeDropped = true
        }
    }

    // MARK: The process's locks

    private struct Entry {
        let lock: ObjectIdentifier
        var storeDropped = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    /// Every lock held in this process, by directory. An entry is removed
    /// when its lock is released, so an identifier here is of a live lock.
    private static let held = Mutex<[Key: [Entry]]>([:])

    /// Waits until every lock on `key` held only by the background work of
    /// a store let go of is released. O(1) when there is none.
    /// - Returns: whether it waited (the lock may be free now).
    static func awaitDroppedStores(_ key: Key) async -> Bool {
        var waited = false
        while true {
            let found = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let added = held.withLock { held -> Bool in
                    guard let i = held[key]?.firstIndex(where: \.storeDropped) else { return false }
                    held[key]![i].waiters.append(continuation)
                    return true
                }
                if !added { continuation.resume(returning: false) }
            }
            guard found else { return waited }
            waited = true
        }
    }
}
