/// What an observer's closure read from a database value, at the grain
/// the store can match against a commit's changes: the whole value, whole
/// tables, single records, and ranges of index entries.
///
/// A read set over-approximates: anything the closure's result depends on
/// is in it, so a commit that touches none of it cannot change the result.
struct ReadSet: Equatable, Sendable {
    /// A record of a table.
    struct RecordRead: Hashable, Sendable {
        var table: Key
        var id: RecordID
    }

    /// The entries of one index between two bounds, and the records they
    /// point to.
    struct RangeRead: Hashable, Sendable {
        var table: Key
        var index: Key
        var range: Range<IndexEntry>
    }

    /// Read through `Database.tables`: depends on everything.
    var everything = false
    /// Tables read whole (a scan, a table handed out).
    var tables: Set<Key> = []
    /// Records read one by one, outside the tables read whole.
    var records: Set<RecordRead> = []
    /// Index ranges a query read.
    var ranges: Set<RangeRead> = []

    /// The tables this set reads anything of.
    var tablesTouched: Set<Key> {
        tables.union(records.lazy.map(\.table)).union(ranges.lazy.map(\.table))
    }
}
