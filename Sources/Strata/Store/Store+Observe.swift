extension Store {
    /// Observes `body`'s result over the published values: yields its
    /// result on ``current``, then a new result after each commit that
    /// changed it, computed on the value that commit published. Results
    /// come in commit order; none is repeated, and each is the result on
    /// some published value. A ``truncate(after:)`` publishes an older
    /// value: a result that changed with it follows.
    ///
    ///     for try await album in await store.observe({ db in
    ///         try db.query("songs").where("album", equals: "Blue River").order(by: "track").records(Song.self)
    ///     }) {
    ///         show(album)
    ///     }
    ///
    /// **What is observed.** The closure is handed a ``Database`` that
    /// notes what it reads: records read by ID, tables read whole, index
    /// ranges read by queries (a scan reads its table), `tables` (the
    /// whole value). After a commit, the store selects the observers whose
    /// reads it touched in time proportional to its changes, not to the
    /// number of observers, and runs only those. Read only through the
    /// database handed in (not ``current`` or a captured value), and keep
    /// the closure pure: it runs on the store's actor as part of
    /// publishing a commit, so a slow closure delays commits.
    ///
    /// - Parameters:
    ///   - buffering: ``ObservationBuffering/everyChange`` (default) keeps
    ///     every result until read; ``ObservationBuffering/newest`` keeps
    ///     only the latest for a consumer that falls behind.
    ///   - body: the observed computation; if it throws, the observation
    ///     ends with its error.
    /// - Returns: the results; cancel the task iterating them (or drop the
    ///   sequence) to end the observation. It ends when the store closes.
    public func observe<Result: Equatable & Sendable>(
        buffering: ObservationBuffering = .everyChange,
        _ body: @escaping @Sendable (Database) throws -> Result
    ) -> Observation<Result> {
        let (stream, continuation) = AsyncThrowingStream<Result, any Error>.makeStream(
            bufferingPolicy: buffering == .everyChange ? .unbounded : .bufferingNewest(1)
        )
        let observer = Observer(body, continuation: continuation)
        let id = observerRegistry.add(observer)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.endObservation(id) }
        }
        run(observer: id, on: current)
        if log == nil { observerRegistry.remove(id)?.finish() }
        return Observation(stream: stream, buffering: buffering)
    }

    /// Observes the record of type `R` with `id`: nil while there is none.
    /// See ``observe(buffering:_:)``.
    public func observe<R: StoredRecord & Equatable & Sendable>(
        _ type: R.Type,
        id: R.ID,
        buffering: ObservationBuffering = .everyChange
    ) -> Observation<R?> {
        let recordID = id.recordID
        return observe(buffering: buffering) { database in
            guard let record = database.record(recordID, in: R.table) else { return nil }
            return try R.decoder.decodeStored(type, from: record, id: recordID, table: R.table)
        }
    }

    /// Observes a query's records decoded as `R`: `query` builds it on each
    /// value. See ``observe(buffering:_:)``.
    ///
    ///     let album = await store.observe(Song.self) { $0.query("songs").where("album", equals: "Blue River") }
    public func observe<R: StoredRecord & Equatable & Sendable>(
        _ type: R.Type,
        buffering: ObservationBuffering = .everyChange,
        query: @escaping @Sendable (Database) -> Query
    ) -> Observation<[R]> {
        observe(buffering: buffering) { database in try query(database).records(type) }
    }

    /// The number of observations running. O(1).
    public var observerCount: Int { observerRegistry.count }

    /// Runs the observers a published commit may affect, in registration order.
    func notifyObservers(of report: CommitReport) {
        guard !observerRegistry.isEmpty else { return }
        let ids = observerRegistry.affected(by: report.transaction, from: report.before, to: report.after)
        for id in ids { run(observer: id, on: report.after) }
    }

    /// Runs every observer on `value` (published without a commit: a truncate).
    func notifyAllObservers(on value: Database) {
        for id in observerRegistry.all { run(observer: id, on: value) }
    }

    func finishObservers() {
        for id in observerRegistry.all { observerRegistry.remove(id)?.finish() }
    }

    private func run(observer id: Int, on value: Database) {
        guard let observer = observerRegistry.observers[id] else { return }
        if let reads = observer.run(on: value) {
            observerRegistry.setReads(reads, of: id)
        } else {
            observerRegistry.remove(id)
        }
    }

    private func endObservation(_ id: Int) {
        observerRegistry.remove(id)
    }
}
