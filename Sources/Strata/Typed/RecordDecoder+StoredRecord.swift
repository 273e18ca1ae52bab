extension RecordDecoder {
    /// `record`, stored under `id` in `table`, decoded as `R`, whose `id`
    /// must key that same record: the ID reaches the type as a number or a
    /// string, so a UUID-keyed record would read into a `String` ID (and a
    /// string key holding UUID text into a `UUID` one), and saving the value
    /// back would write a second record under the other kind of key.
    /// - Throws: ``RecordDecodingError`` for a record that does not decode,
    ///   or whose decoded `id` keys another record.
    func decodeStored<R: StoredRecord>(
        _ type: R.Type,
        from record: Record,
        id: RecordID,
        table: Key,
        context: _DecodingContext? = nil
    ) throws -> R {
        let value: R
        if let context {
            value = try decode(type, from: record, id: id, table: table, context: context)
        } else {
            value = try decode(type, from: record, id: id, table: table)
        }
        guard value.recordID == id else {
            throw RecordDecodingError(
                table: table,
                id: id,
                path: R.idKey,
                expected: "\(R.ID.self)",
                found: id.kindName,
                reason: "the record's key is \(id.kindName) \(id); as \(R.ID.self) it reads as \(value.recordID), "
                    + "the key of another record"
            )
        }
        return value
    }
}

extension RecordID {
    /// "an integer ID", "a string ID" or "a UUID ID".
    var kindName: String {
        switch kind {
        case .integer: return "an integer ID"
        case .string: return "a string ID"
        case .uuid: return "a UUID ID"
        }
    }
}
