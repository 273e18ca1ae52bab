import CChecksum
import Strata
import Testing

@Suite("CRC32C")
struct CRC32CTests {
    @Test("known answers")
    func knownAnswers() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
        // RFC 3720 (iSCSI) test vectors.
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
    }

    @Test("chained updates equal one update over the concatenation")
    func chaining() {
        var random = SeededRandom(seed: 7)
        for _ in 0..<200 {
            let bytes = random.bytes(Int(random.next() % 300))
            let split = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1))
            var crc = CRC32C()
            crc.update(bytes[..<split])
            crc.update(bytes[split...])
            #expect(crc.value == CRC32C.checksum(bytes), "split at \(split) of \(bytes.count)")
        }
    }

    @Test("hardware and table paths agree at every length and alignment")
    func pathsAgree() {
        var random = SeededRandom(seed: 11)
        let bytes = random.bytes(600)
        bytes.withUnsafeBytes { buffer in
            for start in 0..<9 {
                for length in 0..<(buffer.count - start) where length < 80 || length % 37 == 0 {
                    let slice = UnsafeRawBufferPointer(rebasing: buffer[start..<(start + length)])
                    let fast = CRC32C.checksum(slice)
                    let portable = strata_crc32c_update_portable(0, slice.baseAddress, slice.count)
                    #expect(fast == portable, "start \(start) length \(length)")
                }
            }
        }
    }

    @Test("non-contiguous sequences are checksummed like arrays")
    func nonContiguous() {
        let bytes = Array("123456789".utf8)
        #expect(CRC32C.checksum(bytes.lazy.map { $0 }) == 0xE306_9283)
    }
}
