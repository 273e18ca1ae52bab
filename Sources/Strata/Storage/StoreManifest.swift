import Foundation

/// What a store's directory must hold, in `<store>/manifest`: the proof that
/// the directory is a store, how far its history is known to reach, and a
/// cut of the log that was started but may not have finished.
///
///     manifest := "STRATMAN" (8) · format version (u32 LE) · flags (u32 LE, bit 0: a cut is pending)
///                 · durable through t (i64 LE) · newest segment's first record (i64 LE, 0: none)
///                 · pending cut: keep through t (i64 LE) · ID of that transaction (16)
///                 · CRC32C of the previous 56 bytes (u32 LE)                          60 bytes
///
/// Open compares the log it finds with the manifest: a log that ends before
/// `durableThrough`, or whose newest segment is not the one the manifest
/// names, has lost acknowledged history (a deleted or cut segment), which
/// a torn tail alone can never explain. The manifest is rewritten through a
/// temporary file, synced and renamed, so it is always one whole version.
struct StoreManifest: Equatable, Sendable {
    static let fileName = "manifest"
    static let version: UInt32 = 1
    static let size = 60

    /// A cut of the log to transaction `t` (whose ID is `id`; the zero UUID
    /// for t 0) that was started and must be finished before anything else.
    struct PendingCut: Equatable, Sendable {
        var t: Int64
        var id: UUID
    }

    /// Every transaction through this one was durable when the manifest was
    /// written (at a segment rollover, a close, a cut).
    var durableThrough: Int64 = 0
    /// The first record of the newest log segment created (0: none yet).
    var newestSegment: Int64 = 0
    var pendingCut: PendingCut?

    func encoded() -> [UInt8] {
        FileHeader.encode(.manifest, version: Self.version, size: Self.size) {
            $0.append(UInt32(pendingCut == nil ? 0 : 1))
            $0.append(UInt64(bitPattern: durableThrough))
            $0.append(UInt64(bitPattern: newestSegment))
            $0.append(UInt64(bitPattern: pendingCut?.t ?? 0))
            $0.append(pendingCut?.id ?? UUID(uuid: UUID.zero))
        }
    }

    /// Decodes a manifest file's bytes.
    /// - Throws: ``FormatError`` naming `file`: damage, or a newer format.
    /// `fileSize`: the file's length, when `bytes` holds only its start.
    static func decode(_ bytes: [UInt8], file: String, fileSize: Int? = nil) throws(FormatError) -> StoreManifest {
        let length = fileSize ?? bytes.count
        guard length == size else {
            // A newer build's manifest may have another length: reported
            // as newer (never rebuilt over as damage), by its magic and
            // version, whose checksum this build cannot locate.
            let kind = FileHeader.Kind.manifest
            if bytes.count >= 12, Array(bytes[0..<8]) == kind.magic {
                let found = LittleEndian.read(UInt32.self, bytes, at: 8)
                if found > version {
                    throw FormatError(kind, file: file, offset: 8, .newerVersion(found: found, supported: version))
                }
            }
            throw FormatError(kind, file: file, offset: 0, .invalidField("\(length) bytes where \(size) were expected"))
        }
        let header: FileHeader
        do {
            header = try FileHeader.decode(bytes, kind: .manifest, size: { _ in size }, supported: version)
        } catch {
            throw error.in(file)
        }
        let flags = header.read(UInt32.self, at: 12)
        let durable = Int64(bitPattern: header.read(UInt64.self, at: 16))
        let newest = Int64(bitPattern: header.read(UInt64.self, at: 24))
        let cut = Int64(bitPattern: header.read(UInt64.self, at: 32))
        guard flags <= 1, durable >= 0, newest >= 0, cut >= 0 else {
            throw FormatError(.manifest, file: file, offset: 12, .invalidField("impossible fields"))
        }
        return StoreManifest(
            durableThrough: durable,
            newestSegment: newest,
            pendingCut: flags == 1 ? PendingCut(t: cut, id: header.uuid(at: 40)) : nil
        )
    }

    /// Reads `<directory>/manifest`; nil when there is none.
    static func read(in directory: String, fileSystem: any FileSystem) throws -> StoreManifest? {
        let path = directory + "/" + fileName
        guard fileSystem.exists(path) else { return nil }
        let file = try fileSystem.open(path, create: false)
        defer { file.close() }
        let length = try file.size()
        return try decode(try file.read(at: 0, count: min(length, size)), file: path, fileSize: length)
    }

    /// Replaces `<directory>/manifest` durably (temporary file, sync, rename,
    /// directory sync): a crash leaves the old manifest or this one.
    func write(in directory: String, fileSystem: any FileSystem) throws {
        let path = directory + "/" + Self.fileName
        let temporary = path + ".tmp"
        let file = try fileSystem.open(temporary, create: true)
        do {
            try file.truncate(to: 0)
            try file.write(encoded(), at: 0)
            try file.sync()
            file.close()
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(directory)
        } catch {
            file.close()
            try? fileSystem.remove(temporary)
            throw error
        }
    }
}

extension UUID {
    /// The all-zero UUID: the ID of "no transaction" (t 0).
    static let zero: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}
