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
    /// far shorter than decoding what it read. A read's error (the file
    /// system's) is passed on as it is: a failing disk is not a damaged file.
    final class Source: Sendable {
        // One of the two: the bytes, or the file (nil once closed). A
        // Mutex cannot be an enum's payload, being non-copyable.
        private let bytes: [UInt8]?
        /// Where the file starts in `bytes`.
        private let start: Int
        private let file: Mutex<(any StorageFile)?>

        /// The bytes of a whole file, read already, from `start` on (a
        /// database's encoding holds one after its codec header): reads
        /// never fail.
        init(_ bytes: [UInt8], from start: Int = 0) {
            precondition(start >= 0 && start <= bytes.count, "a file starting past its bytes")
            self.bytes = bytes
            self.start = start
            file = Mutex(nil)
        }

        /// The open `file`, closed by ``close()``.
        init(file: sending any StorageFile) {
            bytes = nil
            start = 0
            self.file = Mutex(file)
        }

        /// The file's size in bytes (0 for a file system that reports less).
        func size() throws -> Int {
            if let bytes { return bytes.count - start }
            return max(0, try file.withLock { try Self.open($0).size() })
        }

        /// The bytes in `range`, fewer when the file ends inside it.
        func read(_ range: Range<Int>) throws -> ArraySlice<UInt8> {
            if let bytes {
                return bytes[(range.clamped(to: 0..<(bytes.count - start))).shifted(by: start)]
            }
            return try file.withLock { try Self.open($0).read(at: range.lowerBound, count: range.count)[...] }
        }

        /// Closes the file (nothing for bytes in memory), once everything
        /// is read: no read of the file follows.
        func close() {
            file.withLock { file in
                file?.close()
                file = nil
            }
        }

        private static func open(_ file: (any StorageFile)?) -> any StorageFile {
            guard let file else { preconditionFailure("a snapshot's file is read after it was closed") }
            return file
        }
    }

    /// Runs `body`, which reads only bytes in memory (``Source/init(_:)``,
    /// whose reads cannot fail): what it throws is a ``FormatError``.
    static func readingMemory<T>(_ body: () throws -> T) throws(FormatError) -> T {
        do {
            return try body()
        } catch let error as FormatError {
            throw error
        } catch {
            preconditionFailure("reading bytes in memory failed: \(error)")
        }
    }
}

extension Range<Int> {
    /// The range moved `offset` up.
    fileprivate func shifted(by offset: Int) -> Range<Int> { (lowerBound + offset)..<(upperBound + offset) }
}
