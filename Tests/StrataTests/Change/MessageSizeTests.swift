import Foundation
import PersistentCollections
import Strata
import Testing

/// Messages that name values stay short whatever the values: a conflict
/// over a 1 MB photo printed 6 MB of hexadecimal. Large values are cut
/// short with their size, and two that agree in what is shown still read
/// differently.
@Suite("Messages with large values")
struct MessageSizeTests {
    static let megabyte = 1 << 20

    /// The conflict a transaction built on `built` meets on `found`.
    static func conflict(
        replacing old: Value,
        with new: Value,
        found other: Value
    ) throws -> String {
        var insert = TransactionBuilder(on: Database())
        try insert.insert(["photo": old], id: 1, into: "t")
        let base = try apply(Database(), insert.transaction(t: 1))
        var update = TransactionBuilder(on: base)
        try update.update(1, in: "t", [.set("photo", new)])
        var elsewhere = TransactionBuilder(on: Database())
        try elsewhere.insert(["photo": other], id: 1, into: "t")
        let changed = try apply(Database(), elsewhere.transaction(t: 1))
        do {
            _ = try apply(changed, update.transaction(t: 2))
        } catch let error as ApplyError {
            return error.description
        }
        Issue.record("the update applied over another value")
        return ""
    }

    @Test("a conflict over megabyte values names them in a few hundred characters")
    func conflictOverBytes() throws {
        let photo = Value.bytes([UInt8](repeating: 1, count: Self.megabyte))
        let edited = Value.bytes([UInt8](repeating: 2, count: Self.megabyte))
        // Bytes of one length print alike, and so do their first bytes here.
        let found = Value.bytes([UInt8](repeating: 1, count: Self.megabyte - 1) + [9])
        let message = try Self.conflict(replacing: photo, with: edited, found: found)
        #expect(message.utf8.count < 1_000, "\(message.utf8.count) bytes")
        #expect(message.contains("(1048576 bytes)"))
        // Expected and found are told apart, by their encodings' checksums
        // (the same in every run).
        let parts = message.components(separatedBy: ", found ")
        #expect(parts.count == 2)
        #expect(parts.first?.hasSuffix(parts.last ?? "") == false)
        let checksum = String(CRC32C.checksum(BinaryCodec.encode(found)), radix: 16)
        #expect(parts.last?.hasSuffix("\(checksum))") == true, "\(parts.last ?? "")")
    }

    @Test("long strings, lists and maps are cut short with their size; short ones print whole")
    func cutShort() throws {
        let long = String(repeating: "Blue River ", count: 100_000)
        let message = try Self.conflict(
            replacing: .string(long),
            with: "short",
            found: .string(long + "!")
        )
        #expect(message.utf8.count < 1_000, "\(message.utf8.count) bytes")
        #expect(message.contains("(1100000 bytes)") && message.contains("(1100001 bytes)"))
        let list = Value.list(PersistentVector((0..<100_000).map { Value.int(Int64($0)) }))
        let change = FieldChange(old: list, new: .list(PersistentVector((0..<100_001).map { Value.int(Int64($0)) })))
        #expect(change.description.utf8.count < 1_000)
        #expect(change.description.contains("(a list of 100000)") && change.description.contains("(a list of 100001)"))
        var map = PersistentMap<Key, Value>()
        for i in 0..<5_000 { map[Key("key\(i)")] = .string(String(repeating: "x", count: 100)) }
        let mapChange = FieldChange(old: nil, new: .map(map))
        #expect(mapChange.description.utf8.count < 1_000)
        #expect(mapChange.description.hasPrefix("absent → [\"key0\": \""))
        #expect(mapChange.description.hasSuffix("(a map of 5000)"))
        // Short values, and values that differ only in their bytes, as before.
        #expect(FieldChange(old: 1, new: "two").description == "1 → \"two\"")
        #expect(
            FieldChange(old: .string("caf\u{E9}"), new: .string("cafe\u{301}")).description
                == "\"caf\\u{E9}\" → \"cafe\\u{301}\""
        )
    }

    @Test("long map keys, references and path errors are cut short too")
    func keysReferencesAndPaths() throws {
        let key = Key(String(repeating: "k", count: 1 << 20))
        var old = PersistentMap<Key, Value>()
        old[key] = 1
        var new = old
        new[key] = 2
        let change = FieldChange(old: .map(old), new: .map(new))
        #expect(change.description.utf8.count < 1_000, "\(change.description.utf8.count) bytes")
        #expect(change.description.contains("(1048576 bytes)"))
        let table = Key(String(repeating: "t", count: 100_000))
        let reference = FieldChange(
            old: .reference(RecordReference(table: table, id: 1)),
            new: .reference(RecordReference(table: table, id: 2))
        )
        #expect(reference.description.utf8.count < 1_000, "\(reference.description.utf8.count) bytes")
        var record: Record = ["text": .string(String(repeating: "x", count: 1 << 20))]
        #expect {
            try record.setValue(1, at: FieldPath("text", "x"))
        } throws: { error in
            "\(error)".utf8.count < 1_000 && "\(error)".contains("(1048576 bytes)")
        }
    }

    @Test("a unique index refusing a huge key names it in a few hundred characters")
    func uniqueViolation() throws {
        let key = Value.string(String(repeating: "k", count: 200_000))
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byName", on: "t", fields: ["name"], unique: true)
        try builder.insert(["name": key], id: 1, into: "t")
        let base = try apply(Database(), builder.transaction(t: 1))
        var other = TransactionBuilder(on: Database())
        try other.insert(["name": key], id: 2, into: "t")
        #expect {
            _ = try apply(base, other.transaction(t: 2))
        } throws: { error in
            guard case .uniqueViolation? = error as? ApplyError else { return false }
            let text = "\(error)"
            return text.utf8.count < 1_000 && text.contains("(200000 bytes)")
        }
    }
}
