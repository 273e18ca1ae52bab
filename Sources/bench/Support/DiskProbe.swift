import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk-side baselines of the `store` scenario: a bare append + sync
/// of a given size (what a durable commit cannot beat), and evicting a
/// directory's files from the page cache so an open reads from the device.
enum DiskProbe {
    /// A file that is appended to and synced, like a log with nothing
    /// around it.
    final class SyncedAppender {
        let path: String
        private let descriptor: Int32
        private var end = 0

        init(path: String) throws {
            self.path = path
            descriptor = open(path, O_CREAT | O_TRUNC | O_RDWR, 0o644)
            guard descriptor >= 0 else { throw BenchError.verificationFailed("cannot create \(path): errno \(errno)") }
        }

        deinit { close(descriptor) }

        /// Appends `bytes` and syncs them the way the store's log does
        /// (`fdatasync`; `F_FULLFSYNC` on Darwin).
        func appendAndSync(_ bytes: [UInt8]) throws {
            let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(end)) }
            guard written == bytes.count else { throw BenchError.verificationFailed("bare write to \(path) failed") }
            end += written
            #if canImport(Darwin)
            let status = fcntl(descriptor, F_FULLFSYNC)
            #else
            let status = fdatasync(descriptor)
            #endif
            guard status == 0 else { throw BenchError.verificationFailed("bare sync of \(path) failed") }
        }
    }

    /// Asks the kernel to drop the cached pages of every file under
    /// `directory` (Linux `posix_fadvise(DONTNEED)`; the files are synced
    /// first, since dirty pages cannot be dropped). Returns whether
    /// eviction is supported here.
    @discardableResult
    static func evictFromPageCache(_ directory: String) -> Bool {
        #if os(Linux)
        for path in files(under: directory) {
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { continue }
            fsync(descriptor)
            posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
            close(descriptor)
        }
        return true
        #else
        return false
        #endif
    }

    /// Reads every byte of every file under `directory`; returns the byte count.
    static func readAll(_ directory: String) -> Int {
        files(under: directory).reduce(0) { total, path in
            total + ((try? Data(contentsOf: URL(fileURLWithPath: path)))?.count ?? 0)
        }
    }

    /// Total size of the files under `directory`.
    static func size(of directory: String) -> Int {
        files(under: directory).reduce(0) { total, path in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    static func files(under directory: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var paths: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                paths.append(path)
            }
        }
        return paths
    }
}
