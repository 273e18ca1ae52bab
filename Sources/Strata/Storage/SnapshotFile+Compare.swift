import Foundation
import PersistentCollections
import Synchronization

extension SnapshotFile {
    /// How the snapshot in `bytes` differs from `value`, index entries
    /// included (nil: equal), without building the snapshot's value: each
    /// core checks and decodes its chunks as a read does and compares them
    /// as it goes (records by the sums of their digests against
    /// `recordDigests`, `value`'s per table; index entries with `value`'s
    /// at the same offsets), so what a read spends building tries is not
    /// spent. A version 1 or 2 file is read whole and compared.
    /// `workers` bounds the threads the chunks are compared on (nil: one
    /// per core; 1: the calling thread alone); with `ownThreads`, the
    /// others are threads of their own, not the shared pool's.
    /// - Returns: the difference, and the basis transaction's ID (nil in v1).
    /// - Throws: ``FormatError`` for damage, as ``read(_:in:fileSystem:)`` does.
    static func difference(
        _ bytes: [UInt8],
        file: String,
        from value: Database,
        recordDigests: [Key: UInt64],
        workers: Int? = nil,
        ownThreads: Bool = false
    ) throws(FormatError) -> (difference: String?, basisID: UUID?) {
        let header = try header(bytes, file: file)
        guard header.version >= 3 else {
            let (snapshot, basisID) = try decode(bytes, file: file)
            return (differenceOfValues(snapshot, value), basisID)
        }
        let source = Source(bytes)
        let opened = try readingMemory { try openChunked(source, size: bytes.count, header: header, file: file) }
        // Nothing decoded is kept: the names reserved go back.
        defer { FieldNames.release(opened.held) }
        let outcomes = try compareChunks(
            source,
            opened: opened,
            with: value,
            workers: workers,
            ownThreads: ownThreads
        )
        return (differenceOfChunks(source, opened, outcomes, value, recordDigests), header.basisID)
    }

    /// What a snapshot holds, summed: enough to tell it equal to a value
    /// without holding the value, unless it holds index entries (compared
    /// entry by entry with the value's).
    struct Sums: Sendable {
        var basis: Int64
        var basisID: UUID?
        /// Per table, in the file's order: its record count, index
        /// declarations and the sum of its records' digests.
        var tables: [(name: Key, count: Int, definitions: [IndexDefinition], digest: UInt64)]
        var hasEntries: Bool

        /// Whether `value`, whose tables' record digests sum to
        /// `recordDigests`, is the snapshot's value (the checks of
        /// `difference`, but the entries').
        func match(_ value: Database, recordDigests: [Key: UInt64]) -> Bool {
            guard !hasEntries, basis == value.basis, tables.count == value.tables.count else { return false }
            return tables.allSatisfy { table in
                guard let target = value.tables[table.name] else { return false }
                return table.count == target.count && table.digest == recordDigests[table.name, default: 0]
                    && table.definitions == target.indexes.map(\.definition)
            }
        }
    }

    /// The snapshot in `bytes` summed (see ``Sums``), checked as a read
    /// checks it but for its records' text and order (sums that differ from
    /// a replay's send the file to `difference`, which checks them); nil
    /// for a version 1 or 2 file (compared whole).
    /// - Throws: ``FormatError`` for damage `difference` would find too,
    ///   though not always the first it would name (that one may be in a
    ///   record's text): a caller reports what `difference` throws.
    static func sums(_ bytes: [UInt8], file: String, workers: Int?) throws(FormatError) -> Sums? {
        let header = try header(bytes, file: file)
        guard header.version >= 3 else { return nil }
        let source = Source(bytes)
        let opened = try readingMemory { try openChunked(source, size: bytes.count, header: header, file: file) }
        defer { FieldNames.release(opened.held) }
        let layout = opened.layout
        // Entries are not compared here (no value): their chunks are
        // still read and checked, against an empty value.
        // The records' text and order are not validated: sums that match
        // a replay's are of its records' bytes, which are valid, and sums
        // that do not send the file to `difference`, which validates.
        let outcomes = try compareChunks(
            source,
            opened: opened,
            with: Database(),
            workers: workers,
            ownThreads: false,
            validating: false
        )
        var digests = [UInt64](repeating: 0, count: layout.tables.count)
        var hasEntries = false
        for (chunk, outcome) in zip(layout.chunks, outcomes) {
            switch outcome {
            case .records(let digest): digests[chunk.table] &+= digest
            case .entries: hasEntries = true
            }
        }
        return Sums(
            basis: layout.basis,
            basisID: header.basisID,
            tables: layout.tables.enumerated().map { ($1.name, $1.count, $1.definitions, digests[$0]) },
            hasEntries: hasEntries || layout.tables.contains { !$0.definitions.isEmpty }
        )
    }

    /// What one chunk held, compared.
    private enum ChunkOutcome {
        /// The sum of the records' digests (``recordDigest(_:_:)``).
        case records(digest: UInt64)
        /// Whether a run of index entries equals the index's entries at
        /// the same offsets.
        case entries(count: Int, equal: Bool)
    }

    /// Records are compared by digest, not looked up one by one: a random
    /// lookup per record into a million-record trie was a cache miss per
    /// level. Only a table whose sums differ is compared record by record
    /// (to name one that differs).
    private static func compareChunks(
        _ source: Source,
        opened: OpenedChunks,
        with value: Database,
        workers: Int?,
        ownThreads: Bool,
        validating: Bool = true
    ) throws(FormatError) -> [ChunkOutcome] {
        let layout = opened.layout
        let targets = layout.tables.map { value.tables[$0.name] }
        // Each entries chunk's first offset in its index: the chunks of one
        // index follow one another in the index's order.
        var reached: [Int: Int] = [:]
        let starts = layout.chunks.map { chunk in
            guard chunk.kind == .entries else { return 0 }
            let key = chunk.table << 32 | chunk.index
            defer { reached[key, default: 0] += chunk.count }
            return reached[key, default: 0]
        }
        let outcomes = Mutex([ChunkOutcome?](repeating: nil, count: layout.chunks.count))
        let failure = Mutex<FormatError?>(nil)
        let usedNames = Mutex([Bool](repeating: false, count: layout.names.count))
        parallelWorkers(layout.chunks.count, maximum: workers, ownThreads: ownThreads) { next in
            var used = [Bool](repeating: false, count: layout.names.count)
            var raw: [UInt8] = []
            while let i = next(), failure.withLock({ $0 == nil }) {
                do {
                    let outcome: ChunkOutcome
                    if layout.chunks[i].kind == .records {
                        // Digests of the records' bytes where they lie: no record is made.
                        let digest = try withChunk(i, of: source, layout: layout, raw: &raw, damaged: opened.damaged) {
                            chunk,
                            raw in
                            var digest: UInt64 = 0
                            try forEachRecord(
                                raw,
                                count: chunk.count,
                                ranks: opened.ranks,
                                names: layout.names,
                                mapping: opened.mapping,
                                validating: validating,
                                used: &used
                            ) { id, packed in
                                digest &+= recordDigest(id, packed: packed)
                            }
                            return digest
                        }
                        outcome = .records(digest: digest)
                    } else if case .entries(let run) = try decodeChunk(
                        i,
                        of: source,
                        layout: layout,
                        mapping: opened.mapping,
                        ranks: opened.ranks,
                        raw: &raw,
                        used: &used,
                        damaged: opened.damaged
                    ) {
                        let chunk = layout.chunks[i]
                        let indexes = targets[chunk.table]?.indexes ?? []
                        let equal =
                            chunk.index < indexes.count
                            && run.elementsEqual(
                                indexes[chunk.index].entries.elements(atOffsets: starts[i]..<(starts[i] + run.count))
                            )
                        outcome = .entries(count: run.count, equal: equal)
                    } else {
                        preconditionFailure("an entries chunk decodes to entries")
                    }
                    outcomes.withLock { $0[i] = outcome }
                } catch let error as FormatError {
                    failure.withLock { $0 = $0 ?? error }
                } catch {
                    preconditionFailure("decoding a chunk in memory throws only FormatError")
                }
            }
            usedNames.withLock { total in
                for id in used.indices where used[id] { total[id] = true }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        if let unused = usedNames.withLock({ $0 }).firstIndex(of: false) {
            throw opened.damaged(
                "the name \(layout.names[unused]) is listed but no record uses it",
                layout.directoryOffset
            )
        }
        return outcomes.withLock { $0 }.map { $0! }
    }

    /// A record's digest (``RecordDigest``): its ID and packed bytes
    /// (equal records have equal bytes).
    static func recordDigest(_ id: RecordID, _ record: Record) -> UInt64 {
        record._bytes.withUnsafeBytes { recordDigest(id, packed: $0) }
    }

    /// The digest of the record whose packed bytes are `packed`.
    static func recordDigest(_ id: RecordID, packed: UnsafeRawBufferPointer) -> UInt64 {
        var digest = RecordDigest()
        switch id.kind {
        case .integer(let value):
            digest.combine(0)
            digest.combine(UInt64(bitPattern: value))
        case .string(var value):
            digest.combine(1)
            value.withUTF8 { digest.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .uuid(let value):
            digest.combine(2)
            withUnsafeBytes(of: value.uuid) { digest.combine(bytes: $0) }
        }
        digest.combine(bytes: packed)
        return digest.finalize()
    }

    /// For a table whose digests differ: its records decoded a second time
    /// and each looked up in `target`, to name the first that differs or
    /// an ID that appears twice (the counts are equal).
    private static func differingRecord(
        ofTable number: Int,
        _ source: Source,
        opened: OpenedChunks,
        in target: PersistentMap<RecordID, Record>
    ) -> String {
        let name = opened.layout.tables[number].name
        var used = [Bool](repeating: false, count: opened.layout.names.count)
        var raw: [UInt8] = []
        var differing = 0
        var first: RecordID?
        var seen = Set<RecordID>()
        var repeated: RecordID?
        for (i, chunk) in opened.layout.chunks.enumerated() where chunk.kind == .records && chunk.table == number {
            // It decoded a moment ago; a read that now fails is said as such.
            guard
                case .records(let records)? = try? decodeChunk(
                    i,
                    of: source,
                    layout: opened.layout,
                    mapping: opened.mapping,
                    ranks: opened.ranks,
                    raw: &raw,
                    used: &used,
                    damaged: opened.damaged
                )
            else { return "chunk \(i) of \(name) no longer decodes" }
            for (id, record) in records {
                if !seen.insert(id).inserted { repeated = repeated ?? id }
                if target[id] != record {
                    differing += 1
                    first = first ?? id
                }
            }
        }
        if let first { return "record \(first) of \(name) differs (\(differing) records do)" }
        if let repeated { return "record \(repeated) of \(name) appears twice" }
        return "the records of \(name) differ from the replay's by their digests alone"
    }

    /// The first difference between the compared chunks and `value`, or nil.
    private static func differenceOfChunks(
        _ source: Source,
        _ opened: OpenedChunks,
        _ outcomes: [ChunkOutcome],
        _ value: Database,
        _ recordDigests: [Key: UInt64]
    ) -> String? {
        let layout = opened.layout
        if layout.basis != value.basis { return "its basis is t \(layout.basis), the value's \(value.basis)" }
        let names = Set(layout.tables.map(\.name))
        if let missing = value.tables.keys.sorted().first(where: { !names.contains($0) }) {
            return "it has no table \(missing)"
        }
        var digests = [UInt64](repeating: 0, count: layout.tables.count)
        var entryCounts = layout.tables.map { [Int](repeating: 0, count: $0.definitions.count) }
        var entriesDiffer = layout.tables.map { [Bool](repeating: false, count: $0.definitions.count) }
        for (chunk, outcome) in zip(layout.chunks, outcomes) {
            switch outcome {
            case .records(let digest):
                digests[chunk.table] &+= digest
            case let .entries(count, equal):
                entryCounts[chunk.table][chunk.index] += count
                if !equal { entriesDiffer[chunk.table][chunk.index] = true }
            }
        }
        for (number, table) in layout.tables.enumerated() {
            guard let target = value.tables[table.name] else { return "its table \(table.name) is not in the value" }
            if table.count != target.count {
                return "table \(table.name) holds \(table.count) records, the value's \(target.count)"
            }
            if digests[number] != recordDigests[table.name, default: 0] {
                return differingRecord(ofTable: number, source, opened: opened, in: target.records)
            }
            if table.definitions != target.indexes.map(\.definition) {
                return "the indexes declared on \(table.name) differ"
            }
            for (index, definition) in table.definitions.enumerated()
            where entriesDiffer[number][index] || entryCounts[number][index] != target.indexes[index].entries.count {
                return "the entries of index \(definition.name) of \(table.name) differ"
            }
        }
        return nil
    }

    /// The first difference between two values, index entries included.
    static func differenceOfValues(_ snapshot: Database, _ value: Database) -> String? {
        if snapshot.basis != value.basis { return "its basis is t \(snapshot.basis), the value's \(value.basis)" }
        if snapshot != value { return "its records or index declarations differ" }
        for (name, table) in snapshot.tables {
            for (index, other) in zip(table.indexes, value.tables[name]?.indexes ?? [])
            where !index.entries.elementsEqual(other.entries) {
                return "the entries of index \(index.definition.name) of \(name) differ"
            }
        }
        return nil
    }
}
