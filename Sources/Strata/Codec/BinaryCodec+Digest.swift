import Foundation

extension BinaryCodec {
    /// What a log segment's summary lists for a transaction: its ID, time,
    /// message and significance (its number follows from its place).
    ///
    ///     digest := id (16) · timestamp (f64 bits, u64 LE) · message (string) · significance (1)
    static func digest(_ summary: TransactionSummary) -> [UInt8] {
        var writer = ByteWriter(capacity: 32 + summary._message.utf8Count)
        writer.uuid(summary.id)
        writer.fixed64(summary.timestamp.timeIntervalSinceReferenceDate.bitPattern)
        writer.string(summary.message)
        writer.byte(UInt8(summary.significance.rawValue))
        return writer.bytes
    }

    /// The summary of transaction `t` from its digest.
    /// - Throws: ``CodecError`` when the bytes are not exactly a digest.
    static func summary(digest: [UInt8], t: Int64) throws -> TransactionSummary {
        var reader = ByteReader(digest)
        let id = try reader.uuid()
        let timestamp = try reader.date()
        let message = try reader.string()
        let significance = try reader.significance()
        try reader.expectEnd()
        return TransactionSummary(id: id, t: t, timestamp: timestamp, message: message, significance: significance)
    }
}
