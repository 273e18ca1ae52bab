import Foundation

extension UUID {
    /// The UUID whose 16 bytes are `bytes`, in order (as every encoding
    /// here writes them). - Precondition: `bytes.count == 16`.
    init(bytes: some Collection<UInt8>) {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes) }
        self.init(uuid: value)
    }
}

extension UUID {
    /// Whether this UUID's 16 bytes precede `other`'s, byte by byte: the
    /// order of their `uuidString`s (hex digits in byte order, and the
    /// digits 0–9 sort before A–F as the values they stand for), without
    /// making the strings. O(1).
    func bytesPrecede(_ other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { a in
            withUnsafeBytes(of: other.uuid) { b in a.lexicographicallyPrecedes(b) }
        }
    }
}
