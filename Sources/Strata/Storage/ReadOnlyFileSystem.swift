import Foundation

/// A file system seen without writing: what a store opened read-only
/// (``StoreOptions/readOnly``) works through, so that no path of the
/// engine, however deep, changes a file another process owns.
///
/// Reads go to `base` through ``FileSystem/openForReading(_:)``; every
/// write, removal, rename and lock fails with `EROFS`; syncs do nothing
/// (nothing was written); a directory that does not exist reads as empty
/// (a store whose first open was cut short has no log directory yet).
struct ReadOnlyFileSystem: FileSystem {
    let base: any FileSystem

    func open(_ path: String, create: Bool) throws -> any StorageFile {
        if create { throw Self.refused("create", path) }
        return try openForReading(path)
    }

    func openForReading(_ path: String) throws -> any StorageFile {
        ReadOnlyFile(base: try base.openForReading(path), path: path)
    }

    func contents(ofDirectory path: String) throws -> [String] {
        guard base.exists(path) else { return [] }
        return try base.contents(ofDirectory: path)
    }

    func createDirectory(_ path: String) throws {}
    func remove(_ path: String) throws { throw Self.refused("remove", path) }
    func rename(_ source: String, to destination: String) throws {
        throw Self.refused("rename to \(destination)", source)
    }
    func syncDirectory(_ path: String) throws {}
    func exists(_ path: String) -> Bool { base.exists(path) }
    func identity(of path: String) -> FileIdentity? { base.identity(of: path) }
    func lock(_ path: String) throws -> any StorageFile { throw Self.refused("lock", path) }

    static func refused(_ operation: String, _ path: String) -> FileSystemError {
        FileSystemError(operation: operation, path: path, code: EROFS)
    }
}

/// A file opened for reading: writes fail with `EROFS`, a sync does nothing.
private final class ReadOnlyFile: StorageFile {
    let base: any StorageFile
    let path: String

    init(base: any StorageFile, path: String) {
        self.base = base
        self.path = path
    }

    func size() throws -> Int { try base.size() }
    func read(at offset: Int, count: Int) throws -> [UInt8] { try base.read(at: offset, count: count) }
    func write(_ bytes: [UInt8], at offset: Int) throws { throw ReadOnlyFileSystem.refused("write", path) }
    func sync() throws {}
    func truncate(to size: Int) throws { throw ReadOnlyFileSystem.refused("truncate", path) }
    func close() { base.close() }
}
