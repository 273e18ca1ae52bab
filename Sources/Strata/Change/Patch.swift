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

    /// `record` with the edits applied. O(edits · (log fields + depth)).
    ///
    /// - Throws: `FieldPathError` when a set goes through a value that is
    ///   not a map.
    public func applied(to record: Record) throws -> Record {
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
