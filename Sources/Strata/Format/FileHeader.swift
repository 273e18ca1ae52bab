import Foundation

/// The header every Strata file starts with:
///
///     header := "STRAT" · kind (3 ASCII letters) · format version (u32 LE)
///               · the kind's fields · CRC32C of every header byte before it (u32 LE)
///
/// One type writes and checks it for every kind, so what "a header is
/// sound" means is decided once: the magic names the kind; the checksum is
/// checked before the version is believed (a damaged version field is
/// damage, not a newer format), at the size of the version's header, or,
/// for a version newer than the build reads, at any size up to 512 bytes
/// (a newer header may have grown); a version newer than the build reads
/// is reported as such; the fields are read only inside the checked bytes.
/// Each kind's field layout, by version, is in its own file here.
struct FileHeader {
    /// What a file is, spelled in its magic.
    enum Kind: String, Sendable, CaseIterable {
        case logSegment = "LOG"
        case snapshot = "SNP"
        case block = "BLK"
        case manifest = "MAN"
        case segmentSummary = "SUM"

        /// The 8 bytes a file of this kind starts with.
        var magic: [UInt8] { Array(("STRAT" + rawValue).utf8) }

        /// How the kind reads in messages.
        var noun: String {
            switch self {
            case .logSegment: return "log segment"
            case .snapshot: return "snapshot"
            case .block: return "compaction block"
            case .manifest: return "manifest"
            case .segmentSummary: return "log segment summary"
            }
        }
    }

    /// Bytes before the kind's fields: magic and version.
    static let prefixSize = 12
    static let checksumSize = 4

    let kind: Kind
    let version: UInt32
    /// The whole header, checksum included.
    let bytes: [UInt8]

    /// The header's size in bytes.
    var size: Int { bytes.count }

    /// A header of `kind` and `version` whose fields are what `fields`
    /// appends; `size` is the whole header's (checked against the layout).
    static func encode(
        _ kind: Kind,
        version: UInt32,
        size: Int,
        fields: (inout FieldWriter) -> Void
    ) -> [UInt8] {
        var writer = FieldWriter(bytes: kind.magic)
        LittleEndian.append(version, to: &writer.bytes)
        fields(&writer)
        precondition(writer.bytes.count == size - checksumSize, "\(kind) header fields do not fill \(size) bytes")
        LittleEndian.append(CRC32C.checksum(writer.bytes), to: &writer.bytes)
        return writer.bytes
    }

    /// Checks the header at the start of `bytes`.
    ///
    /// - Parameters:
    ///   - size: the header's size for a version (called with the version
    ///     read before the checksum is checked, so it must answer for any
    ///     value: a newer version keeps the newest known size).
    ///   - supported: the newest version this build reads.
    /// - Throws: ``FormatError`` when the bytes are too short for the
    ///   header, name another kind, fail the checksum, or carry a version
    ///   newer than `supported` or 0.
    static func decode(
        _ bytes: some Collection<UInt8>,
        kind: Kind,
        size: (UInt32) -> Int,
        supported: UInt32
    ) throws(FormatError) -> FileHeader {
        let available = Array(bytes.prefix(prefixSize))
        guard available.count == prefixSize else {
            throw FormatError(kind, offset: 0, .shortHeader(size: bytes.count, needed: prefixSize))
        }
        guard Array(available[0..<8]) == kind.magic else {
            throw FormatError(kind, offset: 0, .badMagic)
        }
        let version = LittleEndian.read(UInt32.self, available, at: 8)
        let headerSize = size(version)
        let header = Array(bytes.prefix(headerSize))
        guard header.count == headerSize else {
            throw FormatError(kind, offset: 0, .shortHeader(size: header.count, needed: headerSize))
        }
        let end = headerSize - checksumSize
        guard LittleEndian.read(UInt32.self, header, at: end) == CRC32C.checksum(header[0..<end]) else {
            // A newer build's header may have grown: its checksum then
            // closes it at another size, where it is found.
            if version > supported, hasChecksum(in: bytes, otherThan: headerSize) {
                throw FormatError(kind, offset: 8, .newerVersion(found: version, supported: supported))
            }
            throw FormatError(kind, offset: 0, .headerChecksumMismatch)
        }
        if version > supported {
            throw FormatError(kind, offset: 8, .newerVersion(found: version, supported: supported))
        }
        guard version >= 1 else { throw FormatError(kind, offset: 8, .invalidField("format version 0")) }
        return FileHeader(kind: kind, version: version, bytes: header)
    }

    /// Whether some prefix of `bytes` of up to ``maximumNewerSize`` bytes,
    /// other than `size`, ends with the CRC32C of the bytes before it: the
    /// header of a newer version, whose size this build does not know
    /// (damage passes this test with odds of about one in a million).
    static func hasChecksum(in bytes: some Collection<UInt8>, otherThan size: Int) -> Bool {
        let prefix = Array(bytes.prefix(maximumNewerSize))
        var candidate = prefixSize + checksumSize
        while candidate <= prefix.count {
            let end = candidate - checksumSize
            if candidate != size, LittleEndian.read(UInt32.self, prefix, at: end) == CRC32C.checksum(prefix[0..<end]) {
                return true
            }
            candidate += 1
        }
        return false
    }

    /// The largest header of a newer version that ``hasChecksum(in:otherThan:)`` looks for.
    static let maximumNewerSize = 512

    /// The integer at `offset` of the header.
    /// - Precondition: the layout puts it inside the header.
    func read<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        precondition(offset + MemoryLayout<T>.size <= size - Self.checksumSize, "field outside the header")
        return LittleEndian.read(type, bytes, at: offset)
    }

    /// The UUID at `offset` of the header.
    func uuid(at offset: Int) -> UUID {
        precondition(offset + 16 <= size - Self.checksumSize, "field outside the header")
        return bytes[offset..<(offset + 16)].withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    /// Appends a header's fields in order.
    struct FieldWriter {
        var bytes: [UInt8]

        mutating func append<T: FixedWidthInteger>(_ value: T) {
            LittleEndian.append(value, to: &bytes)
        }

        mutating func append(_ id: UUID) {
            withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
        }
    }
}
