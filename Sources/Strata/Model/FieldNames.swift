import Synchronization

/// The process-wide table of field names, so that a record stores a small
/// integer per field instead of the name's 16-byte `String` (and its heap
/// copy when longer than 15 bytes).
///
/// The table only grows: an ID, once given, names the same string for the
/// life of the process, so records never hold a dangling ID. Its size is
/// bounded by the distinct names the process has seen (schemas have tens);
/// a decoder interns only names it accepted from a well-formed input.
///
/// IDs are local to the process and never written to disk: encoders write
/// names, and decoders map them to this process's IDs.
enum FieldNames {
    struct State {
        var ids: [String: UInt32] = [:]
        var names: [String] = []
    }

    static let table = Mutex(State())

    /// The ID of `name`, assigning the next one when it is new. O(1).
    static func id(of name: String) -> UInt32 {
        table.withLock { state in
            if let id = state.ids[name] { return id }
            let id = UInt32(state.names.count)
            state.ids[name] = id
            state.names.append(name)
            return id
        }
    }

    /// The ID of `name` if some record may hold it, without growing the table.
    static func existingID(of name: String) -> UInt32? {
        table.withLock { $0.ids[name] }
    }

    /// Every name, indexed by ID: a consistent copy for a batch of lookups
    /// (one lock and one retain, whatever the batch size).
    static var all: [String] {
        table.withLock { $0.names }
    }

    /// The name with `id`. - Precondition: `id` was returned by `id(of:)`.
    static func name(_ id: UInt32) -> String {
        table.withLock { $0.names[Int(id)] }
    }
}
