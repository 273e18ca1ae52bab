import Foundation
import Strata
import Testing

/// A database's index entries in its encoding (format 3): read back as
/// built, format 2 (no entries) still read by rebuilding, and entries that
/// disagree with the records refused however they disagree.
@Suite("Index entries in snapshots")
struct IndexSnapshotTests {
    /// The database both fixtures hold.
    static func database() throws -> Database {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
        try builder.createIndex("byTitle", on: "songs", fields: ["title"], unique: true)
        try builder.insert(["title": "Alpha", "album": 1, "track": 2], id: 1, into: "songs")
        try builder.insert(
            ["title": "Beta, a title longer than twenty-eight bytes", "album": 1, "track": 1],
            id: 2,
            into: "songs"
        )
        try builder.insert(["title": "Gamma", "track": 7], id: "three", into: "songs")
        try builder.insert(["name": "Someone"], id: 1, into: "artists")
        return builder.database
    }

    /// `database()` as format 2 wrote it (before entries were stored).
    static let version2: [UInt8] = [
        0x53, 0x54, 0x52, 0x44, 0x02, 0x00, 0x02, 0x07, 0x61, 0x72, 0x74, 0x69, 0x73, 0x74,
        0x73, 0x01, 0x00, 0x02, 0x01, 0x00, 0x04, 0x6E, 0x61, 0x6D, 0x65, 0x05, 0x07, 0x53,
        0x6F, 0x6D, 0x65, 0x6F, 0x6E, 0x65, 0x00, 0x05, 0x73, 0x6F, 0x6E, 0x67, 0x73, 0x03,
        0x00, 0x02, 0x03, 0x00, 0x05, 0x61, 0x6C, 0x62, 0x75, 0x6D, 0x03, 0x02, 0x00, 0x05,
        0x74, 0x69, 0x74, 0x6C, 0x65, 0x05, 0x05, 0x41, 0x6C, 0x70, 0x68, 0x61, 0x00, 0x05,
        0x74, 0x72, 0x61, 0x63, 0x6B, 0x03, 0x04, 0x01, 0x05, 0x74, 0x68, 0x72, 0x65, 0x65,
        0x02, 0x03, 0x05, 0x05, 0x47, 0x61, 0x6D, 0x6D, 0x61, 0x04, 0x03, 0x0E, 0x00, 0x04,
        0x03, 0x02, 0x03, 0x02, 0x03, 0x05, 0x2C, 0x42, 0x65, 0x74, 0x61, 0x2C, 0x20, 0x61,
        0x20, 0x74, 0x69, 0x74, 0x6C, 0x65, 0x20, 0x6C, 0x6F, 0x6E, 0x67, 0x65, 0x72, 0x20,
        0x74, 0x68, 0x61, 0x6E, 0x20, 0x74, 0x77, 0x65, 0x6E, 0x74, 0x79, 0x2D, 0x65, 0x69,
        0x67, 0x68, 0x74, 0x20, 0x62, 0x79, 0x74, 0x65, 0x73, 0x04, 0x03, 0x02, 0x02, 0x07,
        0x62, 0x79, 0x41, 0x6C, 0x62, 0x75, 0x6D, 0x00, 0x02, 0x05, 0x61, 0x6C, 0x62, 0x75,
        0x6D, 0x00, 0x05, 0x74, 0x72, 0x61, 0x63, 0x6B, 0x00, 0x07, 0x62, 0x79, 0x54, 0x69,
        0x74, 0x6C, 0x65, 0x01, 0x01, 0x05, 0x74, 0x69, 0x74, 0x6C, 0x65, 0x00,
    ]

    @Test("format 2 databases are read, their indexes rebuilt; format 4 round-trips them")
    func version2IsRead() throws {
        let expected = try Self.database()
        #expect(Self.version2[4] == 2)
        let decoded = try BinaryCodec.decodeDatabase(Self.version2)
        decoded._invariantCheck()
        #expect(decoded == expected)
        #expect(try decoded.query("songs").order(by: "title").ids() == [1, 2, "three"])
        let encoded = BinaryCodec.encode(decoded)
        #expect(encoded[4] == UInt8(BinaryCodec.databaseFormatVersion))
        let again = try BinaryCodec.decodeDatabase(encoded)
        again._invariantCheck()
        #expect(again == expected)
        #expect(try again.query("songs").where("album", equals: 1).order(by: "track").ids() == [2, 1])
    }

    @Test("stored entries that are not the records' entries are refused, naming the index (format 3)")
    func disagreeingEntries() throws {
        let bytes = try BinaryCodec.encode(try Self.database(), version: 3)
        func refused(_ bytes: [UInt8], _ reason: String) -> Bool {
            do {
                _ = try BinaryCodec.decodeDatabase(bytes)
                return false
            } catch let CodecError.invalidIndex(_, table, index, found) {
                return table == "songs" && index == "byTitle" && found.contains(reason)
            } catch {
                return false
            }
        }
        // The title index is the last block: the last "Gamma" is its entry.
        let gamma = try #require(bytes.ranges(of: Array("Gamma".utf8)).last).lowerBound
        var lying = bytes
        lying[gamma + 1] = UInt8(ascii: "o")
        #expect(refused(lying, "not the records' entries"))
        var unordered = bytes
        unordered[gamma] = UInt8(ascii: "0")
        #expect(refused(unordered, "out of order"))
        var malformed = bytes
        malformed[gamma + 5] = UInt8(ascii: "A")
        #expect(refused(malformed, "malformed"))
        // Every truncation of the encoding is refused.
        for end in 0..<bytes.count {
            #expect(throws: CodecError.self) { try BinaryCodec.decodeDatabase(Array(bytes[..<end])) }
        }
    }

    /// Format 4 lays a database out as a snapshot does, chunks stored raw:
    /// its checksums refuse random damage, so these entries are rewritten
    /// with every checksum and size resealed, as a hostile writer would.
    @Test("format 4: resealed entries that are not the records' entries, out of order or malformed are refused")
    func disagreeingEntriesChunked() throws {
        let database = try Self.database()
        let bytes = BinaryCodec.encode(database)
        let prefix = Array(bytes[..<5])
        #expect(prefix == Array("STRD".utf8) + [UInt8(BinaryCodec.databaseFormatVersion)])
        let file = Array(bytes[5...])
        let layout = try SnapshotLayout(file, compressed: false)
        // The title index's chunk is the last: its last "Gamma" is an entry.
        let last = layout.chunks.count - 1
        let raw = try layout.raw(of: last, in: file)
        let gamma = try #require(raw.ranges(of: Array("Gamma".utf8)).last).lowerBound
        func decoding(_ edit: (inout [UInt8]) -> Void) throws -> [UInt8] {
            var changed = raw
            edit(&changed)
            return prefix + (try layout.resealing(file, chunk: last, raw: changed))
        }
        #expect(
            try BinaryCodec.decodeDatabase(prefix + (try layout.resealing(file, chunk: last, raw: raw))) == database
        )
        #expect {
            try BinaryCodec.decodeDatabase(try decoding { $0[gamma + 1] = UInt8(ascii: "o") })
        } throws: { error in
            guard case .invalidIndex(_, "songs", "byTitle", let reason)? = error as? CodecError else { return false }
            return reason.contains("not the records' entries")
        }
        for edit: (inout [UInt8]) -> Void in [{ $0[gamma] = UInt8(ascii: "0") }, { $0[gamma + 5] = UInt8(ascii: "A") }]
        {
            #expect {
                try BinaryCodec.decodeDatabase(try decoding(edit))
            } throws: { error in
                guard case .damaged(_, let reason)? = error as? CodecError else { return false }
                return reason.contains("byTitle")
            }
        }
        // Every truncation, and a byte changed anywhere, is refused.
        for end in 0..<bytes.count {
            #expect(throws: CodecError.self) { try BinaryCodec.decodeDatabase(Array(bytes[..<end])) }
        }
        for position in stride(from: 5, to: bytes.count, by: 7) {
            var changed = bytes
            changed[position] ^= 0x20
            #expect(throws: CodecError.self, "byte \(position)") { try BinaryCodec.decodeDatabase(changed) }
        }
    }

    @Test("random mutations of a larger database with indexes decode to a consistent value or throw", arguments: 0..<2)
    func mutations(seed: UInt64) throws {
        var random = SeededRandom(seed: 700 + seed)
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byGroup", on: "items", fields: ["group", "n"])
        try builder.createIndex("byName", on: "items", fields: ["name"], unique: true)
        try builder.createIndex("byTags", on: "items", fields: [FieldPath("meta", "tag")])
        for n in 0..<120 {
            let name = String(repeating: "name ", count: 1 + random.int(below: 8)) + "\(n)"
            let record: Record = [
                "group": .int(Int64(random.int(below: 5))), "n": .double(Double(n) / 3),
                "name": .string(name), "meta": ["tag": .string(n % 3 == 0 ? "x\u{0}y" : "é\(n % 7)")],
            ]
            try builder.insert(record, id: RecordID(Int64(n) - 60), into: "items")
        }
        let database = builder.database
        // Format 3 (one stream, its every field validated) and format 4
        // (chunks behind checksums).
        let bytes = seed == 0 ? try BinaryCodec.encode(database, version: 3) : BinaryCodec.encode(database)
        #expect(try BinaryCodec.decodeDatabase(bytes) == database)
        var accepted = 0
        for _ in 0..<1_500 {
            var mutated = bytes
            // Mostly in the entry blocks, which follow the records.
            let start = random.int(below: 2) == 0 ? 0 : mutated.count * 2 / 3
            for _ in 0..<(1 + random.int(below: 2)) {
                mutated[start + random.int(below: mutated.count - start)] = UInt8(random.int(below: 256))
            }
            guard let decoded = try? BinaryCodec.decodeDatabase(mutated) else { continue }
            decoded._invariantCheck()
            accepted += 1
        }
        #expect(accepted < 1_500, "seed \(seed): every mutation was accepted")
    }
}
