extension Database: CustomStringConvertible {
    /// Records shown whole by ``description``; a larger value is summarized.
    static let describedRecords = 32

    /// The basis and, for a small value, every record in table and ID
    /// order; for a larger one, each table's record count; then each
    /// table's indexes:
    ///
    ///     Database t 3 {songs: {7: {plays: 1, title: "Blue River"}}}
    ///     Database t 40000 {albums: 2,000 records, songs: 38,000 records indexed byAlbum(album, track)}
    ///
    /// O(n log n) for a small value, O(tables) otherwise.
    public var description: String {
        let names = tables.keys.sorted()
        let whole = recordCount <= Self.describedRecords
        let parts = names.map { name -> String in
            let table = tables[name]!
            let indexes =
                table.indexes.isEmpty
                ? "" : " indexed " + table.indexes.map(\.definition.description).joined(separator: ", ")
            guard whole else { return "\(name): \(table.count) record\(table.count == 1 ? "" : "s")" + indexes }
            let records = table.records.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            return "\(name): {" + records.joined(separator: ", ") + "}" + indexes
        }
        return "Database t \(basis) {" + parts.joined(separator: ", ") + "}"
    }
}
