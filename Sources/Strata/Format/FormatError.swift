/// What is wrong with the bytes of a file the engine reads: the file's
/// kind, the offset in it, and the problem. Storage throws it; the store
/// reports it as the ``StoreError`` of that kind of file, naming the file.
struct FormatError: Error, Equatable, Sendable, CustomStringConvertible {
    enum Problem: Equatable, Sendable {
        /// Fewer bytes than the header takes.
        case shortHeader(size: Int, needed: Int)
        /// The file does not start with this kind's magic.
        case badMagic
        case headerChecksumMismatch
        /// Written by a newer format than this build reads.
        case newerVersion(found: UInt32, supported: UInt32)
        /// A field holds a value no writer produces.
        case invalidField(String)
        /// A record or payload that does not check (its reason).
        case damaged(String)
    }

    let kind: FileHeader.Kind
    /// The file's name or path, when the thrower knows it ("" otherwise:
    /// a caller that does sets it with ``in(_:)``).
    private(set) var file: String
    let offset: Int
    let problem: Problem

    init(_ kind: FileHeader.Kind, file: String = "", offset: Int, _ problem: Problem) {
        self.kind = kind
        self.file = file
        self.offset = offset
        self.problem = problem
    }

    /// The same error, naming `file`.
    func `in`(_ file: String) -> FormatError {
        var named = self
        named.file = file
        return named
    }

    /// Whether the file is from a newer format (not damage).
    var isNewerVersion: Bool {
        if case .newerVersion = problem { return true }
        return false
    }

    /// The problem in words, without the file (the caller names it).
    var reason: String {
        switch problem {
        case let .shortHeader(size, needed): return "\(size) bytes, shorter than the \(needed)-byte header"
        case .badMagic: return "not a Strata \(kind.noun) (bad magic)"
        case .headerChecksumMismatch: return "header checksum mismatch"
        case let .newerVersion(found, supported): return "format version \(found); this build reads up to \(supported)"
        case .invalidField(let what): return what
        case .damaged(let what): return what
        }
    }

    var description: String { "\(kind.noun) \(file) damaged at offset \(offset): \(reason)" }
}
