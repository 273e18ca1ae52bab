import Foundation

/// A snapshot: a whole `Database`, encoded and zstd-compressed, in
/// `snapshot-<basis t, 20 digits>.strata`.
///
///     header v2 := "STRATSNP" (8) · format version (u32 LE) · reserved (u32, 0) · basis t (i64 LE)
///                  · record count (u64 LE) · payload size (u64 LE) · ID of transaction t (16)
///                  · payload CRC32C (u32 LE) · CRC32C of the previous 60 bytes (u32 LE)    64 bytes
///     header v1 := the same without the ID, its checksum at 44                          48 bytes
///     payload   := zstd frame (with its own content checksum) of `BinaryCodec.encode(database)`
///
/// The basis transaction's ID ties a snapshot to the history it was taken
/// from: open uses it only when the log's transaction t has that ID, so a
/// snapshot of a history since cut and grown again is never loaded. (v1
/// files, written before, carry no ID and are trusted by t alone; every
/// version after 2 keeps the 64-byte header with its checksum at 60.)
///
/// Written to a temporary file, synced, renamed into place and the
/// directory synced, so a crash leaves either the old set of snapshots or
/// the new one, never a partial file under a snapshot's name.
enum SnapshotFile {
    static let magic: [UInt8] = Array("STRATSNP".utf8)
    static let version: UInt32 = 2
    static let headerSize = 64
    static let version1HeaderSize = 48
    static let suffix = ".strata"
    static let temporarySuffix = ".tmp"

    struct Header: Equatable {
        var basis: Int64
        var recordCount: Int
        var payloadSize: Int
        var payloadChecksum: UInt32
        /// The basis transaction's ID (nil in a v1 file).
        var basisID: UUID?
        var size: Int
    }

    static func name(basis: Int64) -> String {
        let digits = String(basis)
        return "snapshot-" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + suffix
    }

    /// The basis named by a snapshot file name, or nil for other files.
    static func basis(ofName name: String) -> Int64? {
        guard name.hasPrefix("snapshot-"), name.hasSuffix(suffix) else { return nil }
        return Int64(name.dropFirst(9).dropLast(suffix.count))
    }

    /// - Parameter basisID: the ID of transaction `database.basis` (the
    ///   zero UUID for t 0).
    static func encode(_ database: Database, basisID: UUID, level: Int32) throws -> [UInt8] {
        let payload = try ZstdCompressor(level: level).compress(BinaryCodec.encode(database))
        var bytes = magic
        LogFormat.append(version, to: &bytes)
        LogFormat.append(UInt32(0), to: &bytes)
        LogFormat.append(UInt64(bitPattern: database.basis), to: &bytes)
        LogFormat.append(UInt64(database.recordCount), to: &bytes)
        LogFormat.append(UInt64(payload.count), to: &bytes)
        withUnsafeBytes(of: basisID.uuid) { bytes.append(contentsOf: $0) }
        LogFormat.append(CRC32C.checksum(payload), to: &bytes)
        LogFormat.append(CRC32C.checksum(bytes), to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// Checks the header of a snapshot file's first bytes.
    static func header(_ bytes: [UInt8], file: String) throws -> Header {
        guard bytes.count >= version1HeaderSize else {
            throw StoreError.corruptSnapshot(file: file, reason: "\(bytes.count) bytes, shorter than the header")
        }
        guard Array(bytes[0..<8]) == magic else {
            throw StoreError.corruptSnapshot(file: file, reason: "not a Strata snapshot (bad magic)")
        }
        // The checksum first: a damaged version field is damage, not a newer
        // format (a v2 version damaged into 1 fails v1's checksum).
        let version = LogFormat.read(UInt32.self, bytes, at: 8)
        let size = version == 1 ? version1HeaderSize : headerSize
        guard bytes.count >= size,
            LogFormat.read(UInt32.self, bytes, at: size - 4) == CRC32C.checksum(bytes[0..<(size - 4)])
        else {
            throw StoreError.corruptSnapshot(file: file, reason: "header checksum mismatch")
        }
        if version > Self.version {
            throw StoreError.unsupportedVersion(file: file, found: version, supported: Self.version)
        }
        guard version >= 1 else { throw StoreError.corruptSnapshot(file: file, reason: "format version 0") }
        let count = LogFormat.read(UInt64.self, bytes, at: 24)
        let payloadSize = LogFormat.read(UInt64.self, bytes, at: 32)
        guard count <= UInt64(Int.max), payloadSize <= UInt64(Int.max) else {
            throw StoreError.corruptSnapshot(file: file, reason: "impossible sizes in the header")
        }
        let basisID =
            version == 1 ? nil : bytes[40..<56].withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        return Header(
            basis: Int64(bitPattern: LogFormat.read(UInt64.self, bytes, at: 16)),
            recordCount: Int(count),
            payloadSize: Int(payloadSize),
            payloadChecksum: LogFormat.read(UInt32.self, bytes, at: size - 8),
            basisID: basisID,
            size: size
        )
    }

    /// Reads and decodes the snapshot `name` in `directory`.
    /// - Returns: the value, the file's size in bytes and the basis
    ///   transaction's ID (nil for a v1 file).
    static func read(
        _ name: String,
        in directory: String,
        fileSystem: any FileSystem
    ) throws -> (Database, size: Int, basisID: UUID?) {
        let file = try fileSystem.open(directory + "/" + name, create: false)
        defer { file.close() }
        let bytes = try file.read(at: 0, count: try file.size())
        let (database, basisID) = try decode(bytes, file: name)
        return (database, bytes.count, basisID)
    }

    /// Decodes a whole snapshot file, checking every layer.
    /// - Returns: the value and its basis transaction's ID (nil for v1).
    static func decode(_ bytes: [UInt8], file: String) throws -> (Database, basisID: UUID?) {
        let header = try header(bytes, file: file)
        guard bytes.count - header.size == header.payloadSize else {
            throw StoreError.corruptSnapshot(
                file: file,
                reason: "payload is \(bytes.count - header.size) bytes, header says \(header.payloadSize)"
            )
        }
        let payload = bytes[header.size...]
        guard CRC32C.checksum(payload) == header.payloadChecksum else {
            throw StoreError.corruptSnapshot(file: file, reason: "payload checksum mismatch")
        }
        let database: Database
        do {
            let encoded = try ZstdDecompressor(maximumOutputSize: outputBound(payload.count)).decompress(payload)
            database = try BinaryCodec.decodeDatabase(encoded)
        } catch {
            throw StoreError.corruptSnapshot(file: file, reason: "\(error)")
        }
        guard database.basis == header.basis, database.recordCount == header.recordCount else {
            throw StoreError.corruptSnapshot(file: file, reason: "content disagrees with the header")
        }
        return (database, header.basisID)
    }

    /// The most a checked zstd payload of `size` bytes may decompress to:
    /// the decompressor's default 4 GiB would refuse a large store's own
    /// snapshot, and a bound in proportion still refuses a frame claiming
    /// more than any real encoding compresses from.
    static func outputBound(_ size: Int) -> Int {
        max(ZstdDecompressor.defaultMaximumOutputSize, min(size, Int.max / 256) * 256)
    }

    /// Writes `database` durably into `directory`; returns the file name.
    static func write(
        _ database: Database,
        basisID: UUID,
        to directory: String,
        fileSystem: any FileSystem,
        level: Int32
    ) throws -> (name: String, size: Int) {
        let bytes = try encode(database, basisID: basisID, level: level)
        let name = name(basis: database.basis)
        let temporary = directory + "/" + name + temporarySuffix
        let file = try fileSystem.open(temporary, create: true)
        do {
            try file.truncate(to: 0)
            try file.write(bytes, at: 0)
            try file.sync()
            file.close()
            try fileSystem.rename(temporary, to: directory + "/" + name)
            try fileSystem.syncDirectory(directory)
        } catch {
            file.close()
            try? fileSystem.remove(temporary)
            throw error
        }
        return (name, bytes.count)
    }
}
