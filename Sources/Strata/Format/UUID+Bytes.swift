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
