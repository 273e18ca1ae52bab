import Foundation

extension Peer {
    /// Transactions applied after which the cache is written again (and
    /// after which a failed write is tried again).
    static let cacheInterval: Int64 = 10_000

    /// Writes ``current`` into the local cache now (when the peer was
    /// opened with one), so that the next open reads only what comes after
    /// it. An app calls it before it quits. O(value size).
    /// - Throws: file errors; what the storage throws when the ID of the
    ///   value's basis transaction must be read from it.
    public func saveCache() async throws {
        guard let cache else { return }
        var value: Database
        var id: UUID
        repeat {
            // One write at a time: a background one under way finishes
            // first, also one that started while the basis ID was read (it
            // may hold a newer value, which this one must not replace).
            while let running = cacheWrite { await running.value }
            value = head
            guard value.basis != cachedBasis, value.basis > 0 else { return }
            id = try await basisID(of: value)
        } while cacheWrite != nil
        let queue = cacheQueue
        let (written, writtenID) = (value, id)
        let write = Task { await queue.run { try cache.write(written, basisID: writtenID) } }
        cacheWrite = Task { _ = await write.value }
        defer { cacheWrite = nil }
        try await write.value.get()
        cachedBasis = max(cachedBasis, value.basis)
    }

    /// Starts a background cache write when there is no cached value yet,
    /// or it is ``cacheInterval`` transactions or more behind; after a
    /// failed one, not before ``cacheInterval`` more transactions.
    func refreshCacheIfBehind() {
        guard let cache, cacheWrite == nil, !closed, head.basis > 0, head.basis >= cacheRetry,
            cachedBasis < 0 || head.basis - cachedBasis >= Self.cacheInterval
        else { return }
        let value = head
        let queue = cacheQueue
        cacheWrite = Task { [weak self] in
            var written = false
            if let id = try? await self?.basisID(of: value) {
                written = (try? await queue.run { try cache.write(value, basisID: id) }.get()) != nil
            }
            await self?.cacheWritten(value.basis, written: written)
        }
    }

    private func cacheWritten(_ basis: Int64, written: Bool) {
        cacheWrite = nil
        if written {
            cachedBasis = max(cachedBasis, basis)
        } else {
            cacheRetry = basis + Self.cacheInterval
        }
    }

    /// The ID of `value`'s basis transaction: known when the peer applied
    /// it or opened on it, else read from the storage.
    func basisID(of value: Database) async throws -> UUID {
        if value.basis == 0 { return UUID(uuid: UUID.zero) }
        if let summary = summary(at: value.basis) { return summary.id }
        if value.basis == start.basis, let id = start.id { return id }
        guard let id = try await storage.transactionID(at: value.basis) else {
            throw PeerError.divergentHistory(t: value.basis, reason: "the storage no longer holds it")
        }
        return id
    }
}
