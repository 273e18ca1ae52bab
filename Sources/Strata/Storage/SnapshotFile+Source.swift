import Synchronization

extension SnapshotFile {
    /// Where a snapshot's bytes are read from: the whole file already in
    /// memory, or the open file itself.
    ///
    /// Opening a store reads a version 3 snapshot from the file: its
    /// header and directory first, then each chunk by the worker that
    /// decodes it. Decoding then starts at once, the reads of later chunks
    /// overlap the decoding of earlier ones (and the disk's, when the file
    /// is not in the page cache), and no copy of the whole file is made: a
    /// 50 MB snapshot read into one fresh buffer first took a single core
    /// tens of milliseconds, most of them faulting in the buffer's pages.
    ///
    /// A ``StorageFile`` is not shared between threads without a lock, so
    /// the workers' reads take turns; a read is a copy from the page cache,
    /// far shorter than decoding what it read.
    final class Source: Sendable {
        private let whole: [UInt8]?
        private let file: Mutex<(any StorageFile)?>

        /// The bytes of a whole file, read already.
        init(_ bytes: [UInt8]) {
            whole = bytes
            file = Mutex(nil)
        }

        /// The open `file`, closed by ``close()``.
        init(file: sending any StorageFile) {
            whole = nil
            self.file = Mutex(file)
        }

        /// The file's size in bytes.
        func size() throws -> Int {
            if let whole { return whole.count }
            return try file.withLock { file in
                guard let file else { preconditionFailure("snapshot source used after close") }
                return try file.size()
            }
        }

        /// The bytes in `range`: fewer when the file ends inside it.
        func read(_ range: Range<Int>) throws -> ArraySlice<UInt8> {
            if let whole { return whole[range.clamped(to: 0..<whole.count)] }
            return try file.withLock { file in
                guard let file else { preconditionFailure("snapshot source used after close") }
                return try file.read(at: range.lowerBound, count: range.count)[...]
            }
        }

        /// Closes the file (nothing for bytes in memory); later reads fail.
        func close() {
            file.withLock { file in
                file?.close()
                file = nil
            }
        }
    }
}
