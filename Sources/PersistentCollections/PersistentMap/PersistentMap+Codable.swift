extension PersistentMap: Encodable where Key: Encodable, Value: Encodable {
    /// Encodes the entries as a flat unkeyed list: key, value, key, value.
    /// O(n).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for (key, value) in self {
            try container.encode(key)
            try container.encode(value)
        }
    }
}

extension PersistentMap: Decodable where Key: Decodable, Value: Decodable {
    /// Decodes a flat list of alternating keys and values, as written by
    /// `encode(to:)`. A duplicate key or a dangling key is a
    /// `DecodingError.dataCorrupted`. O(n).
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var builder = Builder()
        while !container.isAtEnd {
            let key = try container.decode(Key.self)
            guard !container.isAtEnd else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "PersistentMap: key without a value at the end of the list"
                )
            }
            let value = try container.decode(Value.self)
            if builder.updateValue(value, forKey: key) != nil {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "PersistentMap: duplicate key \(key)"
                )
            }
        }
        self = builder.build()
    }
}
