import Foundation
import Strata
import Testing

/// Database format 4: the codec's header, then a snapshot's layout with its
/// chunks stored raw. What it refuses, where, and what a refusal leaves.
@Suite("Database format 4")
struct DatabaseFormatTests {
    /// The codec's header of a format 4 database: "STR", "D", varint 4.
    static let prefixSize = 5

    /// `layout` (the bytes after the codec's header) with its directory and
    /// header checksums recomputed, as a hostile writer would.
    static func resealedHead(_ layout: [UInt8]) -> [UInt8] {
        var bytes = layout
        let directorySize = Int(SnapshotLayout.u32(bytes, 12))
        put(CRC32C.checksum(Array(bytes[64..<(64 + directorySize)])), in: &bytes, at: 56)
        put(CRC32C.checksum(Array(bytes[0..<60])), in: &bytes, at: 60)
        return bytes
    }

    static func put(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }

    static func songs(_ count: Int) throws -> Database {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byTitle", on: "songs", fields: ["title"])
        for n in 0..<count {
            try builder.insert(["title": .string("song \(n)"), "n": .int(Int64(n))], id: RecordID(n), into: "songs")
        }
        return builder.database
    }

    @Test("versions: 5 is newer, 0 does not exist, 4 is a database's only, 7 cannot be written")
    func versions() throws {
        let database = try Self.songs(3)
        let bytes = BinaryCodec.encode(database)
        #expect(bytes[4] == UInt8(BinaryCodec.databaseFormatVersion))
        var newer = bytes
        newer[4] = 5
        #expect(throws: CodecError.unsupportedVersion(kind: "database", found: 5, supported: 4)) {
            try BinaryCodec.decodeDatabase(newer)
        }
        var zero = bytes
        zero[4] = 0
        #expect {
            try BinaryCodec.decodeDatabase(zero)
        } throws: { error in
            error as? CodecError == .unsupportedVersion(kind: "database", found: 0, supported: 4)
                && "\(error)".contains("does not exist")
        }
        // A record's encoding has no format 4.
        var record = bytes
        record[3] = UInt8(ascii: "R")
        #expect(throws: CodecError.unsupportedVersion(kind: "record", found: 4, supported: BinaryCodec.formatVersion)) {
            try BinaryCodec.decodeRecord(record)
        }
        #expect(throws: CodecError.unsupportedVersion(kind: "database", found: 7, supported: 4)) {
            try BinaryCodec.encode(database, version: 7)
        }
        for version: UInt64 in [2, 3, 4] {
            #expect(try BinaryCodec.decodeDatabase(BinaryCodec.encode(database, version: version)) == database)
        }
    }

    @Test("damage is reported at its offset in the input: the layout's version, a chunk's checksum")
    func offsets() throws {
        let bytes = BinaryCodec.encode(try Self.songs(3))
        let prefix = Array(bytes[..<Self.prefixSize])
        // The layout's own version (after its 8-byte magic), resealed.
        var layout = Array(bytes[Self.prefixSize...])
        Self.put(2, in: &layout, at: 8)
        #expect(throws: CodecError.self) { try BinaryCodec.decodeDatabase(prefix + layout) }
        do {
            _ = try BinaryCodec.decodeDatabase(prefix + Self.resealedHead(layout))
            Issue.record("a layout of version 2 was read as raw chunks")
        } catch let CodecError.damaged(offset, reason) {
            #expect(offset == Self.prefixSize + 8, "\(reason)")
        }
        // A byte of the first chunk: its checksum, reported where it starts.
        let chunks = try SnapshotLayout(Array(bytes[Self.prefixSize...]), compressed: false)
        let start = Self.prefixSize + chunks.chunks[0].range.lowerBound
        var damaged = bytes
        damaged[start + 3] ^= 1
        do {
            _ = try BinaryCodec.decodeDatabase(damaged)
            Issue.record("a damaged chunk was read")
        } catch let CodecError.damaged(offset, reason) {
            #expect(offset == start, "\(reason)")
            #expect(reason.contains("checksum"), "\(reason)")
        }
    }

    /// The names a refused input brings are released: a field renamed in
    /// the directory (every checksum resealed) no longer matches the index
    /// declared on the old name, so the index check refuses the input after
    /// the names were reserved.
    @Test("a refused input leaves none of its names in the process")
    func refusedInputLeavesNoNames() throws {
        let old = "old" + UUID().uuidString.prefix(8)
        let fresh = "new" + UUID().uuidString.prefix(8)
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byField", on: "t", fields: [FieldPath(Key(old))])
        for n in 0..<10 {
            try builder.insert([Key(old): .int(Int64(n)), "other": 1], id: RecordID(n), into: "t")
        }
        let bytes = BinaryCodec.encode(builder.database)
        var layout = Array(bytes[Self.prefixSize...])
        let directorySize = Int(SnapshotLayout.u32(layout, 12))
        let at = try #require(Array(layout[64..<(64 + directorySize)]).firstRange(of: Array(old.utf8))).lowerBound
        layout.replaceSubrange((64 + at)..<(64 + at + old.utf8.count), with: Array(fresh.utf8))
        let before = Record.internedFieldNameCount
        #expect {
            try BinaryCodec.decodeDatabase(Array(bytes[..<Self.prefixSize]) + Self.resealedHead(layout))
        } throws: { error in
            guard case .invalidIndex(_, "t", "byField", _)? = error as? CodecError else { return false }
            return true
        }
        #expect(Record.internedFieldNameCount == before)
        #expect(!Record.isFieldNameInterned(Key(fresh)))
    }

    @Test("an ID repeated among 5,000 records (the concurrent build) is refused")
    func repeatedIDInALargeTable() throws {
        let database = try Self.songs(5_000)
        let bytes = BinaryCodec.encode(database)
        let prefix = Array(bytes[..<Self.prefixSize])
        let file = Array(bytes[Self.prefixSize...])
        let layout = try SnapshotLayout(file, compressed: false)
        // Records are in ID order, each ID its tag (0) and a zigzag
        // varint: ID 4,000 is made 3,999, of the same length.
        var raw = try layout.raw(of: 0, in: file)
        let last = try #require(raw.firstRange(of: [0, 0xC0, 0x3E]))  // tag 0, zigzag(4,000)
        raw.replaceSubrange(last, with: [0, 0xBE, 0x3E])  // zigzag(3,999)
        #expect {
            try BinaryCodec.decodeDatabase(prefix + (try layout.resealing(file, chunk: 0, raw: raw)))
        } throws: { error in
            guard case .damaged(_, let reason)? = error as? CodecError else { return false }
            return reason.contains("appears twice")
        }
    }

    /// A record of every size a reader might trip on (`StoreRecordSizeTests.sizes`,
    /// 0 B to 3 MB: several chunks' worth), the empty record, and a table
    /// large enough for the concurrent build, with an index over the text:
    /// each format reads back what it wrote, and decoding and encoding again
    /// several times over gives the same value and, within this process,
    /// the same bytes.
    @Test("records of every size, 0 B to 3 MB, read back through formats 4 and 3, over re-encoding cycles")
    func recordsOfEverySize() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byText", on: "big", fields: ["text"])
        try builder.insert(Record(), id: "empty", into: "big")
        for (i, size) in StoreRecordSizeTests.sizes.enumerated() {
            let record: Record = [
                "payload": .bytes(StoreRecordSizeTests.bytes(size, seed: i)),
                "text": .string(StoreRecordSizeTests.text(size, seed: i)),
            ]
            try builder.insert(record, id: RecordID(i), into: "big")
        }
        for n in 0..<5_000 {
            try builder.insert(["n": .int(Int64(n))], id: RecordID("song \(n)"), into: "many")
        }
        let database = builder.database
        for version: UInt64 in [4, 3] {
            let bytes = try BinaryCodec.encode(database, version: version)
            var decoded = try BinaryCodec.decodeDatabase(bytes)
            #expect(decoded == database, "format \(version)")
            for cycle in 0..<4 {
                let again = try BinaryCodec.encode(decoded, version: version)
                if version == 4 { #expect(again == bytes, "format 4, cycle \(cycle)") }
                decoded = try BinaryCodec.decodeDatabase(again)
                #expect(decoded == database, "format \(version), cycle \(cycle)")
            }
            decoded._invariantCheck()
            // The index reads back too: the one record of 5,000 bytes of text.
            let text = Value.string(StoreRecordSizeTests.text(5_000, seed: 10))
            #expect(try decoded.query("big").where("text", equals: text).ids() == [RecordID(10)], "format \(version)")
        }
    }
}
