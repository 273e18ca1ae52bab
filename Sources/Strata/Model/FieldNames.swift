import PersistentCollections
import Synchronization

/// The process-wide table of field names, so that a record stores a small
/// integer per field instead of the name's 16-byte `String` (and its heap
/// copy when longer than 15 bytes).
///
/// An ID, once a record may hold it, names the same string for the life of
/// the process, so records never hold a dangling ID. A decoder *reserves*
/// the IDs of names it has not seen before, and when its input is rejected
/// *releases* them: names that only rejected input brought leave the table
/// (their slots are reused), so hostile or damaged input cannot grow the
/// process. The table holds the distinct names of accepted data and of
/// records the process built (schemas have tens).
///
/// IDs are local to the process and never written to disk: encoders write
/// names, and decoders map them to this process's IDs.
enum FieldNames {
    struct State {
        var ids: [Key: UInt32] = [:]
        /// A persistent vector, so that a copy handed out by `all` costs
        /// one retain and a name added while one is held copies the
        /// vector's right edge, not every name (an array was copied whole,
        /// a retain per name, at each new name while a snapshot was being
        /// written or a record iterated).
        var names = PersistentVector<Key>()
        /// Reserved IDs no record holds yet, with how many decodes hold each.
        var reservations: [UInt32: Int] = [:]
        /// Released slots, for reuse.
        var free: [UInt32] = []

        mutating func insert(_ name: Key) -> UInt32 {
            let id: UInt32
            if let reused = free.popLast() {
                id = reused
                names[Int(id)] = name
            } else {
                id = UInt32(names.count)
                names.append(name)
            }
            ids[name] = id
            return id
        }

        /// The ID of `name`, assigning the next one when it is new.
        mutating func id(of name: Key) -> UInt32 {
            if let id = ids[name] {
                // A record now holds it: it stays, whatever the decodes do.
                // (Nothing is reserved most of the time: no lookup then.)
                if !reservations.isEmpty { reservations[id] = nil }
                return id
            }
            return insert(name)
        }
    }

    static let table = Mutex(State())

    /// The ID of `name`, assigning the next one when it is new. O(1).
    static func id(of name: Key) -> UInt32 {
        table.withLock { $0.id(of: name) }
    }

    /// The IDs of `names`, in order, into `ids` (room for them all): one
    /// lock for a record's fields, not one per field. O(k).
    static func ids(of names: some Sequence<Key>, into ids: UnsafeMutableBufferPointer<UInt32>) {
        table.withLock { state in
            for (i, name) in names.enumerated() { ids[i] = state.id(of: name) }
        }
    }

    /// For a decoder: the ID of `name`; `held` when the decoder must
    /// ``commit(_:)`` it (input accepted) or ``release(_:)`` it (rejected).
    static func reserve(_ name: Key) -> (id: UInt32, held: Bool) {
        table.withLock { state in
            if let id = state.ids[name] {
                guard let holders = state.reservations[id] else { return (id, false) }
                state.reservations[id] = holders + 1
                return (id, true)
            }
            let id = state.insert(name)
            state.reservations[id] = 1
            return (id, true)
        }
    }

    /// Makes reserved IDs permanent: the records of an accepted input hold them.
    static func commit(_ held: [UInt32]) {
        guard !held.isEmpty else { return }
        table.withLock { state in
            for id in held { state.reservations[id] = nil }
        }
    }

    /// Gives reserved IDs back: their input was rejected. A name no other
    /// decode holds and no record uses leaves the table.
    static func release(_ held: [UInt32]) {
        guard !held.isEmpty else { return }
        table.withLock { state in
            for id in held {
                guard let holders = state.reservations[id] else { continue }
                if holders > 1 {
                    state.reservations[id] = holders - 1
                    continue
                }
                state.reservations[id] = nil
                state.ids[state.names[Int(id)]] = nil
                state.names[Int(id)] = ""
                state.free.append(id)
            }
        }
    }

    /// The number of names in the table (reserved ones included).
    static var count: Int {
        table.withLock { $0.ids.count }
    }

    /// The ID of `name` when it is the name's for the life of the process
    /// (some record took it, not only a decode that may yet release it),
    /// without growing the table. O(1).
    static func permanentID(of name: Key) -> UInt32? {
        table.withLock { state in
            guard let id = state.ids[name], state.reservations[id] == nil else { return nil }
            return id
        }
    }

    /// The ID of `name` if some record may hold it, without growing the table.
    static func existingID(of name: Key) -> UInt32? {
        table.withLock { $0.ids[name] }
    }

    /// Every name, indexed by ID: a consistent copy for a batch of lookups
    /// (one lock and one retain, whatever the batch size). O(1).
    static var all: PersistentVector<Key> {
        table.withLock { $0.names }
    }

    /// The name with `id`. - Precondition: `id` was returned by `id(of:)`.
    static func name(_ id: UInt32) -> Key {
        table.withLock { $0.names[Int(id)] }
    }
}
