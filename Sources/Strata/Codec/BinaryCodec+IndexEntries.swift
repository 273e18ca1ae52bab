import Foundation
import PersistentCollections
import Synchronization

// Index entries in a database encoding (format version 3), after the
// table's definitions, one block per index in definition order:
//
//     entries := byte length of the rest, then per entry in ascending order:
//                shared prefix length with the previous entry, suffix length, suffix bytes
//
// A table's index holds one entry per record, so the count is the table's.
// Sorted entries share long prefixes (an album, a title's first words), so
// the front coding keeps the block near the size of what differs.
//
// Reading checks the entries as strictly as a rebuild would, without its
// sort: each entry is well formed (its values, then one record ID,
// exactly), the entries strictly ascend, a unique index has no two entries
// with the same values, and the entries are the records' entries, compared
// as a multiset through a sum of hashes seeded per process (so no file can
// be made to collide on purpose). Together: the index a rebuild would make.

extension ByteWriter {
    mutating func indexEntries(_ index: TableIndex) {
        let block = Self.indexEntryBlock(index)
        varint(block.count)
        bytes.append(contentsOf: block)
    }

    /// The front-coded entries of `index`, without their length.
    static func indexEntryBlock(_ index: TableIndex) -> [UInt8] {
        indexEntryBlocks(index, size: .max)[0].bytes
    }

    /// The front-coded entries of `index` in blocks of about `size` bytes
    /// (a block ends after the entry that reaches it), each starting its
    /// front coding afresh so that each decodes alone; one empty block for
    /// an empty index. O(total bytes).
    static func indexEntryBlocks(_ index: TableIndex, size: Int) -> [(count: Int, bytes: [UInt8])] {
        var blocks: [(count: Int, bytes: [UInt8])] = []
        // A block ends after the entry that reaches `size`: room for one more.
        let capacity = min(index.count * 8, size > Int.max / 2 ? size : size + size / 4)
        var block = ByteWriter(capacity: capacity)
        var count = 0
        var previous: [UInt8] = []
        for entry in index.entries {
            entry.withBytes { bytes in
                let shared = zip(previous, bytes).prefix { $0 == $1 }.count
                block.varint(shared)
                block.varint(bytes.count - shared)
                block.bytes.append(contentsOf: bytes[shared...])
                previous.removeAll(keepingCapacity: true)
                previous.append(contentsOf: bytes)
            }
            count += 1
            if block.bytes.count >= size {
                blocks.append((count, block.bytes))
                block = ByteWriter(capacity: capacity)
                count = 0
                previous.removeAll(keepingCapacity: true)
            }
        }
        if count > 0 || blocks.isEmpty { blocks.append((count, block.bytes)) }
        return blocks
    }
}

extension ByteReader {
    /// The indexes of `definitions` from their stored entry blocks, decoded
    /// one index per core and checked against `records` (see above).
    mutating func storedIndexes(
        _ definitions: [IndexDefinition],
        records: PersistentMap<RecordID, Record>,
        table: Key
    ) throws -> [TableIndex] {
        guard !definitions.isEmpty else { return [] }
        var blocks: [Range<Int>] = []
        for _ in definitions {
            let length = try count()
            let start = offset
            _ = try skip(length)
            blocks.append(start..<offset)
        }
        let input = bytes
        let ranges = blocks
        // Beside the records' side of the check, one task per index reads its block.
        let results = Mutex([Result<(TableIndex, UInt64), CodecError>?](repeating: nil, count: definitions.count))
        let sums = _EntryDigest.sums(of: definitions, records: records) { i in
            let result = Result { () throws(CodecError) -> (TableIndex, UInt64) in
                let (entries, digest) = try Self.indexEntries(
                    input,
                    in: ranges[i],
                    count: records.count,
                    definition: definitions[i],
                    table: table
                )
                return (TableIndex(definitions[i], sortedEntries: entries), digest)
            }
            results.withLock { $0[i] = result }
        }
        return try results.withLock { $0 }.enumerated().map { i, result in
            let (index, digest) = try result!.get()
            guard digest == sums[i] else {
                throw CodecError.invalidIndex(
                    offset: ranges[i].lowerBound,
                    table: table.string,
                    index: definitions[i].name.string,
                    reason: "its entries are not the records' entries"
                )
            }
            return index
        }
    }

    /// Decodes and checks one index's block: the entries and, when
    /// `digesting`, the sum of their digests (else 0).
    static func indexEntries(
        _ bytes: [UInt8],
        in block: Range<Int>,
        count: Int,
        definition: IndexDefinition,
        table: Key,
        digesting: Bool = true
    ) throws(CodecError) -> ([IndexEntry], UInt64) {
        var entries: [IndexEntry] = []
        // Bounded: a hostile count the bytes could hold still reserves little.
        entries.reserveCapacity(Swift.min(count, 1 << 17))
        let digest = try forEachIndexEntry(
            bytes,
            in: block,
            count: count,
            definition: definition,
            table: table,
            digesting: digesting
        ) { entries.append($0) }
        return (entries, digest)
    }

    /// Decodes and checks one index's block, handing each entry to `body`
    /// once it is checked (in ascending order; a throw may follow some),
    /// and returns, when `digesting`, the sum of their digests (else 0).
    static func forEachIndexEntry(
        _ bytes: [UInt8],
        in block: Range<Int>,
        count: Int,
        definition: IndexDefinition,
        table: Key,
        digesting: Bool,
        _ body: (IndexEntry) -> Void
    ) throws(CodecError) -> UInt64 {
        func invalid(_ reason: String, at position: Int) -> CodecError {
            .invalidIndex(offset: position, table: table.string, index: definition.name.string, reason: reason)
        }
        // Each entry takes at least its two lengths.
        guard count <= block.count / 2 else { throw invalid("fewer entries than records", at: block.lowerBound) }
        // Millions of entries are read at open: one pass over the block's
        // bytes, each entry rebuilt in place in `scratch` (no entry is
        // longer than the block), nothing retained or released per entry.
        let decoded = bytes.withUnsafeBytes { input in
            withUnsafeTemporaryAllocation(byteCount: Swift.max(block.count, 1), alignment: 8) { scratch in
                Result { () throws(CodecError) -> UInt64 in
                    var offset = block.lowerBound
                    // A length of bytes still to read (the suffix's), or a shared
                    // prefix (checked against the previous entry, which is in memory).
                    func length(ofRemaining: Bool) throws(CodecError) -> Int {
                        let start = offset
                        var value: UInt64 = 0
                        var shift: UInt64 = 0
                        while true {
                            guard offset < block.upperBound else { throw invalid("a malformed length", at: start) }
                            let byte = input[offset]
                            offset += 1
                            value |= UInt64(byte & 0x7F) << shift
                            if byte & 0x80 == 0 {
                                guard byte != 0 || shift == 0 else { throw invalid("a malformed length", at: start) }
                                break
                            }
                            shift += 7
                            // Lengths are far below 2^63: a longer varint is damage.
                            guard shift < 63 else { throw invalid("a malformed length", at: start) }
                        }
                        let bound = ofRemaining ? block.upperBound - offset : Int(UInt32.max)
                        guard value <= UInt64(max(bound, 0)) else {
                            throw invalid("a length runs past the index's entries", at: start)
                        }
                        return Int(value)
                    }
                    var previous: IndexEntry?
                    var currentCount = 0
                    var digest: UInt64 = 0
                    let valueCount = definition.fields.count
                    for _ in 0..<count {
                        let start = offset
                        let shared = try length(ofRemaining: false)
                        let suffix = try length(ofRemaining: true)
                        guard shared <= currentCount else {
                            throw invalid("a prefix longer than the previous entry", at: start)
                        }
                        // Within the block: the suffixes so far fill at most its bytes.
                        currentCount = shared + suffix
                        scratch.baseAddress!.advanced(by: shared).copyMemory(
                            from: input.baseAddress!.advanced(by: offset),
                            byteCount: suffix
                        )
                        offset += suffix
                        let bytes = UnsafeRawBufferPointer(rebasing: scratch[..<currentCount])
                        guard let layout = IndexEntry.checkedLayout(bytes, valueCount: valueCount) else {
                            throw invalid("a malformed entry", at: start)
                        }
                        let entry = IndexEntry(bytes)
                        if let previous, !entry.mayFollow(previous, in: definition, layout: layout) {
                            throw invalid(
                                previous < entry ? "two entries with the same unique values" : "entries out of order",
                                at: start
                            )
                        }
                        if digesting { digest &+= _EntryDigest.hash(bytes) }
                        body(entry)
                        previous = entry
                    }
                    guard offset == block.upperBound else { throw invalid("bytes after the last entry", at: offset) }
                    return digest
                }
            }
        }
        return try decoded.get()
    }
}

extension BinaryCodec {
    /// Refuses a database whose stored index entries are not the entries
    /// its records give (compared by digest sums, as format 3 checks them):
    /// format 4 lays entries out as a snapshot does, whose decode checks
    /// their form and order but not that they agree with the records.
    /// O(n · indexes) on every core.
    /// - Parameter offset: where the database's layout starts (the error's offset).
    static func checkIndexEntries(of database: Database, offset: Int) throws(CodecError) {
        for (name, table) in database.tables where !table.indexes.isEmpty {
            let definitions = table.indexes.map(\.definition)
            let indexes = table.indexes
            let stored = Mutex([UInt64](repeating: 0, count: indexes.count))
            let records = _EntryDigest.sums(of: definitions, records: table.records) { i in
                var sum: UInt64 = 0
                for entry in indexes[i].entries { sum &+= entry.withBytes { _EntryDigest.hash($0) } }
                stored.withLock { [sum] in $0[i] = sum }
            }
            let entries = stored.withLock { $0 }
            if let i = indexes.indices.first(where: { records[$0] != entries[$0] }) {
                throw CodecError.invalidIndex(
                    offset: offset,
                    table: name.string,
                    index: definitions[i].name.string,
                    reason: "its entries are not the records' entries"
                )
            }
        }
    }
}

/// An order-independent digest of index entries: the wrapping sum of a
/// hash of each entry's bytes, under a seed drawn once per process.
enum _EntryDigest {
    static let seed = UInt64.random(in: .min ... .max)

    /// Per definition, the sum over the entries it gives the records of
    /// `part` (the sums of a table's parts add up to the table's: the
    /// digest is a wrapping sum), computed without building them, in one
    /// pass. O(n · indexes).
    static func sums(of definitions: [IndexDefinition], part: PersistentMap<RecordID, Record>.Part) -> [UInt64] {
        var encoder = IndexEntryEncoder(definitions)
        var sums = [UInt64](repeating: 0, count: definitions.count)
        part.forEach { id, record in
            encoder.load(record)
            for i in definitions.indices {
                sums[i] &+= encoder.encode(record, i, id: id).withUnsafeBytes { hash($0) }
            }
        }
        return sums
    }

    /// Per definition, the sum over the entries it gives `records`, on
    /// every core, with `task(i)` run beside it for each definition `i`
    /// (reading or digesting that index's stored entries). The walk of the
    /// records (one pass over each record's fields) is the larger share of
    /// the work: it runs as a few tasks over parts of the records, started
    /// first, so that every core finishes at about the same time.
    static func sums(
        of definitions: [IndexDefinition],
        records: PersistentMap<RecordID, Record>,
        beside task: @Sendable (Int) -> Void
    ) -> [UInt64] {
        let parts = records.parts(maximumCount: 4)
        let total = Mutex([UInt64](repeating: 0, count: definitions.count))
        DispatchQueue.concurrentPerform(iterations: parts.count + definitions.count) { number in
            guard number >= parts.count else {
                let sums = sums(of: definitions, part: parts[number])
                total.withLock { total in
                    for i in total.indices { total[i] &+= sums[i] }
                }
                return
            }
            task(number - parts.count)
        }
        return total.withLock { $0 }
    }

    /// A seeded hash of `bytes`, eight bytes at a time.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h = mix(seed ^ UInt64(bytes.count))
        var i = 0
        while i < bytes.count {
            var word: UInt64 = 0
            for j in i..<min(i + 8, bytes.count) { word = word << 8 | UInt64(bytes[j]) }
            h = mix(h ^ word)
            i += 8
        }
        return h
    }

    /// SplitMix64's finalizer.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
