import CLibPQ
import Foundation

/// A value sent to PostgreSQL as a statement's parameter, or read back
/// from a row: the types the storage's tables use.
public enum PostgresValue: Sendable, Hashable {
    /// `boolean`.
    case bool(Bool)
    /// `integer` (`smallint` reads as this too).
    case int32(Int32)
    /// `bigint`.
    case int64(Int64)
    /// `text` (`varchar`, `char` and `name` read as this too).
    case text(String)
    /// `bytea`, and the binary form of a column of a type not listed here.
    case bytes([UInt8])
    /// `uuid`.
    case uuid(UUID)
    /// `timestamptz`, to the microsecond.
    case date(Date)

    /// The integer, widened from `integer`; nil for other kinds. O(1).
    public var int64: Int64? {
        switch self {
        case .int64(let value): return value
        case .int32(let value): return Int64(value)
        default: return nil
        }
    }

    /// The integer when it is an `integer`; nil otherwise. O(1).
    public var int32: Int32? {
        if case .int32(let value) = self { return value }
        return nil
    }

    /// The bytes when it is a `bytea`; nil otherwise. O(1).
    public var bytes: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    /// The UUID when it is a `uuid`; nil otherwise. O(1).
    public var uuid: UUID? {
        if case .uuid(let value) = self { return value }
        return nil
    }

    /// The string when it is a `text`; nil otherwise. O(1).
    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

/// The rows a statement returned: each a value per column, nil for SQL
/// NULL.
public struct PostgresRows: Sendable, Equatable {
    /// The columns' names, in order.
    public var columnNames: [String]
    /// The rows, in the order the server sent them.
    public var rows: [[PostgresValue?]]

    /// Rows given directly.
    public init(columnNames: [String], rows: [[PostgresValue?]]) {
        self.columnNames = columnNames
        self.rows = rows
    }

    /// The first column of the first row; nil when there is none or it is
    /// NULL. O(1).
    public var scalar: PostgresValue? {
        guard let row = rows.first, let value = row.first else { return nil }
        return value
    }
}

// MARK: The binary wire forms

extension PostgresValue {
    /// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC).
    static let epochOffset: Int64 = 946_684_800 * 1_000_000

    /// The type's OID in `pg_type`.
    var typeOID: Oid {
        switch self {
        case .bool: return 16
        case .int32: return 23
        case .int64: return 20
        case .text: return 25
        case .bytes: return 17
        case .uuid: return 2950
        case .date: return 1184
        }
    }

    /// The value in PostgreSQL's binary format for its type.
    var binaryEncoding: [UInt8] {
        switch self {
        case .bool(let value): return [value ? 1 : 0]
        case .int32(let value): return Self.bigEndian(value)
        case .int64(let value): return Self.bigEndian(value)
        case .text(let value): return Array(value.utf8)
        case .bytes(let value): return value
        case .uuid(let value): return withUnsafeBytes(of: value.uuid) { Array($0) }
        case .date(let value):
            return Self.bigEndian(Self.postgresMicroseconds(value))
        }
    }

    /// The value of type `oid` from its binary form.
    /// - Throws: ``ClientFailure/malformed(_:)`` when the bytes do not fit
    ///   the type.
    init(oid: Oid, binary bytes: [UInt8]) throws {
        func fixed(_ count: Int) throws {
            guard bytes.count == count else {
                throw ClientFailure.malformed("a value of type \(oid) in \(bytes.count) bytes, not \(count)")
            }
        }
        switch oid {
        case 16:
            try fixed(1)
            self = .bool(bytes[0] != 0)
        case 21:
            try fixed(2)
            self = .int32(Int32(Int16(bitPattern: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))))
        case 23:
            try fixed(4)
            self = .int32(Int32(bitPattern: UInt32(Self.integer(bytes))))
        case 20:
            try fixed(8)
            self = .int64(Int64(bitPattern: Self.integer(bytes)))
        case 25, 1043, 1042, 19, 18, 705:
            self = .text(String(decoding: bytes, as: UTF8.self))
        case 2950:
            try fixed(16)
            let b = bytes
            self = .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                        b[14], b[15]
                    )
                )
            )
        case 1184, 1114:
            try fixed(8)
            self = .date(Self.date(postgresMicroseconds: Int64(bitPattern: Self.integer(bytes))))
        default:
            self = .bytes(bytes)
        }
    }

    /// `date` as PostgreSQL's microseconds since 2000, rounded; a date
    /// past what PostgreSQL holds (or not a number) as its `infinity` or
    /// `-infinity`.
    static func postgresMicroseconds(_ date: Date) -> Int64 {
        let microseconds = (date.timeIntervalSince1970 * 1_000_000).rounded() - Double(epochOffset)
        // PostgreSQL's own range (4714-11-24 BC to 294277 AD), narrower
        // than Int64's: a value outside it is refused ("timestamp out of range").
        guard microseconds.isFinite, microseconds >= -211_813_488_000_000_000, microseconds < 9_223_371_331_200_000_000
        else { return microseconds < 0 ? .min : .max }
        return Int64(microseconds)
    }

    /// The date of PostgreSQL's microseconds since 2000; its `infinity`
    /// and `-infinity` as `Date.distantFuture` and `Date.distantPast`.
    static func date(postgresMicroseconds value: Int64) -> Date {
        switch value {
        case .max: return .distantFuture
        case .min: return .distantPast
        default: return Date(timeIntervalSince1970: (Double(value) + Double(epochOffset)) / 1_000_000)
        }
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// A big-endian unsigned integer of up to 8 bytes.
    private static func integer(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}

extension PostgresRows {
    /// The rows of a libpq result (binary format). Copies every value out:
    /// the result is cleared after.
    init(_ result: OpaquePointer) throws {
        let columns = Int(PQnfields(result))
        columnNames = (0..<columns).map { String(cString: PQfname(result, Int32($0))) }
        let types = (0..<columns).map { PQftype(result, Int32($0)) }
        rows = try (0..<Int(PQntuples(result))).map { row in
            try (0..<columns).map { column -> PostgresValue? in
                let (r, c) = (Int32(row), Int32(column))
                guard PQgetisnull(result, r, c) == 0 else { return nil }
                let length = Int(PQgetlength(result, r, c))
                let bytes = PQgetvalue(result, r, c).withMemoryRebound(to: UInt8.self, capacity: length) {
                    Array(UnsafeBufferPointer(start: $0, count: length))
                }
                return try PostgresValue(oid: types[column], binary: bytes)
            }
        }
    }
}
