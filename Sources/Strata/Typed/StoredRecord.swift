import Foundation

/// A Swift type whose values are the records of one table.
///
///     struct Song: StoredRecord {
///         static let table: Key = "songs"
///         var id: Int
///         var title: String
///         var album: String?        // nil: the field is absent
///         var tracks: [Int] = []
///     }
///
///     try builder.save(Song(id: 7, title: "Blue River"))
///     let song = try store.current.record(Song.self, id: 7)
///
/// Its properties are the record's fields, encoded straight into the
/// packed record form by ``RecordEncoder`` and read straight from it by
/// ``RecordDecoder``. The ``id`` is the record's key, not a field: it is
/// left out when encoding and served from the key when decoding (see
/// ``idKey``). How records written by an older version of the type read
/// into a newer one is in ``RecordDecoder``.
///
/// A stored record is a value that crosses threads (an observation's
/// results, a fetch decoded on every core): the protocol requires
/// `Sendable`, which a struct of Sendable properties is.
public protocol StoredRecord: Codable, Sendable {
    /// The type of ``id``: an integer, a string or a UUID (a ``RecordID``
    /// too, for a type that codes its ID itself: ``RecordID`` is not Codable).
    associatedtype ID: RecordIDConvertible
    /// The table the records live in.
    static var table: Key { get }
    /// The record's key in its table.
    var id: ID { get }
    /// The coding key of ``id`` (default "id"): never stored as a field;
    /// decoding it gives the record's key.
    static var idKey: String { get }
    /// How the records of older versions of the type read into this one
    /// (default: as they are). See ``RecordSchema``.
    static var schema: RecordSchema { get }
}

extension StoredRecord {
    /// "id".
    public static var idKey: String { "id" }
    /// No renamed fields, defaults or upcasters.
    public static var schema: RecordSchema { RecordSchema() }
    /// The record's key as a ``RecordID``. O(1).
    public var recordID: RecordID { id.recordID }
}

/// A value that can key a record: converts to a ``RecordID`` and back.
public protocol RecordIDConvertible: Sendable {
    /// This value as a record ID. O(1) (a string's: its length).
    var recordID: RecordID { get }
    /// The value a record ID stands for; nil when it holds another kind.
    init?(recordID: RecordID)
}

extension RecordID: RecordIDConvertible {
    /// Itself.
    public var recordID: RecordID { self }
    /// `recordID` itself.
    public init?(recordID: RecordID) { self = recordID }
}

extension Int: RecordIDConvertible {
    /// An integer record ID.
    public var recordID: RecordID { RecordID(self) }
    /// The integer of an integer record ID.
    public init?(recordID: RecordID) {
        guard case .integer(let value) = recordID.kind, let int = Int(exactly: value) else { return nil }
        self = int
    }
}

extension Int64: RecordIDConvertible {
    /// An integer record ID.
    public var recordID: RecordID { RecordID(self) }
    /// The integer of an integer record ID.
    public init?(recordID: RecordID) {
        guard case .integer(let value) = recordID.kind else { return nil }
        self = value
    }
}

extension String: RecordIDConvertible {
    /// A string record ID.
    public var recordID: RecordID { RecordID(self) }
    /// The string of a string record ID.
    public init?(recordID: RecordID) {
        guard case .string(let value) = recordID.kind else { return nil }
        self = value
    }
}

extension UUID: RecordIDConvertible {
    /// A UUID record ID.
    public var recordID: RecordID { RecordID(self) }
    /// The UUID of a UUID record ID.
    public init?(recordID: RecordID) {
        guard case .uuid(let value) = recordID.kind else { return nil }
        self = value
    }
}
