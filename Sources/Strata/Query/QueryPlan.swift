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
        case .index(let index, _, _):
            return QueryPlan(access: .index(index.definition.name), filters: !filters.isEmpty, sorts: false)
        case .scan: return QueryPlan(access: .scan, filters: !filters.isEmpty, sorts: true)
        }
    }

    /// What a query resolves to.
    enum Resolved {
        /// An index, whether its order is reversed, and the table (found
        /// once per query).
        case index(TableIndex, descending: Bool, table: Table)
        case scan
    }

    /// The number of distinct paths the equalities name.
    var equalPathCount: Int {
        var count = 0
        for i in equalities.indices {
            var repeated = false
            for j in 0..<i where equalities[j].path == equalities[i].path {
                repeated = true
                break
            }
            if !repeated { count += 1 }
        }
        return count
    }

    func plan() throws -> Resolved {
        if let deferredError { throw deferredError }
        if (limitCount ?? 0) < 0 || offsetCount < 0 {
            throw QueryError.invalidLimit(limit: limitCount, offset: offsetCount)
        }
        if let range, hasEquality(on: range.path) { throw QueryError.conflictingConditions(range.path) }
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
        case .index(let index, _, _):
            if let bounds = bounds(for: index) {
                recorder.noteRange(bounds.lower..<bounds.upper, of: index.definition.name, in: table)
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

    /// The table's first index (by name) that serves the conditions and
    /// the order (``serves(_:equalPaths:)``), or a scan when filters or no
    /// conditions allow one.
    /// - Throws: ``QueryError/unknownTable(_:)``, or
    ///   ``QueryError/noIndex(table:conditions:order:indexes:)`` when no
    ///   index serves the conditions and nothing allows a scan.
    func resolve() throws -> Resolved {
        guard let table = database._tables[table] else { throw QueryError.unknownTable(self.table) }
        // Index loops over a handful of paths, not sets, slices or
        // closures: a query on an index takes microseconds, and copies of
        // paths and values would be a good part of them.
        let k = equalPathCount
        let indexes = table.indexes
        for position in indexes.indices where serves(indexes[position].definition.fields, equalPaths: k) {
            let descending = (ordering?.descending ?? false) != isReversed
            return .index(indexes[position], descending: descending, table: table)
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

    /// Whether an index over `fields` serves the conditions and the order:
    /// its first `k` fields are the equality paths (in any order), a range
    /// is on the next field, and the order is on an equality path or on
    /// the next field.
    func serves(_ fields: [FieldPath], equalPaths k: Int) -> Bool {
        guard k <= fields.count else { return false }
        for i in 0..<k where !hasEquality(on: fields[i]) { return false }
        for e in equalities.indices {
            var found = false
            for i in 0..<k where fields[i] == equalities[e].path {
                found = true
                break
            }
            if !found { return false }
        }
        if let range, k == fields.count || fields[k] != range.path { return false }
        if let ordering, !hasEquality(on: ordering.path), k == fields.count || fields[k] != ordering.path {
            return false
        }
        return k > 0 || range != nil || ordering != nil
    }

    /// Whether an equality condition names `path`.
    func hasEquality(on path: FieldPath) -> Bool {
        for e in equalities.indices where equalities[e].path == path { return true }
        return false
    }
}
