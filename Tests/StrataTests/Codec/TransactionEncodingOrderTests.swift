import Foundation
import PersistentCollections
import Strata
import Testing

/// A transaction's bytes do not depend on the process that encodes it: its
/// changes are written in ID order, whatever order the process's hash key
/// gives its maps. Checked across processes: the child decodes what this
/// process encoded and encodes it again, with a key of its own.
@Suite("Transaction encoding order across processes")
struct TransactionEncodingOrderTests {
    /// Changes of every kind to records with IDs from `ids`.
    static func transaction(_ ids: [RecordID], tables: [Key] = ["songs"]) -> Transaction {
        var changes: PersistentMap<Key, PersistentMap<RecordID, Change>> = [:]
        for (t, table) in tables.enumerated() {
            var tableChanges = PersistentMap<RecordID, Change>()
            for (n, id) in ids.enumerated() {
                let record: Record = ["n": .int(Int64(n)), "table": .int(Int64(t))]
                switch n % 3 {
                case 0: tableChanges[id] = .insert(record)
                case 1: tableChanges[id] = .delete(record)
                default: tableChanges[id] = .update(["n": FieldChange(old: .int(0), new: .int(Int64(n)))])
                }
            }
            changes[table] = tableChanges
        }
        return Transaction(
            id: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
            t: 9,
            basis: 8,
            timestamp: Date(timeIntervalSinceReferenceDate: 1_000),
            message: "order",
            changes: changes
        )
    }

    static func uuid(_ n: Int) -> UUID {
        var random = SeededRandom(seed: UInt64(n))
        let bytes = random.bytes(16)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
    }

    @Test(
        "the child process re-encodes the same bytes",
        arguments: [
            "255 integers", "256 integers", "300 spread integers", "70,000 integers", "300 mixed kinds",
            "two tables",
        ]
    )
    func sameBytesInAnotherProcess(shape: String) async throws {
        var random = SeededRandom(seed: 5)
        let ids: [RecordID]
        var tables: [Key] = ["songs"]
        switch shape {
        case "255 integers": ids = (0..<255).map { RecordID($0 * 7 + 1) }
        case "256 integers": ids = (0..<256).map { RecordID($0 - 100) }
        case "300 spread integers":
            ids =
                [RecordID(Int64.min), RecordID(Int64.max), RecordID(0), RecordID(-1)]
                + (0..<296).map { _ in RecordID(Int64(bitPattern: random.next())) }
        case "70,000 integers": ids = (0..<70_000).map { RecordID($0 * 3 - 35_000) }
        case "300 mixed kinds":
            ids =
                (0..<100).map { RecordID($0 - 50) } + (0..<100).map { RecordID("id\($0)é") }
                + (0..<100).map { RecordID(Self.uuid($0)) }
        default:
            ids = (0..<400).map { RecordID($0) }
            tables = ["songs", "albums", "é", "a"]
        }
        let encoded = BinaryCodec.encode(Self.transaction(ids, tables: tables))
        let directory = temporaryStorePath("order")
        defer { removeStore(directory) }
        let file = directory + "/transaction.bin"
        try Data(encoded).write(to: URL(fileURLWithPath: file))
        let child = try ChildProcess(path: StoreCrashTests.writerPath, arguments: [file, "reencode"])
        _ = try await child.finish()
        let again = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file + ".out")))
        // Compared first: an expectation on the arrays would print them whole.
        let same = again == encoded
        let firstDifference = (0..<min(again.count, encoded.count)).first { again[$0] != encoded[$0] }
        #expect(
            same,
            "\(shape): \(again.count) bytes against \(encoded.count), first differing at \(firstDifference.map(String.init) ?? "the end")"
        )
        let decoded = try BinaryCodec.decodeTransaction(again) == Self.transaction(ids, tables: tables)
        #expect(decoded, "\(shape): the bytes decode to another transaction")
    }
}
