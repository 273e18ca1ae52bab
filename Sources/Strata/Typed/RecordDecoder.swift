import Foundation

/// Decodes `Decodable` values from records, reading each field straight
/// from the packed record bytes (no `Value` dictionary in between): the
/// mapping of ``RecordEncoder`` read back, with two leniencies for older
/// records, an integer read as a `Double` or `Float` (when it holds it
/// exactly) and a missing field read as `nil` by an optional property.
/// A ``RecordSchema`` says how renamed, defaulted and retyped fields of
/// older versions read. What a model cannot hold is a
/// ``RecordDecodingError``, never a rounded or merged value: an integer
/// beyond the float's precision, a double read as a `Float` that it does
/// not equal (`0.1`, `16_777_217.0`), a map whose keys differ only in
/// Unicode normalization read as a `[String: V]` (a stored map's keys
/// compare by bytes, a `String`'s by canonical equivalence), or a map read
/// as an `[Int: V]` whose keys are not written as the model writes them
/// (`"01"`, `"+5"`: saving the model back would merge or rename them).
///
///     let song = try RecordDecoder().decode(Song.self, from: record, id: 7, table: "songs")
///
/// Complexity: O(fields read · fields of the record), the record's fields
/// being few; a map's keys are found by binary search.
public struct RecordDecoder: Sendable {
    /// How older records read.
    public var schema: RecordSchema
    /// The coding key served from the record's ID rather than a field
    /// (a ``StoredRecord``'s id), if any.
    public var idKey: String?

    /// A decoder with `schema` and `idKey` (by default none).
    public init(schema: RecordSchema = RecordSchema(), idKey: String? = nil) {
        self.schema = schema
        self.idKey = idKey
    }

    /// The value of type `T` that `record` (with `id`, in `table`) holds.
    /// - Throws: ``RecordDecodingError`` naming the table, the ID, the
    ///   field's path and the expected and found types.
    public func decode<T: Decodable>(
        _ type: T.Type,
        from record: Record,
        id: RecordID? = nil,
        table: Key = ""
    ) throws -> T {
        let context = _DecodingContext(schema: schema, idKey: idKey)
        defer { context.endBatch() }
        return try decode(type, from: record, id: id, table: table, context: context)
    }

    /// Decodes with `context` (shared by the records of one fetch: its
    /// name lookups are cached).
    func decode<T: Decodable>(
        _ type: T.Type,
        from record: Record,
        id: RecordID?,
        table: Key,
        context: _DecodingContext
    ) throws -> T {
        context.recordID = id
        context.failure = nil
        do {
            return try T(from: _RecordDecoding(record: record._bytes, context: context))
        } catch let error as DecodingError {
            throw RecordDecodingError(error, failure: context.failure, table: table, id: id)
        } catch let error as RecordDecodingError {
            throw error
        } catch {
            // A type's own `init(from:)` (of the record or of a value in
            // it) refused what it read, with an error of its own: still a
            // record that does not decode, named, the error its reason.
            throw RecordDecodingError(
                table: table,
                id: id,
                path: "",
                expected: "\(T.self)",
                found: "a value its init(from:) refused",
                reason: String(describing: error)
            )
        }
    }
}

/// A record that does not decode into the type asked for.
public struct RecordDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The record's table ("" when not given).
    public var table: Key
    /// The record's ID, when given.
    public var id: RecordID?
    /// The field's path: "title", "album.tracks[2].name" ("" for the record).
    public var path: String
    /// The type the decoder asked for ("Int", "String", …).
    public var expected: String
    /// What the record holds there: a value kind ("string", "int", "null",
    /// "map", …), or "nothing" when the field is absent.
    public var found: String
    /// More about it, from the decoder or the type's own `init(from:)`.
    public var reason: String

    /// An error with these parts.
    public init(table: Key, id: RecordID?, path: String, expected: String, found: String, reason: String = "") {
        self.table = table
        self.id = id
        self.path = path
        self.expected = expected
        self.found = found
        self.reason = reason
    }

    init(_ error: DecodingError, failure: _DecodingFailure?, table: Key, id: RecordID?) {
        let path: [any CodingKey]
        var expected = ""
        var found = ""
        var reason = ""
        switch error {
        case .typeMismatch(let type, let context):
            (path, expected, reason) = (context.codingPath, "\(type)", context.debugDescription)
        case .valueNotFound(let type, let context):
            (path, expected, found, reason) = (context.codingPath, "\(type)", "null", context.debugDescription)
        case .keyNotFound(let key, let context):
            (path, found, reason) = (context.codingPath + [key], "nothing", context.debugDescription)
        case .dataCorrupted(let context):
            (path, reason) = (context.codingPath, context.debugDescription)
        @unknown default:
            (path, reason) = ([], "\(error)")
        }
        let pathText = Self.describe(path)
        if let failure, failure.path == pathText {
            expected = failure.expected
            found = failure.found
            // The decoder's own words for a mismatch say no more than
            // expected and found, which the description gives already.
            if reason == "found \(found)" || reason == "the value is null" { reason = "" }
        }
        self.init(table: table, id: id, path: pathText, expected: expected, found: found, reason: reason)
    }

    /// "album.tracks[2].name" for the keys album, tracks, 2, name.
    static func describe(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue, key is _IndexKey {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    /// "songs/7: field album.title: expected String, found int".
    public var description: String {
        let place = id.map { "\(table)/\($0)" } ?? (table.string.isEmpty ? "a record" : "a record of \(table)")
        let field = path.isEmpty ? "the record" : "field \(path)"
        var text = "\(place): \(field)"
        if !expected.isEmpty || !found.isEmpty {
            text +=
                ": expected \(expected.isEmpty ? "another value" : expected), found \(found.isEmpty ? "another" : found)"
        }
        if !reason.isEmpty { text += " (\(reason))" }
        return text
    }
}

/// Where and why the decoder itself failed (the `DecodingError` it threw
/// carries no found type).
struct _DecodingFailure {
    var path: String
    var expected: String
    var found: String
}

/// What the decoders of one fetch share: the schema, the record being
/// decoded, and the field names' IDs looked up so far (each a lock of
/// the process-wide name table the first time).
final class _DecodingContext {
    let schema: RecordSchema
    /// Whether the schema maps nothing (most fields of most types).
    let schemaIsEmpty: Bool
    let idKey: String?
    var recordID: RecordID?
    var failure: _DecodingFailure?
    /// The field table of the record being decoded (name ID, where its
    /// value starts), kept here so that each record reuses one buffer.
    @exclusivity(unchecked) var fields: [(id: UInt32, start: Int)] = []
    /// The last record container handed out and its storage, reused for
    /// the next record asking for the same key type (making one costs two
    /// generic-metadata lookups and two allocations). It refers back to
    /// this context: ``endBatch()`` lets it go.
    var recordContainer: (keyType: ObjectIdentifier, entry: AnyObject)?
    /// Keyed by ``Key``, compared by UTF-8 bytes: `"caf\u{E9}"` and
    /// `"cafe\u{301}"` are two fields (`String ==` would make them one).
    @exclusivity(unchecked) private var nameIDs: [Key: Name] = [:]
    /// The names looked up for the previous record, in order: a type's
    /// `init(from:)` asks for the same keys in the same order for every
    /// record, so the n-th lookup usually compares one string, no hash.
    @exclusivity(unchecked) private var sequence: [(name: Key, resolved: Name)] = []
    @exclusivity(unchecked) private var position = 0
    /// The ID of a name no record holds.
    static let absent = UInt32.max

    /// A coding key resolved: its field-name ID (``absent`` when no record
    /// holds the name), and whether it is the ID key.
    struct Name {
        var id: UInt32
        var isRecordIDKey: Bool
    }

    init(schema: RecordSchema, idKey: String?) {
        self.schema = schema
        self.schemaIsEmpty = schema.isEmpty
        self.idKey = idKey
    }

    /// Ends the records decoded with this context: drops the cached
    /// container, which holds the context.
    func endBatch() { recordContainer = nil }

    /// Starts a record: its field table, and the lookups from the first.
    func begin(_ bytes: [UInt8]) {
        position = 0
        fields.removeAll(keepingCapacity: true)
        var reader = _PackedReader(bytes)
        let count = Int(reader.varint())
        for _ in 0..<count {
            let id = UInt32(reader.varint())
            fields.append((id, reader.offset))
            reader.skipValue()
        }
    }

    /// The field-name ID of `name`, and whether it is the ID key.
    func nameID(_ text: String) -> Name {
        let name = Key(text)
        let id: Name
        if position < sequence.count, sequence[position].name == name {
            id = sequence[position].resolved
        } else {
            id = lookUp(name)
            if position < sequence.count {
                sequence[position] = (name, id)
            } else if sequence.count < 64 {
                sequence.append((name, id))
            }
        }
        position += 1
        return id
    }

    /// Takes back the last lookup, which the general path repeats (the
    /// fast path found nothing usable): the order cache stays aligned.
    func rewindName() { position -= 1 }

    /// Where field `id` of the current record starts, if it has it.
    func start(of id: UInt32) -> Int? {
        for field in fields where field.id == id { return field.start }
        return nil
    }

    private func lookUp(_ name: Key) -> Name {
        if let id = nameIDs[name] { return id }
        let isRecordIDKey = idKey.map { Key($0) == name } ?? false
        let id = Name(id: FieldNames.existingID(of: name) ?? Self.absent, isRecordIDKey: isRecordIDKey)
        nameIDs[name] = id
        return id
    }

    /// Records what failed, for the error's expected and found types.
    func fail(_ path: [any CodingKey], expected: Any.Type, found: String) {
        failure = _DecodingFailure(path: RecordDecodingError.describe(path), expected: "\(expected)", found: found)
    }
}
