/// Field-level edits of one record, applied in order: set a value at a
/// field path (creating nested maps as needed) or unset it.
public struct Patch: Hashable, Sendable {
    /// One edit.
    public enum Operation: Hashable, Sendable {
        /// Set the value at the path.
        case set(FieldPath, Value)
        /// Remove the value at the path (nothing when absent).
        case unset(FieldPath)
    }

    /// The edits, in order.
    public var operations: [Operation]

    /// A patch of the given edits.
    public init(_ operations: [Operation] = []) {
        self.operations = operations
    }

    /// Whether the patch has no edits.
    public var isEmpty: Bool { operations.isEmpty }

    /// Adds `set(path, value)`.
    public mutating func set(_ path: FieldPath, to value: Value) {
        operations.append(.set(path, value))
    }

    /// Adds `unset(path)`.
    public mutating func unset(_ path: FieldPath) {
        operations.append(.unset(path))
    }

    /// `record` with the edits applied. O(record size + edits · depth).
    ///
    /// - Throws: `FieldPathError` when a set goes through a value that is
    ///   not a map.
    public func applied(to record: Record) throws -> Record {
        guard operations.count <= Record._bulkFieldMinimum else { return try _appliedAtOnce(to: record) }
        var result = record
        for operation in operations {
            switch operation {
            case let .set(path, value): try result.setValue(value, at: path)
            case let .unset(path): result.removeValue(at: path)
            }
        }
        return result
    }
}

extension Patch: ExpressibleByArrayLiteral {
    /// A patch from a list of edits.
    public init(arrayLiteral operations: Operation...) {
        self.init(operations)
    }
}

extension Patch.Operation {
    /// The path the edit sets or removes.
    var path: FieldPath {
        switch self {
        case .set(let path, _), .unset(let path): return path
        }
    }
}

extension Patch {
    /// `applied(to:)` for many edits: the fields they touch read in one
    /// pass, edited in turn, and written in one pass (one edit at a time
    /// rewrites the whole record per edit).
    func _appliedAtOnce(to record: Record) throws -> Record {
        var values = record._values(of: operations.lazy.map(\.path.field))
        for operation in operations {
            let path = operation.path
            let current = values[path.field] ?? nil
            switch operation {
            case let .set(_, value):
                var old: Value?
                values[path.field] =
                    path.isField ? value : try Record._setting(value, in: current, path: path, old: &old)
            case .unset:
                guard !path.isField else {
                    values[path.field] = .some(nil)
                    continue
                }
                guard let current else { continue }
                var old: Value?
                let updated = Record._removing(in: current, keys: path.keys, old: &old)
                if old != nil { values[path.field] = updated }
            }
        }
        return record._replacing(values.map { ($0.key, $0.value) })
    }
}
