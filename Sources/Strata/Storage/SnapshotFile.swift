/// A snapshot: a whole `Database`, encoded and zstd-compressed, in
/// `snapshot-<basis t, 20 digits>.strata`.
///
///     header := "STRATSNP" (8) · format version (u32 LE) · reserved (u32, 0) · basis t (i64 LE)
///               · record count (u64 LE) · payload size (u64 LE) · payload CRC32C (u32 LE)
///               · CRC32C of the previous 44 bytes (u32 LE)                              48 bytes
///     payload := zstd frame (with its own content checksum) of `BinaryCodec.encode(database)`
///
/// Written to a temporary file, synced, renamed into place and the
/// directory synced, so a crash leaves either the old set of snapshots or
/// the new one, never a partial file under a snapshot's name.
enum SnapshotFile {
    static let magic: [UInt8] = Array("STRATSNP".utf8)
    static let version: UInt32 = 1
    static let headerSize = 48
    static let suffix = ".strata"
    static let temporarySuffix = ".tmp"

    struct Header: Equatable {
        var basis: Int64
        var recordCount: Int
        var payloadSize: Int
        var payloadChecksum: UInt32
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

    static func encode(_ database: Database, level: Int32) throws -> [UInt8] {
        let payload = try ZstdCompressor(level: level).compress(BinaryCodec.encode(database))
        var bytes = magic
        LogFormat.append(version, to: &bytes)
        LogFormat.append(UInt32(0), to: &bytes)
        LogFormat.append(UInt64(bitPattern: database.basis), to: &bytes)
        LogFormat.append(UInt64(database.recordCount), to: &bytes)
        LogFormat.append(UInt64(payload.count), to: &bytes)
        LogFormat.append(CRC32C.checksum(payload), to: &bytes)
        LogFormat.append(CRC32C.checksum(bytes), to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// Checks the header of a snapshot file's first bytes.
    static func header(_ bytes: [UInt8], file: String) throws -> Header {
        guard bytes.count >= headerSize else {
            throw StoreError.corruptSnapshot(file: file, reason: "\(bytes.count) bytes, shorter than the header")
        }
        guard Array(bytes[0..<8]) == magic else {
            throw StoreError.corruptSnapshot(file: file, reason: "not a Strata snapshot (bad magic)")
        }
        // The checksum first: a damaged version field is damage, not a newer
        // format. (The 48-byte header keeps this layout in every version.)
        guard LogFormat.read(UInt32.self, bytes, at: 44) == CRC32C.checksum(bytes[0..<44]) else {
            throw StoreError.corruptSnapshot(file: file, reason: "header checksum mismatch")
        }
        let version = LogFormat.read(UInt32.self, bytes, at: 8)
        if version > Self.version {
            throw StoreError.unsupportedVersion(file: file, found: version, supported: Self.version)
        }
        guard version >= 1 else { throw StoreError.corruptSnapshot(file: file, reason: "format version 0") }
        let count = LogFormat.read(UInt64.self, bytes, at: 24)
        let size = LogFormat.read(UInt64.self, bytes, at: 32)
        guard count <= UInt64(Int.max), size <= UInt64(Int.max) else {
            throw StoreError.corruptSnapshot(file: file, reason: "impossible sizes in the header")
        }
        return Header(
            basis: Int64(bitPattern: LogFormat.read(UInt64.self, bytes, at: 16)),
            recordCount: Int(count),
            payloadSize: Int(size),
            payloadChecksum: LogFormat.read(UInt32.self, bytes, at: 40)
        )
    }

    /// Reads and decodes the snapshot `name` in `directory`.
    /// - Returns: the value and the file's size in bytes.
    static func read(_ name: String, in directory: String, fileSystem: any FileSystem) throws -> (Database, size: Int) {
        let file = try fileSystem.open(directory + "/" + name, create: false)
        defer { file.close() }
        let bytes = try file.read(at: 0, count: try file.size())
        return (try decode(bytes, file: name), bytes.count)
    }

    /// Decodes a whole snapshot file, checking every layer.
    static func decode(_ bytes: [UInt8], file: String) throws -> Database {
        let header = try header(bytes, file: file)
        guard bytes.count - headerSize == header.payloadSize else {
            throw StoreError.corruptSnapshot(
                file: file,
                reason: "payload is \(bytes.count - headerSize) bytes, header says \(header.payloadSize)"
            )
        }
        let payload = bytes[headerSize...]
        guard CRC32C.checksum(payload) == header.payloadChecksum else {
            throw StoreError.corruptSnapshot(file: file, reason: "payload checksum mismatch")
        }
        let database: Database
        do {
            let encoded = try ZstdDecompressor().decompress(payload)
            database = try BinaryCodec.decodeDatabase(encoded)
        } catch {
            throw StoreError.corruptSnapshot(file: file, reason: "\(error)")
        }
        guard database.basis == header.basis, database.recordCount == header.recordCount else {
            throw StoreError.corruptSnapshot(file: file, reason: "content disagrees with the header")
        }
        return database
    }

    /// Writes `database` durably into `directory`; returns the file name.
    static func write(
        _ database: Database,
        to directory: String,
        fileSystem: any FileSystem,
        level: Int32
    ) throws -> (name: String, size: Int) {
        let bytes = try encode(database, level: level)
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
