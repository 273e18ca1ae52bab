import Foundation

extension Peer {
    /// Transactions applied after which the cache is written again.
    static let cacheInterval: Int64 = 10_000

    /// Writes ``current`` into the local cache now (when the peer was
    /// opened with one), so that the next open reads only what comes after
    /// it. An app calls it before it quits. O(value size).
    /// - Throws: file errors; what the storage throws when the ID of the
    ///   value's basis transaction must be read from it.
    public func saveCache() async throws {
        guard let cache else { return }
        await cacheWrite?.value
        let value = head
        guard value.basis != cachedBasis, value.basis > 0 else { return }
        let id = try await basisID(of: value)
        try await Task.detached(priority: .utility) { try cache.write(value, basisID: id) }.value
        cachedBasis = max(cachedBasis, value.basis)
    }

    /// Starts a background cache write when there is no cached value yet,
    /// or it is ``cacheInterval`` transactions or more behind.
    func refreshCacheIfBehind() {
        guard let cache, cacheWrite == nil, !closed, head.basis > 0,
            cachedBasis < 0 || head.basis - cachedBasis >= Self.cacheInterval
        else { return }
        let value = head
        cacheWrite = Task { [weak self] in
            guard let id = try? await self?.basisID(of: value) else { return }
            let written = await Task.detached(priority: .background) {
                (try? cache.write(value, basisID: id)) != nil
            }.value
            await self?.cacheWritten(written ? value.basis : nil)
        }
    }

    private func cacheWritten(_ basis: Int64?) {
        cacheWrite = nil
        if let basis { cachedBasis = max(cachedBasis, basis) }
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
