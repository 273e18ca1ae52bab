extension JSONReader {
    /// The double a JSON number with a fraction or an exponent spells,
    /// when one multiplication or division of two doubles gives it exactly
    /// rounded (Clinger's fast path): at most 19 significant digits whose
    /// integer fits 53 bits, scaled by a power of ten up to 10^22, which
    /// doubles hold exactly. Nil for any other number, which `Double(_:)`
    /// reads; where both read a number, they read the same double. Most
    /// numbers written with a fraction are of this kind (a duration of
    /// 398.005 s, a price), read without making a `String` for each.
    /// - Precondition: `text` is a JSON number (as `number()` scanned it).
    package static func shortDouble(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { index = 1 }
        var significand: UInt64 = 0
        var digits = 0
        var scale = 0
        var inFraction = false
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                // Leading zeros are no significant digits.
                if significand != 0 || byte != UInt8(ascii: "0") { digits += 1 }
                guard digits <= 19 else { return nil }
                significand = significand &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                if inFraction { scale -= 1 }
            } else {
                break
            }
            index += 1
        }
        if index < text.count {
            // An exponent: `e` or `E`, a sign, digits (a few: past 10^22 is no fast path).
            index += 1
            var exponentNegative = false
            if text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
                exponentNegative = text[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponent = 0
            while index < text.count {
                exponent = exponent * 10 + Int(text[index] &- UInt8(ascii: "0"))
                guard exponent <= 400 else { return nil }
                index += 1
            }
            scale += exponentNegative ? -exponent : exponent
        }
        guard significand <= 1 << 53 else { return nil }
        let magnitude: Double
        if significand == 0 {
            magnitude = 0
        } else if scale >= 0 {
            guard scale < exactPowersOfTen.count else { return nil }
            magnitude = Double(significand) * exactPowersOfTen[scale]
        } else {
            guard -scale < exactPowersOfTen.count else { return nil }
            magnitude = Double(significand) / exactPowersOfTen[-scale]
        }
        return negative ? -magnitude : magnitude
    }

    /// 10^0 ... 10^22: the powers of ten a double holds exactly.
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
