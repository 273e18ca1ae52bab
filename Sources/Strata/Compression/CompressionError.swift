/// Why compressed data could not be produced or read back.
///
/// Every decompression failure is one of these, thrown rather than crashing:
/// the input may be truncated, corrupted, empty or not zstd at all.
public enum CompressionError: Error, Equatable, Sendable {
    /// The input had no bytes.
    case empty
    /// The input does not start with the zstd frame magic number.
    case notZstd(firstBytes: [UInt8])
    /// The input ends before the frame does: `available` bytes of a frame
    /// that needs at least `needed` (nil when the frame's length is unknown).
    case truncated(available: Int, needed: Int?)
    /// The frame does not carry a content checksum, so its integrity
    /// cannot be verified.
    case missingChecksum
    /// The frame's content checksum does not match the decompressed bytes.
    case checksumMismatch
    /// The frame decoded to a different number of bytes than its header declares.
    case sizeMismatch(declared: Int, actual: Int)
    /// The frame declares or produces more bytes than the configured limit.
    case tooLarge(size: UInt64, limit: Int)
    /// Bytes remain after the end of the frame, starting at `offset`.
    case trailingData(offset: Int, count: Int)
    /// zstd rejected the data as malformed; `reason` is zstd's own description.
    case corrupted(reason: String)
    /// A stream call was made out of order (for example `feed` before `begin`).
    case streamMisuse(String)
    /// zstd failed while compressing (out of memory, bad parameter).
    case compressionFailed(reason: String)
}

extension CompressionError: CustomStringConvertible {
    /// A one-line explanation of the failure.
    public var description: String {
        switch self {
        case .empty:
            return "compressed input is empty"
        case .notZstd(let firstBytes):
            let hex = firstBytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ")
            return "input is not a zstd frame (starts with \(hex.isEmpty ? "nothing" : hex))"
        case .truncated(let available, let needed):
            if let needed {
                return "zstd frame is truncated: \(available) bytes present, at least \(needed) needed"
            }
            return "zstd frame is truncated after \(available) bytes"
        case .missingChecksum:
            return "zstd frame carries no content checksum; its integrity cannot be verified"
        case .checksumMismatch:
            return "zstd content checksum does not match: the data is corrupted"
        case .sizeMismatch(let declared, let actual):
            return "zstd frame declares \(declared) bytes but decoded to \(actual)"
        case .tooLarge(let size, let limit):
            return "zstd frame needs \(size) bytes, above the limit of \(limit)"
        case .trailingData(let offset, let count):
            return "\(count) unexpected bytes after the zstd frame at offset \(offset)"
        case .corrupted(let reason):
            return "zstd data is corrupted: \(reason)"
        case .streamMisuse(let message):
            return "zstd stream misuse: \(message)"
        case .compressionFailed(let reason):
            return "zstd compression failed: \(reason)"
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
