import Foundation
import PersistentCollections
import Synchronization

// Snapshot version 3: independently compressed chunks behind a directory,
// so that every core decodes its share and a record loads as a copy of its
// bytes.
//
//     file      := header (64 bytes; at 12 the directory's size, at 56 its CRC32C) · directory · chunk*
//     directory := basis (zigzag) · names · tables · chunks             (the codec's varints and strings)
//     names     := count, name*                  the field and table names records use; local ID = position
//     tables    := count, (name, record count, index count, index definition*)*   sorted by name
//     chunks    := count, (kind, table number, [index number], item count, stored size, raw size, CRC32C)*
//     chunk     := zstd frame (content checksum) of its raw bytes, in directory order, nothing between
//     records chunk (kind 0) := (record ID, record in packed form with local name IDs)*
//     entries chunk (kind 1) := a run of one index's entries, front-coded afresh (BinaryCodec+IndexEntries)
//
// Each table's records fill records chunks of about `chunkSize` raw bytes,
// in ID order (any order reads back; in ID order, a reader allocates them
// so that reading them by ID reads memory in order); each index's entries
// fill entries chunks the same way (front coding restarts in each, so
// each decodes alone). Local name IDs are dense, numbered in the order of
// the writer's process IDs, so a reader that numbers them the same way (a
// fresh process: it reserves them in that order) copies the records
// without rewriting a byte.
//
// The codec's encoding of a whole database (`BinaryCodec.encode(_:)`,
// format 4) is this layout after the codec's own header, with each chunk
// stored raw: its stored size is its raw size and its checksum covers the
// raw bytes; it is read with `compressed: false`.
//
// Reading checks every chunk's CRC32C before decompressing it, every
// record as strictly as the codec does (structure, UTF-8, order, names),
// every index's entries for form and order, unique IDs, and that counts
// agree with the directory; it does not recompute index entries from the
// records (that is `Store.verify()`'s deep check). A damaged chunk refuses
// the whole snapshot: nothing is half loaded.

extension SnapshotFile {
    /// Raw bytes per records chunk: ~200 chunks at 1M songs, enough to keep
    /// every core busy, small enough that a chunk's buffer stays in cache.
    static let chunkSize = 1 << 20

    enum ChunkKind: UInt8 {
        case records = 0
        case entries = 1
    }

    /// One chunk's entry in the directory.
    struct Chunk {
        var kind: ChunkKind
        var table: Int
        var index: Int
        var count: Int
        var storedSize: Int
        var rawSize: Int
        var checksum: UInt32
        /// From the start of the file.
        var offset = 0
    }

    // MARK: Writing

    /// The raw records chunks of `table`, in ID order: a process that loads
    /// the snapshot allocates the records in that order, so reading them by
    /// ID (an export, a range of IDs) reads memory in order. Built on every
    /// core, a run of IDs each (a chunk ends at its run's end).
    static func recordChunks(of table: Table) -> [(count: Int, bytes: [UInt8])] {
        let ids = table.sortedIDs()
        let records = table.records
        let runLength = 1 << 16
        let runs = stride(from: 0, to: ids.count, by: runLength).map { $0..<Swift.min(ids.count, $0 + runLength) }
        let built = Mutex([[(count: Int, bytes: [UInt8])]](repeating: [], count: runs.count))
        parallel(runs.count) { r in
            var chunks: [(count: Int, bytes: [UInt8])] = []
            var writer = ByteWriter(capacity: chunkSize + chunkSize / 4)
            var count = 0
            // A few hundred at a time: looked up together, their memory
            // reads overlap.
            for start in stride(from: runs[r].lowerBound, to: runs[r].upperBound, by: 256) {
                let batch = ids[start..<Swift.min(runs[r].upperBound, start + 256)]
                for (id, record) in zip(batch, records.values(forKeys: batch)) {
                    writer.recordID(id)
                    writer.bytes.append(contentsOf: record!._bytes)
                    count += 1
                    if writer.bytes.count >= chunkSize {
                        chunks.append((count, writer.bytes))
                        writer = ByteWriter(capacity: chunkSize + chunkSize / 4)
                        count = 0
                    }
                }
            }
            if count > 0 { chunks.append((count, writer.bytes)) }
            built.withLock { $0[r] = chunks }
        }
        return built.withLock { $0 }.flatMap { $0 }
    }

    /// The version 3 bytes of `database`: chunks built, then compressed
    /// one per core at zstd `level`, or stored raw for nil (the codec's
    /// encoding of a database, `BinaryCodec.encode(_:)`, which a reader
    /// then decodes with `compressed: false`).
    static func encodeChunked(_ database: Database, basisID: UUID, level: Int32?) throws -> [UInt8] {
        let tables = database.tables.keys.sorted().map { ($0, database.tables[$0]!) }
        var built: [(chunk: Chunk, bytes: [UInt8])] = []
        for (number, (_, table)) in tables.enumerated() {
            for (count, bytes) in recordChunks(of: table) {
                let chunk = Chunk(
                    kind: .records,
                    table: number,
                    index: 0,
                    count: count,
                    storedSize: 0,
                    rawSize: 0,
                    checksum: 0
                )
                built.append((chunk, bytes))
            }
            for (i, index) in table.indexes.enumerated() {
                for block in ByteWriter.indexEntryBlocks(index, size: chunkSize) {
                    let chunk = Chunk(
                        kind: .entries,
                        table: number,
                        index: i,
                        count: block.count,
                        storedSize: 0,
                        rawSize: 0,
                        checksum: 0
                    )
                    built.append((chunk, block.bytes))
                }
            }
        }
        let raws = built

        // The names the records use, numbered densely in process ID order.
        let all = FieldNames.all
        let recordChunks = raws.indices.filter { raws[$0].chunk.kind == .records }
        let used = Mutex([Bool](repeating: false, count: all.count))
        parallel(recordChunks.count) { i in
            var marks = [Bool](repeating: false, count: all.count)
            let raw = raws[recordChunks[i]]
            var reader = _PackedReader(raw.bytes)
            for _ in 0..<raw.chunk.count {
                reader.skipRecordID()
                reader.skipRecord(markingNames: &marks)
            }
            used.withLock { total in
                for id in marks.indices where marks[id] { total[id] = true }
            }
        }
        let marks = used.withLock { $0 }
        let usedIDs = marks.indices.filter { marks[$0] }
        var numbering = [UInt32](repeating: 0, count: all.count)
        for (local, id) in usedIDs.enumerated() { numbering[id] = UInt32(local) }
        let mapping = numbering
        let isIdentity = usedIDs.last.map { $0 == usedIDs.count - 1 } ?? true

        // Rewrite (when the numbering differs), compress and checksum, one chunk per task.
        let stored = Mutex([(frame: [UInt8], rawSize: Int)?](repeating: nil, count: raws.count))
        let failure = Mutex<(any Error)?>(nil)
        parallelWorkers(raws.count) { next in
            let compressor: ZstdCompressor?
            do { compressor = try level.map { try ZstdCompressor(level: $0) } } catch {
                failure.withLock { $0 = error }
                return
            }
            while let i = next() {
                var raw = raws[i].bytes
                if raws[i].chunk.kind == .records && !isIdentity {
                    var reader = _PackedReader(raw)
                    var writer = ByteWriter(capacity: raw.count)
                    for _ in 0..<raws[i].chunk.count {
                        let start = reader.offset
                        reader.skipRecordID()
                        writer.bytes.append(contentsOf: raw[start..<reader.offset])
                        writer.packedRecord(&reader, mapping: mapping)
                    }
                    raw = writer.bytes
                }
                do {
                    let frame =
                        try compressor.map { compressor in try raw.withUnsafeBytes { try compressor.compress($0) } }
                        ?? raw
                    stored.withLock { [rawSize = raw.count] in $0[i] = (frame, rawSize) }
                } catch {
                    failure.withLock { $0 = error }
                    return
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        let compressed = stored.withLock { $0 }.map { $0! }
        let frames = compressed.map(\.frame)
        let rawSizes = compressed.map(\.rawSize)

        var directory = ByteWriter(capacity: 4096)
        directory.zigzag(database.basis)
        directory.varint(usedIDs.count)
        for id in usedIDs { directory.string(all[id].string) }
        directory.varint(tables.count)
        for (name, table) in tables {
            directory.string(name.string)
            directory.varint(table.count)
            directory.varint(table.indexes.count)
            for index in table.indexes { directory.indexDefinition(index.definition) }
        }
        directory.varint(raws.count)
        for (i, raw) in raws.enumerated() {
            directory.byte(raw.chunk.kind.rawValue)
            directory.varint(raw.chunk.table)
            if raw.chunk.kind == .entries { directory.varint(raw.chunk.index) }
            directory.varint(raw.chunk.count)
            directory.varint(frames[i].count)
            directory.varint(rawSizes[i])
            directory.varint(UInt64(CRC32C.checksum(frames[i])))
        }

        let payloadSize = directory.bytes.count + frames.reduce(0) { $0 + $1.count }
        var bytes = FileHeader.encode(.snapshot, version: version, size: headerSize) {
            $0.append(UInt32(directory.bytes.count))
            $0.append(UInt64(bitPattern: database.basis))
            $0.append(UInt64(database.recordCount))
            $0.append(UInt64(payloadSize))
            $0.append(basisID)
            $0.append(CRC32C.checksum(directory.bytes))
        }
        bytes.reserveCapacity(headerSize + payloadSize)
        bytes.append(contentsOf: directory.bytes)
        for frame in frames { bytes.append(contentsOf: frame) }
        return bytes
    }

    // MARK: Reading

    /// Decodes the chunks of a version 3 snapshot whose header is checked.
    /// - Parameters:
    ///   - size: the file's size in bytes.
    ///   - compressed: false for chunks stored raw (the codec's encoding of
    ///     a database); each must then be its raw size.
    ///   - check: a further check of the value, before the names it
    ///     brought are kept (an input it refuses leaves none).
    /// - Throws: ``FormatError`` for damage; what `source` throws when a
    ///   read fails, and what `check` throws.
    static func decodeChunked(
        _ source: Source,
        size: Int,
        header: Header,
        file: String,
        compressed: Bool = true,
        check: (Database) throws -> Void = { _ in }
    ) throws -> Database {
        let opened = try openChunked(source, size: size, header: header, file: file)
        do {
            let database = try decodeChunks(
                source,
                layout: opened.layout,
                mapping: opened.mapping,
                ranks: opened.ranks,
                compressed: compressed,
                damaged: opened.damaged
            )
            try check(database)
            FieldNames.commit(opened.held)
            return database
        } catch {
            FieldNames.release(opened.held)
            throw error
        }
    }

    /// A version 3 snapshot's directory, checked, with its chunks placed
    /// and its names numbered in this process.
    struct OpenedChunks {
        var layout: Layout
        /// Local name ID → this process's ID; nil when they agree.
        var mapping: [UInt32]?
        /// Local name ID → rank of the name in byte order.
        var ranks: [Int32]
        /// Name IDs reserved for the decode: committed with the value, or released.
        var held: [UInt32]
        var damaged: @Sendable (String, Int) -> FormatError
    }

    /// Reads and checks a version 3 snapshot's directory (the file's
    /// size against it, its checksum, its tables and chunks), places the
    /// chunks in the file and reserves the names it lists in this process.
    /// - Parameter size: the file's size in bytes.
    /// - Throws: ``FormatError`` for damage; what `source` throws when a
    ///   read fails.
    static func openChunked(_ source: Source, size: Int, header: Header, file: String) throws -> OpenedChunks {
        @Sendable func damaged(_ reason: String, at offset: Int = header.size) -> FormatError {
            FormatError(.snapshot, file: file, offset: offset, .damaged(reason))
        }
        guard size - header.size == header.payloadSize else {
            throw damagedPayload(size: size, header: header, file: file)
        }
        let directoryRange = header.size..<(header.size + header.directorySize)
        guard directoryRange.upperBound <= size else { throw damaged("directory runs past the end of the file") }
        let directory = Array(try source.read(directoryRange))
        guard directory.count == directoryRange.count else {
            throw damaged("\(directory.count) bytes read of the directory's \(directoryRange.count)")
        }
        guard CRC32C.checksum(directory) == header.payloadChecksum else { throw damaged("directory checksum mismatch") }
        var layout: Layout
        do {
            layout = try Layout(directory)
        } catch {
            throw damaged("directory: \(error)")
        }
        var offset = directoryRange.upperBound
        for i in layout.chunks.indices {
            layout.chunks[i].offset = offset
            offset += layout.chunks[i].storedSize
            guard offset <= size else { throw damaged("chunk \(i) runs past the end of the file") }
        }
        guard offset == size else {
            throw damaged("\(size - offset) bytes after the last chunk", at: offset)
        }
        guard layout.basis == header.basis, layout.tables.reduce(0, { $0 + $1.count }) == header.recordCount else {
            throw damaged("directory disagrees with the header")
        }

        // Names: reserved for the length of the decode, committed with the
        // value or released with the error.
        var held: [UInt32] = []
        var mapping: [UInt32] = []
        for name in layout.names {
            let (id, isHeld) = FieldNames.reserve(name)
            mapping.append(id)
            if isHeld { held.append(id) }
        }
        let sorted = layout.names.indices.sorted { layout.names[$0] < layout.names[$1] }
        var ranks = [Int32](repeating: 0, count: layout.names.count)
        for (rank, id) in sorted.enumerated() { ranks[id] = Int32(rank) }
        let isIdentity = mapping.enumerated().allSatisfy { UInt32($0.offset) == $0.element }
        return OpenedChunks(
            layout: layout,
            mapping: isIdentity ? nil : mapping,
            ranks: ranks,
            held: held,
            damaged: { damaged($0, at: $1) }
        )
    }

    /// Reserves the names the version 3 snapshot `name` lists, in its
    /// order, reading only its header and directory (checked): called
    /// before anything else of a store is decoded, a fresh process then
    /// numbers them as the snapshot does and its records load as copies of
    /// their bytes, not rewritten one by one. The caller releases the IDs
    /// once the snapshot is decoded (or not used). Best effort: a snapshot
    /// that does not check reserves nothing (its decode reports why).
    static func reserveNames(of name: String, in directory: String, fileSystem: any FileSystem) -> [UInt32] {
        guard let file = try? fileSystem.open(directory + "/" + name, create: false) else { return [] }
        let source = Source(file: file)
        defer { source.close() }
        // Checked as a decode checks it (the directory is read only when
        // the file holds it: a hostile size allocates nothing).
        guard let size = try? source.size(), let header = try? header(of: source, size: size, file: name),
            header.version >= 3,
            let opened = try? openChunked(source, size: size, header: header, file: name)
        else { return [] }
        return opened.held
    }

    enum Decoded {
        case records([(RecordID, Record)])
        /// A run of one index's entries, as a tree of their own: built on
        /// the decoding thread, joined with the index's other runs after.
        case entries(PersistentSortedSet<IndexEntry>)
    }

    /// Chunk `i`: its checksum checked, decompressed into `raw`, decoded.
    /// - Throws: ``FormatError`` for damage; what `source` throws when a
    ///   read fails.
    static func decodeChunk(
        _ i: Int,
        of source: Source,
        layout: Layout,
        mapping: [UInt32]?,
        ranks: [Int32],
        raw: inout [UInt8],
        used: inout [Bool],
        compressed: Bool = true,
        damaged: @Sendable (String, Int) -> FormatError
    ) throws -> Decoded {
        try withChunk(i, of: source, layout: layout, raw: &raw, compressed: compressed, damaged: damaged) {
            chunk,
            raw in
            switch chunk.kind {
            case .records:
                var records: [(RecordID, Record)] = []
                // Bounded: a hostile count the bytes could hold still reserves little.
                records.reserveCapacity(min(chunk.count, 1 << 17))
                try forEachRecord(
                    raw,
                    count: chunk.count,
                    ranks: ranks,
                    names: layout.names,
                    mapping: mapping,
                    used: &used
                ) { id, packed in
                    records.append((id, Record(_packed: Array(packed))))
                }
                return .records(records)
            case .entries:
                let table = layout.tables[chunk.table]
                // Straight into the run's leaves: no array of entries between.
                var run = PersistentSortedSet<IndexEntry>.Builder()
                _ = try ByteReader.forEachIndexEntry(
                    raw,
                    in: 0..<raw.count,
                    count: chunk.count,
                    definition: table.definitions[chunk.index],
                    table: table.name,
                    digesting: false
                ) { run.append($0) }
                return .entries(run.build())
            }
        }
    }

    /// Chunk `i`'s checksum checked and its bytes decompressed into `raw`,
    /// then read by `body`; an error `body` throws other than a
    /// ``FormatError`` is reported as damage of the chunk, an error reading
    /// `source` as it is.
    static func withChunk<R>(
        _ i: Int,
        of source: Source,
        layout: Layout,
        raw: inout [UInt8],
        compressed: Bool = true,
        damaged: @Sendable (String, Int) -> FormatError,
        _ body: (Chunk, [UInt8]) throws -> R
    ) throws -> R {
        let chunk = layout.chunks[i]
        let what =
            "chunk \(i) (\(chunk.kind == .records ? "records" : "index entries") of \(layout.tables[chunk.table].name))"
        let stored = try source.read(chunk.offset..<(chunk.offset + chunk.storedSize))
        do {
            // The file's size was checked against the directory: a short
            // read means it was cut since.
            guard stored.count == chunk.storedSize else {
                throw damaged(
                    "\(what): \(stored.count) bytes read of its \(chunk.storedSize)",
                    chunk.offset
                )
            }
            guard CRC32C.checksum(stored) == chunk.checksum else {
                throw damaged("\(what): checksum mismatch", chunk.offset)
            }
            if compressed {
                // Bounded by the directory's size for this chunk: a frame
                // declaring more is refused before anything is allocated.
                let decompressor = try ZstdDecompressor(maximumOutputSize: chunk.rawSize)
                try stored.withUnsafeBytes { try decompressor.decompress($0, into: &raw) }
            } else {
                raw.removeAll(keepingCapacity: true)
                raw.append(contentsOf: stored)
            }
            guard raw.count == chunk.rawSize else {
                throw damaged("\(what): \(raw.count) bytes where the directory says \(chunk.rawSize)", chunk.offset)
            }
            return try body(chunk, raw)
        } catch let error as FormatError {
            throw error
        } catch {
            throw damaged("\(what): \(error)", chunk.offset)
        }
    }

    private static func decodeChunks(
        _ source: Source,
        layout: Layout,
        mapping: [UInt32]?,
        ranks: [Int32],
        compressed: Bool,
        damaged: @escaping @Sendable (String, Int) -> FormatError
    ) throws -> Database {
        let chunks = layout.chunks
        let results = Mutex([Decoded?](repeating: nil, count: chunks.count))
        let failure = Mutex<(any Error)?>(nil)
        let usedNames = Mutex([Bool](repeating: false, count: layout.names.count))
        parallelWorkers(chunks.count) { next in
            // One flag per name for the worker, not per chunk: a directory
            // of many names and many chunks cannot multiply them.
            var used = [Bool](repeating: false, count: layout.names.count)
            var raw: [UInt8] = []
            while let i = next(), failure.withLock({ $0 == nil }) {
                do {
                    let decoded = try decodeChunk(
                        i,
                        of: source,
                        layout: layout,
                        mapping: mapping,
                        ranks: ranks,
                        raw: &raw,
                        used: &used,
                        compressed: compressed,
                        damaged: damaged
                    )
                    results.withLock { $0[i] = decoded }
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                }
            }
            usedNames.withLock { total in
                for id in used.indices where used[id] { total[id] = true }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        var decoded = results.withLock { results in
            var taken: [Decoded?] = []
            swap(&taken, &results)
            return taken
        }

        let used = usedNames.withLock { $0 }
        var tables = PersistentMap<Key, Table>()
        // One pass groups the chunks by table: tables without chunks cost nothing per chunk.
        var chunksOfTable = [[Int]](repeating: [], count: layout.tables.count)
        for i in chunks.indices { chunksOfTable[chunks[i].table].append(i) }
        for (number, table) in layout.tables.enumerated() {
            var parts: [[(RecordID, Record)]] = []
            // Per index, its chunks' runs in order.
            var entries: [[PersistentSortedSet<IndexEntry>]] = Array(repeating: [], count: table.definitions.count)
            for i in chunksOfTable[number] {
                switch decoded[i].take()! {
                case .records(let records):
                    parts.append(records)
                case .entries(let chunkEntries):
                    // Each chunk is checked alone; its first entry must follow the last before it.
                    let index = chunks[i].index
                    let definition = table.definitions[index]
                    if let last = entries[index].last(where: { !$0.isEmpty })?.last, let first = chunkEntries.first,
                        !first.mayFollow(last, in: definition)
                    {
                        throw damaged(
                            "chunk \(i): index \(definition.name) of \(table.name) out of order or repeats a unique value",
                            chunks[i].offset
                        )
                    }
                    entries[index].append(chunkEntries)
                }
            }
            guard let records = PersistentMap<RecordID, Record>(checkingUniqueKeysWithValuesOf: consume parts) else {
                throw damaged("table \(table.name): a record ID appears twice", layout.directoryOffset)
            }
            var value = Table(records: records)
            // The runs' leaves are joined as they are (the levels above are
            // new), the indexes side by side.
            let runs = entries
            let definitions = table.definitions
            let built = Mutex([TableIndex?](repeating: nil, count: runs.count))
            DispatchQueue.concurrentPerform(iterations: runs.count) { i in
                let index = TableIndex(definitions[i], concatenating: runs[i])
                built.withLock { $0[i] = index }
            }
            value.indexes = built.withLock { $0 }.map { $0! }
            tables[table.name] = value
        }
        if let unused = used.firstIndex(of: false) {
            throw damaged("the name \(layout.names[unused]) is listed but no record uses it", layout.directoryOffset)
        }
        return Database(tables: tables, basis: layout.basis)
    }

    /// Reads a records chunk: each record validated, then given to `body`
    /// as its packed bytes (with a `mapping`, rewritten with this
    /// process's name IDs), which `body` may copy but not keep (they are
    /// valid only during the call). Without `validating`, only each
    /// record's structure is checked, not its text nor its order
    /// (``ByteReader/packedRecord(ranks:names:used:validating:)``): for a
    /// `body` that only digests the bytes, to compare with valid records.
    static func forEachRecord(
        _ raw: [UInt8],
        count: Int,
        ranks: [Int32],
        names: [Key],
        mapping: [UInt32]?,
        validating: Bool = true,
        used: inout [Bool],
        _ body: (RecordID, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        // The smallest record takes 3 bytes (an ID's tag and payload, a
        // field count): a count the bytes cannot hold allocates nothing.
        guard count <= raw.count / 3 else {
            throw CodecError.lengthTooLarge(offset: 0, length: UInt64(count), remaining: raw.count)
        }
        var reader = ByteReader(raw)
        var writer = ByteWriter(capacity: 256)
        // A record's bytes are lent where they lie: a slice of `raw` per
        // record was a retain and a release of its buffer each.
        try raw.withUnsafeBytes { bytes in
            for _ in 0..<count {
                let id = try reader.recordID()
                let range = try reader.packedRecord(ranks: ranks, names: names, used: &used, validating: validating)
                if let mapping {
                    var packed = _PackedReader(raw, offset: range.lowerBound)
                    writer.bytes.removeAll(keepingCapacity: true)
                    writer.packedRecord(&packed, mapping: mapping)
                    try writer.bytes.withUnsafeBytes { try body(id, $0) }
                } else {
                    try body(id, UnsafeRawBufferPointer(rebasing: bytes[range]))
                }
            }
        }
        try reader.expectEnd()
    }

    // MARK: Directory

    /// The directory of a version 3 snapshot, checked for consistency.
    struct Layout {
        struct TableEntry {
            var name: Key
            var count: Int
            var definitions: [IndexDefinition]
        }
        var basis: Int64
        var names: [Key]
        var tables: [TableEntry]
        var chunks: [Chunk]
        /// Where the directory starts in the file (for error offsets).
        var directoryOffset = SnapshotFile.headerSize

        init(_ bytes: [UInt8]) throws {
            var reader = ByteReader(bytes)
            basis = try reader.zigzag()
            let nameCount = try reader.count()
            names = []
            var seen = Set<Key>()
            for _ in 0..<nameCount {
                let start = reader.offset
                let name = Key(try reader.string())
                guard seen.insert(name).inserted else { throw CodecError.duplicateKey(offset: start, key: name.string) }
                names.append(name)
            }
            let tableCount = try reader.count(minimumSize: 3)
            tables = []
            for _ in 0..<tableCount {
                let start = reader.offset
                let name = Key(try reader.string())
                if let previous = tables.last, !(previous.name < name) {
                    throw CodecError.unorderedFields(offset: start)
                }
                let count = try reader.varint()
                guard count <= UInt64(Int.max) else {
                    throw CodecError.lengthTooLarge(offset: start, length: count, remaining: 0)
                }
                let indexCount = try reader.count(minimumSize: 4)
                var definitions: [IndexDefinition] = []
                for _ in 0..<indexCount {
                    let definition = try reader.indexDefinition(table: name)
                    if let previous = definitions.last, !(previous.name < definition.name) {
                        throw CodecError.invalidIndex(
                            offset: start,
                            table: name.string,
                            index: definition.name.string,
                            reason: "declared twice or out of order"
                        )
                    }
                    definitions.append(definition)
                }
                tables.append(TableEntry(name: name, count: Int(count), definitions: definitions))
            }
            let chunkCount = try reader.count(minimumSize: 6)
            chunks = []
            var recordCounts = [Int](repeating: 0, count: tables.count)
            // Per index: its chunks so far, and the entries they hold.
            var entryChunks = tables.map { [Int](repeating: 0, count: $0.definitions.count) }
            var entryCounts = entryChunks
            for _ in 0..<chunkCount {
                let start = reader.offset
                let kindByte = try reader.byte()
                guard let kind = ChunkKind(rawValue: kindByte) else {
                    throw CodecError.invalidTag(offset: start, tag: kindByte, context: "chunk kind")
                }
                let table = try reader.varint()
                guard table < UInt64(tables.count) else {
                    throw CodecError.invalidTag(offset: start, tag: kindByte, context: "chunk of an unknown table")
                }
                let t = Int(table)
                var index = 0
                if kind == .entries {
                    let number = try reader.varint()
                    guard number < UInt64(tables[t].definitions.count) else {
                        throw CodecError.invalidTag(offset: start, tag: kindByte, context: "chunk of an unknown index")
                    }
                    index = Int(number)
                }
                func size() throws -> Int {
                    let at = reader.offset
                    let value = try reader.varint()
                    guard value <= UInt64(Int32.max) else {
                        throw CodecError.lengthTooLarge(offset: at, length: value, remaining: Int(Int32.max))
                    }
                    return Int(value)
                }
                let count = try size()
                let storedSize = try size()
                let rawSize = try size()
                let checksum = try reader.varint()
                guard checksum <= UInt64(UInt32.max) else { throw CodecError.malformedInteger(offset: start) }
                switch kind {
                case .records:
                    // The writer never writes an empty records chunk.
                    guard count > 0 else { throw CodecError.lengthTooLarge(offset: start, length: 0, remaining: 0) }
                    recordCounts[t] += count
                    guard recordCounts[t] <= tables[t].count else {
                        throw CodecError.lengthTooLarge(
                            offset: start,
                            length: UInt64(count),
                            remaining: tables[t].count
                        )
                    }
                case .entries:
                    // Only the index of an empty table has an empty chunk, its only one.
                    let total = entryCounts[t][index] + count
                    guard total <= tables[t].count, count > 0 || (tables[t].count == 0 && entryChunks[t][index] == 0)
                    else {
                        throw CodecError.invalidIndex(
                            offset: start,
                            table: tables[t].name.string,
                            index: tables[t].definitions[index].name.string,
                            reason:
                                "a chunk of \(count) entries, after \(entryCounts[t][index]), for \(tables[t].count) records"
                        )
                    }
                    entryChunks[t][index] += 1
                    entryCounts[t][index] = total
                }
                chunks.append(
                    Chunk(
                        kind: kind,
                        table: t,
                        index: index,
                        count: count,
                        storedSize: storedSize,
                        rawSize: rawSize,
                        checksum: UInt32(checksum)
                    )
                )
            }
            try reader.expectEnd()
            for t in tables.indices {
                guard recordCounts[t] == tables[t].count else {
                    throw CodecError.invalidIndex(
                        offset: 0,
                        table: tables[t].name.string,
                        index: "",
                        reason: "chunks hold \(recordCounts[t]) records where the directory says \(tables[t].count)"
                    )
                }
                for (i, definition) in tables[t].definitions.enumerated()
                where entryChunks[t][i] == 0 || entryCounts[t][i] != tables[t].count {
                    throw CodecError.invalidIndex(
                        offset: 0,
                        table: tables[t].name.string,
                        index: definition.name.string,
                        reason:
                            "\(entryChunks[t][i]) chunks hold \(entryCounts[t][i]) entries for \(tables[t].count) records"
                    )
                }
            }
        }
    }

    // MARK: Parallelism

    /// Runs `body(i)` for `0..<count`, on every core.
    static func parallel(_ count: Int, _ body: @Sendable (Int) -> Void) {
        guard count > 0 else { return }
        if count == 1 {
            body(0)
            return
        }
        DispatchQueue.concurrentPerform(iterations: count, execute: body)
    }

    /// Runs `body(i)` for `0..<count`: `body(0)` on the calling thread,
    /// each other on a thread of its own (not the shared pool's).
    ///
    /// For a caller on a thread of its own while the pool's threads wait
    /// (a verify's last snapshot comparison, which the verify's task waits
    /// for): `concurrentPerform` finds the pool's width taken and runs
    /// every iteration on the calling thread.
    static func parallelOnOwnThreads(_ count: Int, _ body: @Sendable (Int) -> Void) {
        guard count > 1 else {
            if count == 1 { body(0) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let group = DispatchGroup()
            for i in 1..<count {
                DispatchQueue(label: "Strata worker \(i)").async(group: group) { body(i) }
            }
            body(0)
            // `body` does not outlive this call: every copy has run.
            group.wait()
        }
    }

    /// Runs one worker per core (at most `count`, and at most `maximum`
    /// when given); each takes task numbers from `next()` until it returns
    /// nil, so per-worker state (a zstd context, a buffer) is made once per
    /// core, not once per task. One worker runs on the calling thread; the
    /// others on the shared pool, or with `ownThreads` on threads of their
    /// own (see `parallelOnOwnThreads(_:_:)`).
    static func parallelWorkers(
        _ count: Int,
        maximum: Int? = nil,
        ownThreads: Bool = false,
        _ worker: @Sendable (_ next: () -> Int?) -> Void
    ) {
        guard count > 0 else { return }
        let cursor = Atomic<Int>(0)
        let workers = min(count, maximum ?? .max, max(1, ProcessInfo.processInfo.activeProcessorCount))
        let body: @Sendable (Int) -> Void = { _ in
            worker {
                let i = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
                return i < count ? i : nil
            }
        }
        if ownThreads {
            parallelOnOwnThreads(workers, body)
        } else {
            parallel(workers, body)
        }
    }
}
