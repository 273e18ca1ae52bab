/// The names of the numbered files a store keeps (log segments, snapshots,
/// blocks): a prefix, a number zero-padded to 20 digits (every `Int64`
/// fits, so names sort as their numbers do), a suffix.
enum FileName {
    /// `prefix` · `number`, 20 digits · `suffix`.
    /// - Precondition: `number >= 0`.
    static func numbered(_ prefix: String, _ number: Int64, _ suffix: String) -> String {
        precondition(number >= 0, "file numbers are never negative")
        let digits = String(number)
        return prefix + String(repeating: "0", count: 20 - digits.count) + digits + suffix
    }

    /// The number in `name` when it has the form ``numbered(_:_:_:)``
    /// writes, else nil (other files in the directory, temporary files).
    static func number(in name: String, prefix: String, suffix: String) -> Int64? {
        guard name.utf8.count == prefix.utf8.count + 20 + suffix.utf8.count,
            name.hasPrefix(prefix), name.hasSuffix(suffix)
        else { return nil }
        let digits = name.utf8.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count)
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }
}
