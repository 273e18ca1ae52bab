import Foundation
import PersistentCollections
import Synchronization

extension SnapshotFile {
    /// How the snapshot in `bytes` differs from `value`, index entries
    /// included (nil: equal), without building the snapshot's value: each
    /// core checks and decodes its chunks as a read does and compares their
    /// records with `value`'s as it goes, so what a read spends building
    /// tries is not spent. A version 1 or 2 file is read whole and compared.
    /// - Returns: the difference, and the basis transaction's ID (nil in v1).
    /// - Throws: ``FormatError`` for damage, as ``read(_:in:fileSystem:)`` does.
    static func difference(_ bytes: [UInt8], file: String, from value: Database) throws(FormatError) -> (
        difference: String?, basisID: UUID?
    ) {
        let header = try header(bytes, file: file)
        guard bytes.count - header.size == header.payloadSize else {
            throw FormatError(
                .snapshot,
                file: file,
                offset: header.size,
                .damaged("payload is \(bytes.count - header.size) bytes, header says \(header.payloadSize)")
            )
        }
        guard header.version >= 3 else {
            let (snapshot, basisID) = try decode(bytes, file: file)
            return (differenceOfValues(snapshot, value), basisID)
        }
        let opened = try openChunked(bytes, header: header, file: file)
        // Nothing decoded is kept: the names reserved go back.
        defer { FieldNames.release(opened.held) }
        let outcomes = try compareChunks(bytes, opened: opened, with: value)
        return (differenceOfChunks(opened.layout, outcomes, value), header.basisID)
    }

    /// What one chunk held, compared.
    private enum ChunkOutcome {
        /// Records that differ from the value's (the first of them), and
        /// the sum of the records' ID hashes (a repeated or missing ID shows).
        case records(differing: Int, first: RecordID?, idHashes: UInt64)
        case entries([IndexEntry])
    }

    private static func compareChunks(_ bytes: [UInt8], opened: OpenedChunks, with value: Database) throws(FormatError)
        -> [ChunkOutcome]
    {
        let layout = opened.layout
        let targets = layout.tables.map { value.tables[$0.name]?.records }
        let outcomes = Mutex([ChunkOutcome?](repeating: nil, count: layout.chunks.count))
        let failure = Mutex<FormatError?>(nil)
        let usedNames = Mutex([Bool](repeating: false, count: layout.names.count))
        parallelWorkers(layout.chunks.count) { next in
            var used = [Bool](repeating: false, count: layout.names.count)
            var raw: [UInt8] = []
            while let i = next(), failure.withLock({ $0 == nil }) {
                do {
                    let outcome: ChunkOutcome
                    switch try decodeChunk(
                        i,
                        of: bytes,
                        layout: layout,
                        mapping: opened.mapping,
                        ranks: opened.ranks,
                        raw: &raw,
                        used: &used,
                        damaged: opened.damaged
                    ) {
                    case .records(let records):
                        let target = targets[layout.chunks[i].table]
                        var differing = 0
                        var first: RecordID?
                        var idHashes: UInt64 = 0
                        for (id, record) in records {
                            idHashes &+= Self.idHash(id)
                            if target?[id] != record {
                                differing += 1
                                first = first ?? id
                            }
                        }
                        outcome = .records(differing: differing, first: first, idHashes: idHashes)
                    case .entries(let entries):
                        outcome = .entries(Array(entries))
                    }
                    outcomes.withLock { $0[i] = outcome }
                } catch let error as FormatError {
                    failure.withLock { $0 = $0 ?? error }
                } catch {
                    preconditionFailure("decoding a chunk throws only FormatError")
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

    private static func idHash(_ id: RecordID) -> UInt64 { UInt64(bitPattern: Int64(id.hashValue)) }

    /// The first difference between the compared chunks and `value`, or nil.
    private static func differenceOfChunks(
        _ layout: Layout,
        _ outcomes: [ChunkOutcome],
        _ value: Database
    ) -> String? {
        if layout.basis != value.basis { return "its basis is t \(layout.basis), the value's \(value.basis)" }
        let names = Set(layout.tables.map(\.name))
        if let missing = value.tables.keys.sorted().first(where: { !names.contains($0) }) {
            return "it has no table \(missing)"
        }
        var differing = [Int](repeating: 0, count: layout.tables.count)
        var firstDiffering = [RecordID?](repeating: nil, count: layout.tables.count)
        var idHashes = [UInt64](repeating: 0, count: layout.tables.count)
        var entries = layout.tables.map { [[IndexEntry]](repeating: [], count: $0.definitions.count) }
        for (chunk, outcome) in zip(layout.chunks, outcomes) {
            switch outcome {
            case let .records(count, first, hashes):
                differing[chunk.table] += count
                firstDiffering[chunk.table] = firstDiffering[chunk.table] ?? first
                idHashes[chunk.table] &+= hashes
            case .entries(let chunkEntries):
                entries[chunk.table][chunk.index].append(contentsOf: chunkEntries)
            }
        }
        for (number, table) in layout.tables.enumerated() {
            guard let target = value.tables[table.name] else { return "its table \(table.name) is not in the value" }
            if table.count != target.count {
                return "table \(table.name) holds \(table.count) records, the value's \(target.count)"
            }
            if let id = firstDiffering[number] {
                return "record \(id) of \(table.name) differs (\(differing[number]) records do)"
            }
            if idHashes[number] != target.records.keys.reduce(0, { $0 &+ idHash($1) }) {
                return "the record IDs of \(table.name) differ"
            }
            if table.definitions != target.indexes.map(\.definition) {
                return "the indexes declared on \(table.name) differ"
            }
            for (index, definition) in table.definitions.enumerated()
            where !entries[number][index].elementsEqual(target.indexes[index].entries) {
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
