import Foundation

/// What may be opened as a store: a directory holding a manifest (or, from
/// before manifests, a log directory holding a segment), or with
/// ``StoreOptions/createIfMissing`` a missing or empty directory.
package enum StoreDirectory {
    /// Entries a store's directory may hold before it has a manifest: the
    /// lock an interrupted first open took, and the manifest's temporary.
    static let ignorable: Set<String> = ["lock", StoreManifest.fileName + ".tmp"]

    /// The start of ``StoreError/notAStore(path:reason:)``'s reason for an
    /// empty directory, which a front end may replace with its own advice.
    package static let emptyReason = "the directory is empty"

    /// Checks `path` before anything is written there.
    /// - Returns: whether the store is new (the directory is created, or is empty).
    /// - Throws: ``StoreError/noStore(path:)``, ``StoreError/notAStore(path:reason:)``.
    static func check(_ path: String, fileSystem: any FileSystem, create: Bool) throws -> Bool {
        // An app that passes an unset path must hear so: the store's
        // files would otherwise go to the file system's root.
        guard !path.isEmpty else { throw StoreError.notAStore(path: path, reason: "the path is empty") }
        guard fileSystem.exists(path) else {
            if create { return true }
            throw StoreError.noStore(path: path)
        }
        let names: [String]
        do {
            names = try fileSystem.contents(ofDirectory: path)
        } catch let error as FileSystemError where error.code == ENOTDIR {
            throw StoreError.notAStore(path: path, reason: "it is a file, not a directory")
        }
        if names.contains(StoreManifest.fileName) { return false }
        // A store from before manifests: a log directory holding a segment.
        // A `log` of anything else (another program's folder or file) is
        // no store, and nothing may be written beside it.
        if names.contains("log"), let segments = try? fileSystem.contents(ofDirectory: path + "/log"),
            segments.contains(where: { LogFormat.firstSequence(ofName: $0) != nil })
        {
            return false
        }
        let others = names.filter { !ignorable.contains($0) }
        if others.isEmpty {
            if create { return true }
            throw StoreError.notAStore(
                path: path,
                reason: emptyReason + " (set createIfMissing to create a store in it)"
            )
        }
        let listed = others.prefix(3).joined(separator: ", ") + (others.count > 3 ? ", …" : "")
        throw StoreError.notAStore(path: path, reason: "it holds other files (\(listed)) and no manifest")
    }
}
