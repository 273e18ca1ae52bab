#if canImport(Glibc)
import Glibc
private func _open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Glibc.open(path, flags, mode) }
private func _close(_ fd: Int32) -> Int32 { Glibc.close(fd) }
private func _rename(_ a: String, _ b: String) -> Int32 { Glibc.rename(a, b) }
private func _datasync(_ fd: Int32) -> Int32 { fdatasync(fd) }
#elseif canImport(Darwin)
import Darwin
private func _open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Darwin.open(path, flags, mode) }
private func _close(_ fd: Int32) -> Int32 { Darwin.close(fd) }
private func _rename(_ a: String, _ b: String) -> Int32 { Darwin.rename(a, b) }
// fsync on Darwin does not reach the platter; F_FULLFSYNC does.
private func _datasync(_ fd: Int32) -> Int32 { fcntl(fd, F_FULLFSYNC) == -1 ? fsync(fd) : 0 }
#endif

/// The file operations the log and snapshots need, behind a protocol so that
/// tests can inject failures (a full disk, a failing sync) and another
/// storage can be added without touching the store.
public protocol FileSystem: Sendable {
    /// Opens `path` for reading and writing, creating it when `create`.
    func open(_ path: String, create: Bool) throws -> any StorageFile
    /// Opens existing file `path` for reading only (a store opened
    /// read-only, in a directory it may not write).
    func openForReading(_ path: String) throws -> any StorageFile
    /// The names of the entries in directory `path`.
    func contents(ofDirectory path: String) throws -> [String]
    /// Creates directory `path` (and its parents) when absent.
    func createDirectory(_ path: String) throws
    /// Removes file `path`.
    func remove(_ path: String) throws
    /// Atomically renames `source` to `destination`, replacing it.
    func rename(_ source: String, to destination: String) throws
    /// Makes the directory's entries (creations, renames) durable.
    func syncDirectory(_ path: String) throws
    /// Whether `path` exists.
    func exists(_ path: String) -> Bool
    /// Which file or directory `path` names now (device and inode), or nil
    /// when it names none or the file system cannot tell: a store checks
    /// that its directories are still the ones it opened before it creates
    /// files in them.
    func identity(of path: String) -> FileIdentity?
    /// Takes the exclusive writer lock of `path` (created if absent), held
    /// until the returned file is closed; throws when another holder has it.
    func lock(_ path: String) throws -> any StorageFile
    /// Takes the exclusive writer lock of the directory at `path`, as
    /// ``lock(_:)`` does a file's, or returns nil where the file system
    /// cannot lock a directory. A store holds it beside its lock file, so
    /// that the lock file deleted under an open store lets no second
    /// writer in; the directory stays pinned while it is held.
    func lockDirectory(_ path: String) throws -> (any StorageFile)?
}

/// An open file. Not shared between threads without a lock (the store's
/// actor owns its files).
public protocol StorageFile: AnyObject {
    /// The file's size in bytes.
    func size() throws -> Int
    /// `count` bytes from `offset` (fewer at the end of the file).
    func read(at offset: Int, count: Int) throws -> [UInt8]
    /// Writes `bytes` at `offset`.
    func write(_ bytes: [UInt8], at offset: Int) throws
    /// Makes the written data durable (`fdatasync`).
    func sync() throws
    /// Cuts the file to `size` bytes.
    func truncate(to size: Int) throws
    /// Reserves the file's blocks from `offset` (its size) up to `size`
    /// bytes, growing it with zeros, so that a later write below `size`
    /// followed by a sync does not also write a new size. Best effort:
    /// false when the file system cannot.
    func preallocate(from offset: Int, to size: Int) -> Bool
    /// Closes the file; later calls fail.
    func close()
}

extension FileSystem {
    /// Opens for reading and writing: a file system that has no read-only mode.
    public func openForReading(_ path: String) throws -> any StorageFile { try open(path, create: false) }

    /// The whole of file `path`, opened for reading and closed again.
    func readWholeFile(_ path: String) throws -> [UInt8] {
        let handle = try openForReading(path)
        defer { handle.close() }
        return try handle.read(at: 0, count: handle.size())
    }

    /// Unknown: a file system that cannot tell files apart is not checked.
    public func identity(of path: String) -> FileIdentity? { nil }

    /// None: a file system that cannot lock a directory relies on the
    /// store's lock file alone.
    public func lockDirectory(_ path: String) throws -> (any StorageFile)? { nil }

    /// Throws ESTALE, naming `what` the write puts there, when `directory`
    /// no longer names the directory whose identity is `expected`: deleted
    /// (and perhaps made again, by another open of a new store there)
    /// since the store opened, so that what is written would land in
    /// another store, or nowhere. Nil `expected` (not known): no check.
    func checkIdentity(of directory: String, is expected: FileIdentity?, writing what: String) throws {
        guard let expected, identity(of: directory) != expected else { return }
        throw FileSystemError(
            operation: "write \(what) (removed or replaced since the store opened)",
            path: directory,
            code: ESTALE
        )
    }
}

/// What a path named when it was looked at: its device and inode. A
/// directory deleted and made again under the same path is another.
public struct FileIdentity: Hashable, Sendable {
    /// The device holding the file.
    public var device: UInt64
    /// The file's number on that device.
    public var inode: UInt64

    /// The identity of the file numbered `inode` on `device`.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

extension StorageFile {
    /// Preallocates nothing: a file system that cannot, or need not.
    public func preallocate(from offset: Int, to size: Int) -> Bool { false }
}

/// Why a file operation failed: the operation, the path and the system's
/// error number.
public struct FileSystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was being done: "open", "write", "sync", ...
    public var operation: String
    /// The file or directory.
    public var path: String
    /// The `errno` value.
    public var code: Int32

    /// A failure of `operation` on `path` with `errno` `code`.
    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// `write /path/to/file: No space left on device (errno 28)`.
    public var description: String {
        "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))"
    }
}

/// The operating system's files (POSIX calls).
public struct PosixFileSystem: FileSystem {
    /// The file system of the machine.
    public init() {}

    public func open(_ path: String, create: Bool) throws -> any StorageFile {
        let flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0)
        let fd = _retrying { _open(path, flags, 0o644) }
        guard fd >= 0 else { throw FileSystemError(operation: "open", path: path, code: errno) }
        return PosixFile(descriptor: fd, path: path)
    }

    public func openForReading(_ path: String) throws -> any StorageFile {
        let fd = _retrying { _open(path, O_RDONLY | O_CLOEXEC, 0) }
        guard fd >= 0 else { throw FileSystemError(operation: "open", path: path, code: errno) }
        return PosixFile(descriptor: fd, path: path)
    }

    public func contents(ofDirectory path: String) throws -> [String] {
        guard let directory = opendir(path) else {
            throw FileSystemError(operation: "list", path: path, code: errno)
        }
        defer { closedir(directory) }
        var names: [String] = []
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(directory) {
            // Read up to the name's NUL, never the whole `d_name` array: an
            // entry is only as long as its name, and a copy of the array
            // reads past the last entry of the directory buffer.
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public func createDirectory(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw FileSystemError(operation: "create directory", path: prefix, code: errno)
            }
        }
    }

    public func remove(_ path: String) throws {
        guard unlink(path) == 0 else { throw FileSystemError(operation: "remove", path: path, code: errno) }
    }

    public func rename(_ source: String, to destination: String) throws {
        guard _rename(source, destination) == 0 else {
            throw FileSystemError(operation: "rename to \(destination)", path: source, code: errno)
        }
    }

    public func syncDirectory(_ path: String) throws {
        let fd = _open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else { throw FileSystemError(operation: "open directory", path: path, code: errno) }
        defer { _ = _close(fd) }
        guard fsync(fd) == 0 else { throw FileSystemError(operation: "sync directory", path: path, code: errno) }
    }

    public func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    public func identity(of path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    public func lockDirectory(_ path: String) throws -> (any StorageFile)? {
        try Self.locked(try openForReading(path) as! PosixFile, path)
    }

    public func lock(_ path: String) throws -> any StorageFile {
        try Self.locked(try open(path, create: true) as! PosixFile, path)
    }

    /// `file`, locked (closed, and the error thrown, when it cannot be).
    private static func locked(_ file: PosixFile, _ path: String) throws -> PosixFile {
        // flock locks belong to the open file description: a second open,
        // in this process or another, is refused until this one closes.
        guard flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            file.close()
            throw FileSystemError(operation: "lock", path: path, code: code)
        }
        return file
    }
}

/// Retries a system call interrupted by a signal.
func _retrying(_ call: () -> Int32) -> Int32 {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}

final class PosixFile: StorageFile {
    private(set) var descriptor: Int32
    let path: String

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close() }

    func size() throws -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileSystemError(operation: "stat", path: path, code: errno) }
        return Int(info.st_size)
    }

    func read(at offset: Int, count: Int) throws -> [UInt8] {
        // Uninitialized: zeroing a segment's megabytes first costs as much as reading them.
        var failure: Int32?
        let result = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else {
                    failure = errno
                    break
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        if let failure { throw FileSystemError(operation: "read", path: path, code: failure) }
        return result
    }

    func write(_ bytes: [UInt8], at offset: Int) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in
                pwrite(descriptor, buffer.baseAddress! + done, bytes.count - done, off_t(offset + done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FileSystemError(operation: "write", path: path, code: n < 0 ? errno : EIO) }
            done += n
        }
    }

    func sync() throws {
        guard _retrying({ _datasync(descriptor) }) == 0 else {
            throw FileSystemError(operation: "sync", path: path, code: errno)
        }
    }

    func truncate(to size: Int) throws {
        guard _retrying({ ftruncate(descriptor, off_t(size)) }) == 0 else {
            throw FileSystemError(operation: "truncate", path: path, code: errno)
        }
    }

    func preallocate(from offset: Int, to size: Int) -> Bool {
        #if os(Linux)
        guard size > offset else { return true }
        // Returns the error number itself; EINTR is retried.
        var result: Int32
        repeat { result = posix_fallocate(descriptor, off_t(offset), off_t(size - offset)) } while result == EINTR
        return result == 0
        #else
        // Darwin's F_PREALLOCATE reserves blocks but not the size: no gain.
        return false
        #endif
    }

    func close() {
        if descriptor >= 0 {
            _ = _close(descriptor)
            descriptor = -1
        }
    }
}
