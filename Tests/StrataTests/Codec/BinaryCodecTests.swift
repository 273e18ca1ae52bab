import Foundation
import PersistentCollections
import Strata
import Testing

@Suite("Binary codec")
struct BinaryCodecTests {
    /// Encodings of random values, records, transactions and databases.
    static func samples(seed: UInt64) -> (
        values: [Value], records: [Record], transactions: [Transaction], databases: [Database]
    ) {
        var generator = RunGenerator(seed: seed)
        let base = generator.base()
        let (run, values) = generator.run(from: base, maxLength: 8)
        let records = values.flatMap { database in database.tables.values.flatMap { $0.records.values } }
        var extra: [Value] = [
            .null, true, false, .int(.min), .int(.max), .int(-1), .double(.nan), .double(-0.0), .double(.infinity),
            "", "naïve ✓", .bytes([]), .bytes([0, 255]), .date(Date(timeIntervalSinceReferenceDate: -1e9)),
            .reference(RecordReference(table: "t", id: RecordID(UUID()))), [], [:], [[[["deep": [1]]]]],
        ]
        extra += records.flatMap { $0.fields.map(\.value) }
        var combined = run
        if let whole = try? flatten(run) { combined.append(whole) }
        combined.append(inverse(run[0]))
        var described = run[0]
        described.metadata = ["author": "ana", "device": ["os": "linux", "build": 7]]
        described.significance = .significant
        combined.append(described)
        return (extra, records, combined, values)
    }

    @Test("round trips reproduce values, records, transactions and databases exactly", arguments: 0..<20)
    func roundTrips(seed: Int) throws {
        let (values, records, transactions, databases) = Self.samples(seed: UInt64(seed))
        for value in values { #expect(try BinaryCodec.decodeValue(BinaryCodec.encode(value)) == value) }
        for record in records { #expect(try BinaryCodec.decodeRecord(BinaryCodec.encode(record)) == record) }
        for transaction in transactions {
            #expect(try BinaryCodec.decodeTransaction(BinaryCodec.encode(transaction)) == transaction)
        }
        for database in databases {
            let bytes = BinaryCodec.encode(database)
            #expect(try BinaryCodec.decodeDatabase(bytes) == database)
            // The decoded value was built differently (bulk, in stored order)
            // but its canonical shape, and so its encoding, is the same.
            #expect(BinaryCodec.encode(try BinaryCodec.decodeDatabase(bytes)) == bytes)
        }
    }

    @Test("a value encodes to the same bytes however its maps were built")
    func canonical() {
        let a: Value = ["x": 1, "y": 2, "z": ["b": 1, "a": 2]]
        var map = PersistentMap<Key, Value>()
        map["z"] = ["a": 2, "b": 1]
        map["y"] = 2
        map["x"] = 1
        #expect(BinaryCodec.encode(a) == BinaryCodec.encode(Value.map(map)))
    }

    @Test("records whose fields arrive out of order or repeat a name are refused: the encoding is canonical")
    func fieldOrder() throws {
        let header: [UInt8] = Array("STRR".utf8) + [1]
        // Two fields, "b" = 1 then "a" = 2: out of order.
        let unsorted = header + [2, 0, 1, 0x62, 3, 2, 0, 1, 0x61, 3, 4]
        #expect(throws: CodecError.unorderedFields(offset: 11)) { try BinaryCodec.decodeRecord(unsorted) }
        // "b", then a reference to the first interned name, "b" again.
        let repeated = header + [2, 0, 1, 0x62, 3, 2, 1, 3, 4]
        #expect(throws: CodecError.duplicateKey(offset: 11, key: "b")) { try BinaryCodec.decodeRecord(repeated) }
        // In order.
        let sorted = header + [2, 0, 1, 0x61, 3, 4, 0, 1, 0x62, 3, 2]
        #expect(try BinaryCodec.decodeRecord(sorted) == ["a": 2, "b": 1])
        // Written at the current version, the same layout.
        #expect(
            BinaryCodec.encode(["b": 1, "a": 2] as Record)
                == Array("STRR".utf8) + [UInt8(BinaryCodec.formatVersion)] + sorted.dropFirst(header.count)
        )
    }

    @Test("a snapshot that repeats a record ID is refused, naming table, ID and offset")
    func repeatedRecordID() throws {
        // Basis 1, one table "t" with two records, both ID 7, no fields.
        let bytes = Array("STRD".utf8) + [1, 2, 1, 1, 0x74, 2, 0, 14, 0, 0, 14, 0]
        #expect(throws: CodecError.duplicateKey(offset: 13, key: "t/\(RecordID(7))")) {
            try BinaryCodec.decodeDatabase(bytes)
        }
        var valid = bytes
        valid[14] = 16  // the second ID becomes 8
        #expect(try BinaryCodec.decodeDatabase(valid).recordCount == 2)
    }

    @Test("a table of more records than one build part decodes whole; an ID repeated across parts is refused")
    func repeatedRecordIDAcrossParts() throws {
        // Basis 1, one table "t" of 70,000 records without fields (the
        // decode reads a table in parts of 65,536), IDs 0, 1, 2, ...
        func varint(_ value: UInt64) -> [UInt8] {
            var bytes: [UInt8] = []
            var v = value
            while v >= 0x80 {
                bytes.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            return bytes + [UInt8(v)]
        }
        let count = 70_000
        var bytes = Array("STRD".utf8) + [1, 2, 1, 1, 0x74] + varint(UInt64(count))
        for id in 0..<count { bytes += [0] + varint(UInt64(id) << 1) + [0] }
        let decoded = try BinaryCodec.decodeDatabase(bytes)
        let ids = decoded[table: "t"].records.keys.map { Int64($0.description)! }.sorted()
        #expect(ids == (0..<Int64(count)).map { $0 }, "the records decoded are not the 70,000 written")
        decoded[table: "t"].records._invariantCheck()

        // Record 69,000 (in the second part) repeats ID 5 (in the first):
        // refused, naming where the second one is.
        var repeated = Array("STRD".utf8) + [1, 2, 1, 1, 0x74] + varint(UInt64(count))
        var repeatedAt = 0
        for id in 0..<count {
            if id == 69_000 { repeatedAt = repeated.count }
            repeated += [0] + varint(UInt64(id == 69_000 ? 5 : id) << 1) + [0]
        }
        #expect(throws: CodecError.duplicateKey(offset: repeatedAt, key: "t/\(RecordID(5))")) {
            try BinaryCodec.decodeDatabase(repeated)
        }
    }

    @Test("errors name what and where")
    func errors() {
        let record: Record = ["title": "Blue River"]
        var newer = BinaryCodec.encode(record)
        newer[4] = 9
        #expect(throws: CodecError.unsupportedVersion(kind: "record", found: 9, supported: BinaryCodec.formatVersion)) {
            try BinaryCodec.decodeRecord(newer)
        }
        #expect(throws: CodecError.badMagic(expected: Array("STRR".utf8), found: Array("STRV".utf8))) {
            try BinaryCodec.decodeRecord(BinaryCodec.encode(Value.null))
        }
        // A list claiming a billion elements in a few bytes is refused before allocating.
        let huge: [UInt8] = Array("STRV".utf8) + [1, 9, 0x80, 0x94, 0xEB, 0xDC, 0x03]
        #expect(throws: CodecError.lengthTooLarge(offset: 6, length: 1_000_000_000, remaining: 0)) {
            try BinaryCodec.decodeValue(huge)
        }
        // Nesting beyond the limit is refused, not a stack overflow.
        let deep =
            Array("STRV".utf8) + [1] + [UInt8](repeating: 9, count: 2)
            + Array(
                repeating: [1, 9],
                count: 200
            ).flatMap { $0 }
        #expect(throws: CodecError.self) { try BinaryCodec.decodeValue(deep) }
        let description = CodecError.trailingBytes(offset: 12, count: 3).description
        #expect(description.contains("offset 12"))
        #expect(throws: CodecError.trailingBytes(offset: 6, count: 1)) {
            try BinaryCodec.decodeValue(BinaryCodec.encode(Value.null) + [0])
        }
    }

    @Test("text of every length to 40 bytes: one byte that is no UTF-8 anywhere is refused, other text round-trips")
    func textValidatedAtEveryPosition() throws {
        for length in 0...40 {
            let ascii = String(repeating: "a", count: length)
            let record: Record = ["t": .string(ascii), "l": .list([.string(ascii)])]
            #expect(try BinaryCodec.decodeRecord(BinaryCodec.encode(record)) == record)
            for position in 0..<length {
                // A two-byte character in place of one letter: valid.
                var accented = Array(ascii.utf8)
                accented.replaceSubrange(position...position, with: Array("é".utf8))
                let text = String(decoding: accented, as: UTF8.self)
                let valid: Record = ["t": .string(text)]
                #expect(try BinaryCodec.decodeRecord(BinaryCodec.encode(valid)) == valid)
                // A transaction's message (read by another path than field text).
                let message = Transaction(t: 1, basis: 0, timestamp: .distantPast, message: text)
                #expect(try BinaryCodec.decodeTransaction(BinaryCodec.encode(message)) == message)
                // The same bytes with the letter's byte made 0xFF (never UTF-8),
                // and a lead byte with no continuation.
                for bad: UInt8 in [0xFF, 0xC3] {
                    var bytes = BinaryCodec.encode(record)
                    let start = try #require(Self.range(of: Array(ascii.utf8), in: bytes))
                    bytes[start + position] = bad
                    #expect(throws: CodecError.self, "length \(length), byte \(bad) at \(position)") {
                        try BinaryCodec.decodeRecord(bytes)
                    }
                    // Found by a prefix no random ID byte run is likely to repeat.
                    let marked = "message:" + ascii
                    var transaction = BinaryCodec.encode(Transaction(t: 1, basis: 0, message: marked))
                    let at = try #require(Self.range(of: Array(marked.utf8), in: transaction))
                    transaction[at + 8 + position] = bad
                    #expect(throws: CodecError.self, "message: length \(length), byte \(bad) at \(position)") {
                        try BinaryCodec.decodeTransaction(transaction)
                    }
                }
            }
        }
    }

    /// Where `needle` (non-empty) first occurs in `haystack`.
    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// Decodes `bytes` as every kind; each must give a value or a CodecError.
    static func decodeAll(_ bytes: [UInt8]) -> Bool {
        func total<T>(_ body: () throws -> T) -> Bool {
            do {
                _ = try body()
                return true
            } catch is CodecError {
                return true
            } catch {
                return false
            }
        }
        /// What decodes must equal, and hash as, its own canonical encoding
        /// decoded again: a decoder that accepted a second spelling of a
        /// value would give two equal-looking values that differ.
        func canonical<T: Hashable>(_ decoded: T, _ encode: (T) -> [UInt8], _ decode: ([UInt8]) throws -> T) -> Bool {
            guard let again = try? decode(encode(decoded)) else { return false }
            return again == decoded && again.hashValue == decoded.hashValue
        }
        return total { try BinaryCodec.decodeValue(bytes) } && total { try BinaryCodec.decodeRecord(bytes) }
            && total { try BinaryCodec.decodeTransaction(bytes) } && total { try BinaryCodec.decodeDatabase(bytes) }
            && ((try? BinaryCodec.decodeValue(bytes)).map {
                canonical($0, { BinaryCodec.encode($0) }, { try BinaryCodec.decodeValue($0) })
            } ?? true)
            && ((try? BinaryCodec.decodeRecord(bytes)).map {
                canonical($0, { BinaryCodec.encode($0) }, { try BinaryCodec.decodeRecord($0) })
            } ?? true)
    }

    @Test("the smallest and largest encodings of every transaction field round-trip, flattened ones included")
    func extremeTransactions() throws {
        let zero = Date(timeIntervalSinceReferenceDate: 0)
        // The smallest summaries (t 1, empty message) cover the flatten of two empty transactions.
        let flattened = try flatten([
            Transaction(t: 1, basis: 0, timestamp: zero),
            Transaction(t: 2, basis: 1, timestamp: zero),
        ])
        #expect(flattened.covers.count == 2)
        #expect(try BinaryCodec.decodeTransaction(BinaryCodec.encode(flattened)) == flattened)
        let large = String(repeating: "m", count: 70_000)
        /// The covers of `count` transactions flattened, every other one with `message`.
        func summaries(_ count: Int, _ message: String) throws -> [TransactionSummary] {
            guard count > 0 else { return [] }
            let run = (1...Int64(count)).map {
                Transaction(t: $0, basis: $0 - 1, timestamp: zero, message: $0 % 2 == 0 ? message : "")
            }
            return try flatten(run).covers
        }
        var extremes: [Transaction] = []
        for t: Int64 in [0, 1, 63, 64, Int64.max] {
            for message in ["", "é", large] {
                extremes.append(
                    Transaction(
                        id: UUID(),
                        t: t,
                        basis: t == 0 ? 0 : t - 1,
                        timestamp: t == 0 ? zero : .distantFuture,
                        message: message,
                        significance: t == 1 ? .significant : .normal,
                        metadata: message.isEmpty ? [:] : ["": .string(message), "k": .int(.min)],
                        covers: try summaries(t == 63 ? 300 : (t == 64 ? 2 : 0), message),
                        reverts: t == 64 ? UUID() : nil
                    )
                )
            }
        }
        for transaction in extremes {
            #expect(
                try BinaryCodec.decodeTransaction(BinaryCodec.encode(transaction)) == transaction,
                "t \(transaction.t), message of \(transaction.message.utf8.count) bytes"
            )
        }
    }

    @Test("names of rejected input do not stay in the process; names of accepted input do")
    func rejectedNamesLeaveNothing() async throws {
        // A record whose last byte is cut: its field names are read, then the
        // input is refused. The fresh names are spliced into the bytes of a
        // placeholder (a Record built with them would intern them itself).
        let placeholderA = String(repeating: "a", count: 36)
        let placeholderB = String(repeating: "b", count: 36)
        let template = Array(
            BinaryCodec.encode([Key(placeholderA): 1, Key(placeholderB): .list([1, 2])] as Record).dropLast()
        )
        @Sendable func damaged() -> (bytes: [UInt8], names: [Key]) {
            var bytes = template
            var names: [Key] = []
            for placeholder in [placeholderA, placeholderB] {
                let fresh = UUID().uuidString
                names.append(Key(fresh))
                let start = bytes.firstRange(of: Array(placeholder.utf8))!.lowerBound
                bytes.replaceSubrange(start..<(start + 36), with: Array(fresh.utf8))
            }
            return (bytes, names)
        }
        // Other suites intern names meanwhile, so each rejected name is
        // looked up rather than the table's size compared.
        let rejected = await withTaskGroup(of: [Key].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var names: [Key] = []
                    for _ in 0..<5_000 {
                        let input = damaged()
                        #expect(throws: CodecError.self) { try BinaryCodec.decodeRecord(input.bytes) }
                        names += input.names
                    }
                    return names
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(rejected.count == 40_000)
        #expect(rejected.filter(Record.isFieldNameInterned).isEmpty)
        let accepted = Key("accepted-\(UUID().uuidString)")
        let decoded = try BinaryCodec.decodeRecord(BinaryCodec.encode([accepted: 7] as Record))
        #expect(Record.isFieldNameInterned(accepted))
        #expect(decoded[accepted] == 7)
        #expect(decoded.names == [accepted])
        // A name a decode is refused with, then used by a record, is the record's for good.
        let shared = Key("shared-\(UUID().uuidString)")
        let bad = Array(BinaryCodec.encode([shared: 1] as Record).dropLast())
        #expect(throws: CodecError.self) { try BinaryCodec.decodeRecord(bad) }
        let built: Record = [shared: 2]
        #expect(throws: CodecError.self) { try BinaryCodec.decodeRecord(bad) }
        #expect(built[shared] == 2 && built.names == [shared])
        #expect(try BinaryCodec.decodeRecord(BinaryCodec.encode(built)) == built)
    }

    @Test("records whose field count crosses a varint width splice, read and round-trip")
    func fieldCountWidths() throws {
        var record = Record()
        var model: [Key: Value] = [:]
        // 127 → 128 fields turns the packed count from one byte into two, and back.
        for i in 0..<130 {
            let name = Key("f\(i)")
            record[name] = .int(Int64(i))
            model[name] = .int(Int64(i))
            #expect(record.count == model.count)
        }
        for i in stride(from: 129, through: 100, by: -1) {
            record[Key("f\(i)")] = nil
            model[Key("f\(i)")] = nil
            #expect(record.count == model.count)
            #expect(record[Key("f\(i - 1)")] == model[Key("f\(i - 1)")])
        }
        #expect(Dictionary(uniqueKeysWithValues: record.map { ($0.name, $0.value) }) == model)
        #expect(try BinaryCodec.decodeRecord(BinaryCodec.encode(record)) == record)
        #expect(record == Record(model))
    }

    @Test("integers only in their shortest encoding: an overlong varint is refused, naming its offset")
    func overlongIntegers() throws {
        let record: Record = ["a": .int(5)]
        let bytes = BinaryCodec.encode(record)
        #expect(bytes.last == 0x0A)
        let overlong = bytes.dropLast() + [0x8A, 0x00]
        #expect(throws: CodecError.overlongInteger(offset: bytes.count - 1)) {
            try BinaryCodec.decodeRecord(Array(overlong))
        }
        // Every width: the shortest decodes, one more zero group is refused.
        for value: Int64 in [0, 1, 63, 64, -65, 8_191, 1 << 20, .max, .min] {
            let encoded = BinaryCodec.encode(Value.int(value))
            #expect(try BinaryCodec.decodeValue(encoded) == .int(value))
            var padded = encoded
            padded[padded.count - 1] |= 0x80
            padded.append(0x00)
            #expect(throws: CodecError.self) { try BinaryCodec.decodeValue(padded) }
        }
    }

    /// 4 chunks x (truncations + 6,000 mutations + 2,500 random inputs), each
    /// decoded four ways: over 100,000 decoder runs in all.
    @Test("fuzz: random bytes, every truncation, random mutations", arguments: 0..<4)
    func fuzz(chunk: Int) {
        var random = SeededRandom(seed: 1_000 + UInt64(chunk))
        let (values, records, transactions, databases) = Self.samples(seed: 100 + UInt64(chunk))
        var encodings = values.map { BinaryCodec.encode($0) } + records.map { BinaryCodec.encode($0) }
        encodings += transactions.map { BinaryCodec.encode($0) } + databases.suffix(2).map { BinaryCodec.encode($0) }
        var cases = 0
        for encoding in encodings.prefix(12) {
            for length in 0..<encoding.count {
                #expect(Self.decodeAll(Array(encoding[..<length])), "truncation \(length)")
                cases += 4
            }
        }
        for trial in 0..<6_000 {
            var bytes = encodings[random.int(below: encodings.count)]
            for _ in 0..<(1 + random.int(below: 4)) {
                switch random.int(below: 4) {
                case 0 where !bytes.isEmpty:
                    bytes[random.int(below: bytes.count)] = UInt8(truncatingIfNeeded: random.next())
                case 1 where !bytes.isEmpty: bytes[random.int(below: bytes.count)] ^= UInt8(1 << random.int(below: 8))
                case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: random.int(below: bytes.count + 1))
                default: if !bytes.isEmpty { bytes.remove(at: random.int(below: bytes.count)) }
                }
            }
            #expect(Self.decodeAll(bytes), "chunk \(chunk) mutation \(trial)")
            cases += 4
        }
        for trial in 0..<2_500 {
            var bytes = random.bytes(random.int(below: 64))
            if random.chance(70) {
                bytes = Array("STR".utf8) + [[0x56, 0x52, 0x54, 0x44][random.int(below: 4)], 1] + bytes
            }
            #expect(Self.decodeAll(bytes), "chunk \(chunk) random \(trial)")
            cases += 4
        }
        #expect(cases >= 25_000)
    }
}
