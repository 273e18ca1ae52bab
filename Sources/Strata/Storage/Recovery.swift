/// How open treats damage in the files it reads (``StoreOptions/recovery``).
public enum Recovery: Sendable, Hashable {
    /// Refuse to open when a record before the last is damaged or
    /// acknowledged history is missing.
    case strict
    /// Open with every record before the first damage; drop the rest
    /// (reported in ``Store/warnings``, with how many transactions were lost).
    case truncateAtDamage
}
