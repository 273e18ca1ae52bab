import Foundation

/// A compaction block persisted beside the log: the flatten of
/// transactions `first ... last`, in `blocks/block-L<level>-<first t, 20
/// digits>.strata`, so that a store just opened rebuilds past values from
/// a few block files instead of reading every transaction in between.
///
///     header := "STRATBLK" (8) · format version (u32 LE) · level (u32 LE) · first t (i64 LE)
///               · last t (i64 LE) · ID of transaction `last` (16) · payload size (u64 LE)
///               · payload CRC32C (u32 LE) · CRC32C of the previous 60 bytes (u32 LE)   64 bytes
///     payload := zstd frame of `BinaryCodec.encode(block)`
///
/// Blocks are a cache: the log stays the only record. A block that is
/// missing, damaged, from a newer format or from a history since cut (its
/// last transaction's ID no longer matches) reads as absent, is removed,
/// and is built again from the log. So it is written without syncing:
/// a crash can leave it torn, never wrong.
enum BlockFile {
    static let version: UInt32 = 1
    static let headerSize = 64
    static let suffix = ".strata"

    static func name(level: Int, first: Int64) -> String { FileName.numbered("block-L\(level)-", first, suffix) }

    /// Levels a block file can have: a block of level k covers 16^(k+1)
    /// transactions, so level 13 already covers more than a log can number
    /// (2^62); a higher one is no block this engine writes.
    static let maximumLevel = 13

    /// The level and first t a block file name encodes, or nil for other
    /// files, and for a name no block of this engine has: a level above
    /// ``maximumLevel``, or a first t not at the start of a block of its
    /// level (so `first - 1 + 16^(level+1)` never overflows).
    static func parse(_ name: String) -> (level: Int, first: Int64)? {
        guard name.hasPrefix("block-L") else { return nil }
        let rest = name.dropFirst(7)
        guard let dash = rest.firstIndex(of: "-"), let level = Int(rest[..<dash]), (0...maximumLevel).contains(level),
            let first = FileName.number(in: name, prefix: "block-L\(level)-", suffix: suffix)
        else { return nil }
        let size = Int64(1) << (4 * (level + 1))
        guard first >= 1, (first - 1) % size == 0, first - 1 <= Int64.max - size else { return nil }
        return (level, first)
    }

    static func encode(_ block: Transaction, level: Int, first: Int64, last: Int64, lastID: UUID) throws -> [UInt8] {
        let payload = try ZstdCompressor(level: 1).compress(BinaryCodec.encode(block))
        var bytes = FileHeader.encode(.block, version: version, size: headerSize) {
            $0.append(UInt32(level))
            $0.append(UInt64(bitPattern: first))
            $0.append(UInt64(bitPattern: last))
            $0.append(lastID)
            $0.append(UInt64(payload.count))
            $0.append(CRC32C.checksum(payload))
        }
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// Decodes a block file, or nil when it is damaged, from another format
    /// or version, or not the block expected (level, run, last ID).
    static func decode(_ bytes: [UInt8], level: Int, first: Int64, last: Int64, lastID: UUID) -> Transaction? {
        payload(bytes, level: level, first: first, last: last, lastID: lastID).flatMap {
            try? BinaryCodec.decodeTransaction($0)
        }
    }

    /// A block file's encoded transaction, when its header names the block
    /// expected and every checksum holds (the header's, the payload's, the
    /// zstd frame's content checksum); nil otherwise.
    static func payload(_ bytes: [UInt8], level: Int, first: Int64, last: Int64, lastID: UUID) -> [UInt8]? {
        guard let (frame, found) = frame(bytes, level: level, first: first, last: last), found == lastID else {
            return nil
        }
        return try? ZstdDecompressor(maximumOutputSize: SnapshotFile.outputBound(frame.count)).decompress(frame)
    }

    /// Whether ``payload(_:level:first:last:lastID:)`` would read the block,
    /// found without keeping its content: the frame is decoded a window at
    /// a time (a block can hold hundreds of megabytes of transactions).
    static func isSound(_ bytes: [UInt8], level: Int, first: Int64, last: Int64, lastID: UUID) -> Bool {
        soundLastID(bytes, level: level, first: first, last: last) == lastID
    }

    /// The last transaction ID the header of a block file names, when the
    /// file would read as that block but for its last ID (which the caller
    /// may not know yet: `strata verify` checks blocks while it reads the
    /// log); nil when it would not read whatever that ID.
    static func soundLastID(_ bytes: [UInt8], level: Int, first: Int64, last: Int64) -> UUID? {
        guard let (frame, lastID) = frame(bytes, level: level, first: first, last: last),
            let decompressor = try? ZstdDecompressor(maximumOutputSize: SnapshotFile.outputBound(frame.count)),
            (try? frame.withUnsafeBytes { try decompressor.check($0) }) != nil
        else { return nil }
        return lastID
    }

    /// The zstd frame of a block file whose header names the block expected
    /// (its last ID aside, returned) and whose header and payload checksums
    /// hold; nil otherwise.
    private static func frame(
        _ bytes: [UInt8],
        level: Int,
        first: Int64,
        last: Int64
    ) -> (ArraySlice<UInt8>, lastID: UUID)? {
        // A block of a newer version reads as absent too: it is rebuilt.
        guard let header = try? FileHeader.decode(bytes, kind: .block, size: { _ in headerSize }, supported: version),
            header.version == version,
            header.read(UInt32.self, at: 12) == UInt32(level),
            Int64(bitPattern: header.read(UInt64.self, at: 16)) == first,
            Int64(bitPattern: header.read(UInt64.self, at: 24)) == last,
            header.read(UInt64.self, at: 48) == UInt64(bytes.count - headerSize)
        else { return nil }
        let payload = bytes[headerSize...]
        guard CRC32C.checksum(payload) == header.read(UInt32.self, at: 56) else { return nil }
        return (payload, header.uuid(at: 32))
    }
}

/// The block files of one store: read, written and removed, every failure
/// absorbed (a block that cannot be read or written is built from the log).
struct BlockFiles {
    let directory: String
    let fileSystem: any FileSystem

    private func path(level: Int, first: Int64) -> String {
        directory + "/" + BlockFile.name(level: level, first: first)
    }

    /// Whether a file stands under the block's name (it may still not read back).
    func exists(level: Int, first: Int64) -> Bool {
        fileSystem.exists(path(level: level, first: first))
    }

    /// The block in its file, or nil when absent or not the block expected
    /// (damaged, another format, another history); such a file is removed
    /// unless `removingDamaged` is false (a reader off the store's actor
    /// leaves the name to the actor, which may have written it anew).
    func read(level: Int, first: Int64, last: Int64, lastID: UUID, removingDamaged: Bool = true) -> Transaction? {
        let path = path(level: level, first: first)
        guard fileSystem.exists(path), let file = try? fileSystem.open(path, create: false) else { return nil }
        defer { file.close() }
        guard let size = try? file.size(), let bytes = try? file.read(at: 0, count: size),
            let block = BlockFile.decode(bytes, level: level, first: first, last: last, lastID: lastID)
        else {
            if removingDamaged { try? fileSystem.remove(path) }
            return nil
        }
        return block
    }

    /// Writes through a temporary file and a rename, so a reader never sees
    /// a half-written block under its name.
    func write(_ block: Transaction, level: Int, first: Int64, last: Int64, lastID: UUID) {
        guard
            let temporary = writeTemporary(
                block,
                level: level,
                first: first,
                last: last,
                lastID: lastID,
                suffix: ".tmp"
            )
        else { return }
        install(temporary, level: level, first: first)
    }

    /// Encodes, compresses and writes the block beside its name (its name
    /// + `suffix`, which must not end in ``BlockFile/suffix``), for
    /// ``install(_:level:first:)`` to rename into place later. Safe off the
    /// store's actor: the file is trusted by nothing until renamed, and is
    /// removed as a stray temporary by the next open or cut.
    /// - Returns: the temporary's path, nil when it could not be written.
    func writeTemporary(
        _ block: Transaction,
        level: Int,
        first: Int64,
        last: Int64,
        lastID: UUID,
        suffix: String
    ) -> String? {
        guard let bytes = try? BlockFile.encode(block, level: level, first: first, last: last, lastID: lastID) else {
            return nil
        }
        let temporary = path(level: level, first: first) + suffix
        guard let file = try? fileSystem.open(temporary, create: true) else { return nil }
        let written = (try? file.truncate(to: 0)) != nil && (try? file.write(bytes, at: 0)) != nil
        file.close()
        guard written else {
            try? fileSystem.remove(temporary)
            return nil
        }
        return temporary
    }

    /// Renames a temporary written by ``writeTemporary(_:level:first:last:lastID:suffix:)``
    /// to the block's name (removing it when that fails).
    func install(_ temporary: String, level: Int, first: Int64) {
        if (try? fileSystem.rename(temporary, to: path(level: level, first: first))) == nil {
            try? fileSystem.remove(temporary)
        }
    }

    /// Removes the file of a block (one that does not read back).
    func remove(level: Int, first: Int64) {
        try? fileSystem.remove(path(level: level, first: first))
    }

    /// Removes a temporary that is not to be installed.
    func discard(_ temporary: String) {
        try? fileSystem.remove(temporary)
    }

    /// Removes every block reaching past transaction `t`, and stray temporaries.
    func removeAll(after t: Int64, blockSize: (Int) -> Int64) {
        guard let names = try? fileSystem.contents(ofDirectory: directory) else { return }
        for name in names where name.hasPrefix("block-") {
            if let (level, first) = BlockFile.parse(name), first - 1 + blockSize(level) <= t { continue }
            try? fileSystem.remove(directory + "/" + name)
        }
    }
}
