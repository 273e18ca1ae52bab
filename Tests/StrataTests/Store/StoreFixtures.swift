import Foundation
import Strata
import Synchronization

/// A fresh directory under the system's temporary directory.
func temporaryStorePath(_ label: String = "store") -> String {
    let path = FileManager.default.temporaryDirectory.path + "/strata-tests/\(label)-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func removeStore(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// Options for tests: `.none` durability unless a test is about syncing.
func testOptions(_ durability: Durability = .none) -> StoreOptions {
    var options = StoreOptions()
    options.durability = durability
    options.createIfMissing = true
    return options
}

/// The log segment files of a store, oldest first.
func logSegments(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path + "/log")) ?? [])
        .filter { $0.hasSuffix(".log") }.sorted().map { path + "/log/" + $0 }
}

func snapshotFiles(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path + "/snapshots")) ?? [])
        .filter { $0.hasSuffix(".strata") }.sorted().map { path + "/snapshots/" + $0 }
}

/// Replays the whole history from the empty database, one transaction at a time.
func replayHistory(_ store: Store) async throws -> Database {
    var value = Database()
    for transaction in try await store.history(limit: .max).reversed() { value = try apply(value, transaction) }
    return value
}

/// A test file system that does what the POSIX one does, but for the
/// operations it implements itself: every other one goes to `base`.
/// (`openForReading` is left to the protocol's default, which calls
/// `open`, so that a double's `open` sees reads too.)
protocol ForwardingFileSystem: FileSystem {
    var base: PosixFileSystem { get }
}

extension ForwardingFileSystem {
    func open(_ path: String, create: Bool) throws -> any StorageFile { try base.open(path, create: create) }
    func contents(ofDirectory path: String) throws -> [String] { try base.contents(ofDirectory: path) }
    func createDirectory(_ path: String) throws { try base.createDirectory(path) }
    func remove(_ path: String) throws { try base.remove(path) }
    func rename(_ source: String, to destination: String) throws { try base.rename(source, to: destination) }
    func syncDirectory(_ path: String) throws { try base.syncDirectory(path) }
    func exists(_ path: String) -> Bool { base.exists(path) }
    func identity(of path: String) -> FileIdentity? { base.identity(of: path) }
    func lock(_ path: String) throws -> any StorageFile { try base.lock(path) }
    func lockDirectory(_ path: String) throws -> (any StorageFile)? { try base.lockDirectory(path) }
}

/// The POSIX file system, with writes or syncs failing on demand (ENOSPC, EIO).
final class FaultyFileSystem: ForwardingFileSystem, @unchecked Sendable {
    struct Faults {
        var failWrites = false
        var failSyncs = false
        /// Syncs of files (not directories) whose path ends with this fail.
        var failSyncsOfPathsEnding: String?
        /// Each sync of a file first sleeps this long (a slow disk).
        var syncDelay: Duration = .zero
        /// A read of a file whose path ends with this, of a range holding
        /// `readFaultOffset`, fails (EIO), or with `shortReads` returns
        /// only the bytes before that offset (as from a file cut there
        /// after its size was read).
        var readFaultsOfPathsEnding: String?
        var readFaultOffset = 0
        var shortReads = false
    }

    let base = PosixFileSystem()
    let faults = Mutex(Faults())

    func open(_ path: String, create: Bool) throws -> any StorageFile {
        FaultyFile(try base.open(path, create: create), path: path, owner: self)
    }
    func syncDirectory(_ path: String) throws {
        if faults.withLock({ $0.failSyncs }) {
            throw FileSystemError(operation: "sync directory", path: path, code: EIO)
        }
        try base.syncDirectory(path)
    }
}

final class FaultyFile: StorageFile {
    let base: any StorageFile
    let path: String
    let owner: FaultyFileSystem

    init(_ base: any StorageFile, path: String, owner: FaultyFileSystem) {
        self.base = base
        self.path = path
        self.owner = owner
    }

    func size() throws -> Int { try base.size() }
    func read(at offset: Int, count: Int) throws -> [UInt8] {
        let faults = owner.faults.withLock { $0 }
        guard let suffix = faults.readFaultsOfPathsEnding, path.hasSuffix(suffix),
            (offset..<(offset + count)).contains(faults.readFaultOffset)
        else { return try base.read(at: offset, count: count) }
        guard faults.shortReads else { throw FileSystemError(operation: "read", path: path, code: EIO) }
        return try base.read(at: offset, count: max(0, faults.readFaultOffset - offset))
    }
    func write(_ bytes: [UInt8], at offset: Int) throws {
        if owner.faults.withLock({ $0.failWrites }) {
            // A partial write, as a full disk leaves it.
            try base.write(Array(bytes.prefix(bytes.count / 2)), at: offset)
            throw FileSystemError(operation: "write", path: path, code: ENOSPC)
        }
        try base.write(bytes, at: offset)
    }
    func sync() throws {
        let fails = owner.faults.withLock { faults in
            faults.failSyncs || faults.failSyncsOfPathsEnding.map { path.hasSuffix($0) } == true
        }
        if fails { throw FileSystemError(operation: "sync", path: path, code: EIO) }
        let delay = owner.faults.withLock { $0.syncDelay }
        if delay > .zero { Thread.sleep(forTimeInterval: Double(delay.components.attoseconds) / 1e18) }
        try base.sync()
    }
    func truncate(to size: Int) throws { try base.truncate(to: size) }
    func preallocate(from offset: Int, to size: Int) -> Bool { base.preallocate(from: offset, to: size) }
    func close() { base.close() }
}

/// The POSIX file system, counting the bytes read from each file and the
/// log segment files open at once (the most seen). A file `slowWholeReads`
/// names takes `delay` seconds longer to read whole (a slow disk).
final class ReadCountingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let base = PosixFileSystem()
    let bytesRead = Mutex([String: Int]())
    let openSegments = Mutex(0)
    let mostOpenSegments = Mutex(0)
    let slowWholeReads: @Sendable (String) -> Bool
    let delay: Double

    init(slowWholeReads: @escaping @Sendable (String) -> Bool = { _ in false }, delay: Double = 0) {
        self.slowWholeReads = slowWholeReads
        self.delay = delay
    }

    func open(_ path: String, create: Bool) throws -> any StorageFile {
        let file = ReadCountingFile(try base.open(path, create: create), path: path, owner: self)
        if file.isSegment {
            let now = openSegments.withLock {
                $0 += 1
                return $0
            }
            mostOpenSegments.withLock { $0 = max($0, now) }
        }
        return file
    }
}

final class ReadCountingFile: StorageFile {
    let base: any StorageFile
    let path: String
    let owner: ReadCountingFileSystem
    var isSegment: Bool { path.hasSuffix(".log") }
    private var closed = false

    init(_ base: any StorageFile, path: String, owner: ReadCountingFileSystem) {
        self.base = base
        self.path = path
        self.owner = owner
    }

    func size() throws -> Int { try base.size() }
    func read(at offset: Int, count: Int) throws -> [UInt8] {
        if offset == 0, owner.slowWholeReads(path), count == (try base.size()) {
            Thread.sleep(forTimeInterval: owner.delay)
        }
        let bytes = try base.read(at: offset, count: count)
        owner.bytesRead.withLock { $0[path, default: 0] += bytes.count }
        return bytes
    }
    func write(_ bytes: [UInt8], at offset: Int) throws { try base.write(bytes, at: offset) }
    func sync() throws { try base.sync() }
    func truncate(to size: Int) throws { try base.truncate(to: size) }
    func preallocate(from offset: Int, to size: Int) -> Bool { base.preallocate(from: offset, to: size) }
    func close() {
        if isSegment, !closed { owner.openSegments.withLock { $0 -= 1 } }
        closed = true
        base.close()
    }
}
