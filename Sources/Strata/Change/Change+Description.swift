extension Change: CustomStringConvertible {
    /// What the change does, with what it replaced:
    ///
    ///     insert {title: "Blue River"}
    ///     delete {title: "Blue River"}
    ///     update {plays: 1 → 2, title: absent → "Blue"}
    public var description: String {
        switch self {
        case .insert(let record): return "insert \(record)"
        case .delete(let record): return "delete \(record)"
        case .update(let fields):
            let parts = fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            return "update {" + parts.joined(separator: ", ") + "}"
        }
    }
}

extension FieldChange: CustomStringConvertible {
    /// `old → new`, `absent` for a missing side; both sides in their
    /// ``Value/exactDescription`` when their descriptions are the same
    /// (`"caf\u{E9}" → "cafe\u{301}"`, not `"café" → "café"`). A side
    /// longer than 200 characters is cut short, with its size.
    public var description: String {
        let (old, new) = Value._contrasting(old, new)
        return "\(old ?? "absent") → \(new ?? "absent")"
    }
}
