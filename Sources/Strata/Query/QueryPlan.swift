/// How a query runs: through which index, or by a scan of the table.
public struct QueryPlan: Hashable, Sendable, CustomStringConvertible {
    /// Where the results come from.
    public enum Access: Hashable, Sendable {
        /// The entries of the named index between two bounds.
        case index(Key)
        /// Every record of the table.
        case scan
    }

    /// Where the results come from.
    public var access: Access
    /// Whether a `filter` predicate runs on each record read.
    public var filters: Bool
    /// Whether a scan sorts its results (by the requested order, or by ID).
    public var sorts: Bool

    /// "index byAlbum", "index byAlbum + filter", "scan + filter + sort".
    public var description: String {
        var text: String
        switch access {
        case .index(let name): text = "index \(name)"
        case .scan: text = "scan"
        }
        if filters { text += " + filter" }
        if sorts { text += " + sort" }
        return text
    }
}

extension Query {
    /// The plan: the index it uses, or "scan". Runs nothing.
    /// - Throws: ``QueryError``, as the query itself would.
    public func explain() throws -> QueryPlan {
        switch try plan() {
        case .index(let index, _):
            return QueryPlan(access: .index(index.definition.name), filters: !filters.isEmpty, sorts: false)
        case .scan: return QueryPlan(access: .scan, filters: !filters.isEmpty, sorts: true)
        }
    }

    /// What a query resolves to.
    enum Resolved {
        /// An index, and whether its order is reversed.
        case index(TableIndex, descending: Bool)
        case scan
    }

    /// The table, and the first index (by name) that serves the conditions
    /// and the order: the equality paths are its first fields (in any
    /// order), a range is on the next field, and the order is on an
    /// equality path or on the next field.
    /// The number of distinct paths the equalities name.
    var equalPathCount: Int {
        var count = 0
        for i in equalities.indices where !equalities[..<i].contains(where: { $0.path == equalities[i].path }) {
            count += 1
        }
        return count
    }

    func plan() throws -> Resolved {
        if let deferredError { throw deferredError }
        guard let recorder = database._reads else { return try resolve() }
        // Inside an observation: what the answer depends on. A query that
        // fails for want of a table or an index depends on the table.
        let resolved: Resolved
        do {
            resolved = try resolve()
        } catch {
            recorder.noteTable(table)
            throw error
        }
        switch resolved {
        case .index(let index, _):
            if let (lower, upper) = bounds(for: index) {
                recorder.noteRange(lower..<upper, of: index.definition.name, in: table)
            } else {
                // Contradictory equalities select nothing on any value, but
                // the plan itself depends on the table's indexes.
                recorder.noteTable(table)
            }
        case .scan:
            recorder.noteTable(table)
        }
        return resolved
    }

    func resolve() throws -> Resolved {
        guard let table = database._tables[table] else { throw QueryError.unknownTable(self.table) }
        // Linear checks over a handful of paths: no sets or dictionaries
        // on the path of a query that takes microseconds.
        let k = equalPathCount
        for position in table.indexes.indices {
            // Only the fields are read until an index is chosen: no copy of
            // each index (its name, fields and tree).
            let fields = table.indexes[position].definition.fields
            guard k <= fields.count,
                fields.prefix(k).allSatisfy({ field in equalities.contains { $0.path == field } }),
                equalities.allSatisfy({ fields.prefix(k).contains($0.path) })
            else { continue }
            if let range {
                guard k < fields.count, fields[k] == range.path else { continue }
            }
            if let ordering {
                guard
                    equalities.contains(where: { $0.path == ordering.path })
                        || (k < fields.count && fields[k] == ordering.path)
                else {
                    continue
                }
            }
            if k == 0 && range == nil && ordering == nil { continue }
            let descending = (ordering?.descending ?? false) != isReversed
            return .index(table.indexes[position], descending: descending)
        }
        let unconditioned = equalities.isEmpty && range == nil && ordering == nil
        if unconditioned || !filters.isEmpty { return .scan }
        throw QueryError.noIndex(
            table: self.table,
            conditions: equalities.map(\.path) + (range.map { [$0.path] } ?? []),
            order: ordering?.path,
            indexes: table.indexDefinitions
        )
    }
}
