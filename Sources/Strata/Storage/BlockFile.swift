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
    static let magic: [UInt8] = Array("STRATBLK".utf8)
    static let version: UInt32 = 1
    static let headerSize = 64
    static let suffix = ".strata"

    static func name(level: Int, first: Int64) -> String {
        let digits = String(first)
        return "block-L\(level)-" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + suffix
    }

    /// The level and first t a block file name encodes, or nil for other files.
    static func parse(_ name: String) -> (level: Int, first: Int64)? {
        guard name.hasPrefix("block-L"), name.hasSuffix(suffix) else { return nil }
        let parts = name.dropFirst(7).dropLast(suffix.count).split(separator: "-")
        guard parts.count == 2, let level = Int(parts[0]), let first = Int64(parts[1]) else { return nil }
        return (level, first)
    }

    static func encode(_ block: Transaction, level: Int, first: Int64, last: Int64, lastID: UUID) throws -> [UInt8] {
        let payload = try ZstdCompressor(level: 1).compress(BinaryCodec.encode(block))
        var bytes = magic
        LogFormat.append(version, to: &bytes)
        LogFormat.append(UInt32(level), to: &bytes)
        LogFormat.append(UInt64(bitPattern: first), to: &bytes)
        LogFormat.append(UInt64(bitPattern: last), to: &bytes)
        withUnsafeBytes(of: lastID.uuid) { bytes.append(contentsOf: $0) }
        LogFormat.append(UInt64(payload.count), to: &bytes)
        LogFormat.append(CRC32C.checksum(payload), to: &bytes)
        LogFormat.append(CRC32C.checksum(bytes), to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// Decodes a block file, or nil when it is damaged, from another format
    /// or version, or not the block expected (level, run, last ID).
    static func decode(_ bytes: [UInt8], level: Int, first: Int64, last: Int64, lastID: UUID) -> Transaction? {
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic,
            LogFormat.read(UInt32.self, bytes, at: 60) == CRC32C.checksum(bytes[0..<60]),
            LogFormat.read(UInt32.self, bytes, at: 8) == version,
            LogFormat.read(UInt32.self, bytes, at: 12) == UInt32(level),
            Int64(bitPattern: LogFormat.read(UInt64.self, bytes, at: 16)) == first,
            Int64(bitPattern: LogFormat.read(UInt64.self, bytes, at: 24)) == last,
            bytes[32..<48].elementsEqual(withUnsafeBytes(of: lastID.uuid) { Array($0) }),
            LogFormat.read(UInt64.self, bytes, at: 48) == UInt64(bytes.count - headerSize)
        else { return nil }
        let payload = bytes[headerSize...]
        guard CRC32C.checksum(payload) == LogFormat.read(UInt32.self, bytes, at: 56),
            let encoded = try? ZstdDecompressor(maximumOutputSize: SnapshotFile.outputBound(payload.count))
                .decompress(payload),
            let block = try? BinaryCodec.decodeTransaction(encoded)
        else { return nil }
        return block
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
