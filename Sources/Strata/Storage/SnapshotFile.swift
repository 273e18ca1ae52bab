import Foundation

/// A snapshot: a whole `Database` in `snapshot-<basis t, 20 digits>.strata`.
///
///     header v3 := "STRATSNP" (8) · format version (u32 LE) · directory size (u32 LE) · basis t (i64 LE)
///                  · record count (u64 LE) · payload size (u64 LE) · ID of transaction t (16)
///                  · directory CRC32C (u32 LE) · CRC32C of the previous 60 bytes (u32 LE)    64 bytes
///     payload v3 := directory · zstd-compressed chunks (see SnapshotFile+Chunks.swift)
///     header v2 := the same with the reserved u32 0 in place of the directory size, and
///                  the payload's CRC32C in place of the directory's
///     payload v2 := zstd frame (with its own content checksum) of `BinaryCodec.encode(database)`
///     header v1 := the v2 header without the ID, its checksum at 44                     48 bytes
///
/// Versions 1 and 2 are still read; a store writes version 3, so the next
/// snapshot replaces them.
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
    static let version: UInt32 = 3
    static let headerSize = 64
    static let version1HeaderSize = 48
    static let prefix = "snapshot-"
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
        /// The directory's size in bytes (version 3; 0 before).
        var directorySize = 0
        var version: UInt32 = SnapshotFile.version
    }

    static func name(basis: Int64) -> String { FileName.numbered(prefix, basis, suffix) }

    /// The basis named by a snapshot file name, or nil for other files.
    static func basis(ofName name: String) -> Int64? { FileName.number(in: name, prefix: prefix, suffix: suffix) }

    /// - Parameter basisID: the ID of transaction `database.basis` (the
    ///   zero UUID for t 0).
    static func encode(_ database: Database, basisID: UUID, level: Int32) throws -> [UInt8] {
        try encodeChunked(database, basisID: basisID, level: level)
    }

    /// The version 2 bytes of `database` (one zstd frame of the codec's
    /// encoding, in its format 3 as such files held): still read, written
    /// only by tests.
    static func encodeVersion2(_ database: Database, basisID: UUID, level: Int32) throws -> [UInt8] {
        let payload = try ZstdCompressor(level: level).compress(try BinaryCodec.encode(database, version: 3))
        var bytes = FileHeader.encode(.snapshot, version: 2, size: headerSize) {
            $0.append(UInt32(0))
            $0.append(UInt64(bitPattern: database.basis))
            $0.append(UInt64(database.recordCount))
            $0.append(UInt64(payload.count))
            $0.append(basisID)
            $0.append(CRC32C.checksum(payload))
        }
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// Checks the header of a snapshot file's first bytes.
    /// - Throws: ``FormatError`` naming `file`.
    static func header(_ bytes: [UInt8], file: String) throws(FormatError) -> Header {
        let header: FileHeader
        do {
            // Every version after 2 keeps the 64-byte header.
            header = try FileHeader.decode(
                bytes,
                kind: .snapshot,
                size: { $0 == 1 ? version1HeaderSize : headerSize },
                supported: version
            )
        } catch {
            throw error.in(file)
        }
        let count = header.read(UInt64.self, at: 24)
        let payloadSize = header.read(UInt64.self, at: 32)
        guard count <= UInt64(Int.max), payloadSize <= UInt64(Int.max) else {
            throw FormatError(.snapshot, file: file, offset: 24, .invalidField("impossible sizes in the header"))
        }
        return Header(
            basis: Int64(bitPattern: header.read(UInt64.self, at: 16)),
            recordCount: Int(count),
            payloadSize: Int(payloadSize),
            payloadChecksum: header.read(UInt32.self, at: header.size - 8),
            basisID: header.version == 1 ? nil : header.uuid(at: 40),
            size: header.size,
            directorySize: header.version >= 3 ? Int(header.read(UInt32.self, at: 12)) : 0,
            version: header.version
        )
    }

    /// Reads and decodes the snapshot `name` in `directory`: a version 3
    /// file chunk by chunk as it decodes (``Source``), an older one whole.
    /// - Returns: the value, the file's size in bytes and the basis
    ///   transaction's ID (nil for a v1 file).
    static func read(
        _ name: String,
        in directory: String,
        fileSystem: any FileSystem
    ) throws -> (Database, size: Int, basisID: UUID?) {
        let source = Source(file: try fileSystem.open(directory + "/" + name, create: false))
        defer { source.close() }
        let size = try source.size()
        let header = try header(of: source, size: size, file: name)
        let (database, basisID) =
            header.version >= 3
            ? (try decodeChunked(source, size: size, header: header, file: name), header.basisID)
            : try decode(Array(try source.read(0..<size)), file: name)
        // The name is what open trusts (a v1 file has no ID): it must agree
        // with the header.
        if let named = basis(ofName: name), named != database.basis {
            throw FormatError(
                .snapshot,
                file: name,
                offset: 16,
                .invalidField("header basis t \(database.basis) differs from the name's t \(named)")
            )
        }
        return (database, size, basisID)
    }

    /// The checked header of the snapshot `name` in `directory`, and the
    /// file's size, without reading its payload. O(1).
    /// - Throws: ``FormatError`` naming `name`; what the file system throws.
    static func header(
        of name: String,
        in directory: String,
        fileSystem: any FileSystem
    ) throws -> (Header, size: Int) {
        let source = Source(file: try fileSystem.open(directory + "/" + name, create: false))
        defer { source.close() }
        let size = try source.size()
        return (try header(of: source, size: size, file: name), size)
    }

    /// The checked header of the file `source` reads, of `size` bytes (a
    /// short file gives its few bytes, which the check refuses).
    /// - Throws: ``FormatError`` naming `file`; what `source` throws when
    ///   a read fails.
    static func header(of source: Source, size: Int, file: String) throws -> Header {
        // Up to a newer version's header, which may have grown.
        try header(Array(try source.read(0..<min(size, FileHeader.maximumNewerSize))), file: file)
    }

    /// Decodes a whole snapshot file, checking every layer.
    /// - Returns: the value and its basis transaction's ID (nil for v1).
    /// - Throws: ``FormatError`` naming `file`.
    static func decode(_ bytes: [UInt8], file: String) throws(FormatError) -> (Database, basisID: UUID?) {
        let header = try header(bytes, file: file)
        if header.version >= 3 {
            let database = try readingMemory {
                try decodeChunked(Source(bytes), size: bytes.count, header: header, file: file)
            }
            return (database, header.basisID)
        }
        guard bytes.count - header.size == header.payloadSize else {
            throw damagedPayload(size: bytes.count, header: header, file: file)
        }
        let payload = bytes[header.size...]
        func damaged(_ reason: String) -> FormatError {
            FormatError(.snapshot, file: file, offset: header.size, .damaged(reason))
        }
        guard CRC32C.checksum(payload) == header.payloadChecksum else { throw damaged("payload checksum mismatch") }
        let database: Database
        do {
            let encoded = try ZstdDecompressor(maximumOutputSize: outputBound(payload.count)).decompress(payload)
            database = try BinaryCodec.decodeDatabase(encoded)
        } catch {
            throw damaged("\(error)")
        }
        guard database.basis == header.basis, database.recordCount == header.recordCount else {
            throw damaged("content disagrees with the header")
        }
        return (database, header.basisID)
    }

    /// The layout of a version 3 file with its chunks stored raw, holding
    /// `database`: the codec's encoding of a database (after its own
    /// header), so that decoding one runs on every core as opening a
    /// snapshot does. The basis ID is the zero UUID.
    static func encodeRaw(_ database: Database) -> [UInt8] {
        do {
            return try encodeChunked(
                database,
                basisID: UUID(uuid: UUID.zero),
                level: nil
            )
        } catch {
            // Only a compressor can fail, and raw chunks make none.
            preconditionFailure("encoding raw chunks failed: \(error)")
        }
    }

    /// Decodes the bytes of ``encodeRaw(_:)`` that start at `start` of
    /// `bytes`, checking everything a snapshot's decode checks, then
    /// `check` (what it throws passes through).
    /// - Throws: ``FormatError`` with offsets from `start`.
    static func decodeRaw(
        _ bytes: [UInt8],
        from start: Int,
        check: (Database) throws -> Void
    ) throws -> Database {
        let source = Source(bytes, from: start)
        let size = try source.size()
        let header = try header(of: source, size: size, file: "")
        guard header.version == 3 else {
            // The version follows the 8-byte magic.
            throw FormatError(
                .snapshot,
                file: "",
                offset: 8,
                .invalidField("version \(header.version) where chunks are stored raw")
            )
        }
        return try decodeChunked(source, size: size, header: header, file: "", compressed: false, check: check)
    }

    /// A file of `size` bytes whose payload is not the size its header says.
    static func damagedPayload(size: Int, header: Header, file: String) -> FormatError {
        FormatError(
            .snapshot,
            file: file,
            offset: header.size,
            .damaged("payload is \(size - header.size) bytes, header says \(header.payloadSize)")
        )
    }

    /// The most a checked zstd payload of `size` bytes may decompress to:
    /// the decompressor's default 4 GiB would refuse a large store's own
    /// snapshot, and a bound in proportion still refuses a frame claiming
    /// more than any real encoding compresses from.
    static func outputBound(_ size: Int) -> Int {
        max(ZstdDecompressor.defaultMaximumOutputSize, min(size, Int.max / 256) * 256)
    }

    /// Writes `database` durably into `directory`; returns the file name.
    /// With `identity`, only while `directory` is still that directory
    /// (not removed, or made again, since the store opened).
    static func write(
        _ database: Database,
        basisID: UUID,
        to directory: String,
        fileSystem: any FileSystem,
        level: Int32,
        identity: FileIdentity? = nil
    ) throws -> (name: String, size: Int) {
        let bytes = try encode(database, basisID: basisID, level: level)
        try fileSystem.checkIdentity(of: directory, is: identity, writing: "a snapshot into")
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
