extension PersistentMap: CustomStringConvertible {
    /// The entries as a dictionary literal, `[key: value, ...]`. O(n).
    public var description: String {
        guard !isEmpty else { return "[:]" }
        var text = "["
        var first = true
        for (key, value) in self {
            if !first { text += ", " }
            first = false
            debugPrint(key, terminator: "", to: &text)
            text += ": "
            debugPrint(value, terminator: "", to: &text)
        }
        return text + "]"
    }
}

extension PersistentMap: CustomDebugStringConvertible {
    /// The type name and entries. O(n).
    public var debugDescription: String {
        "PersistentMap<\(Key.self), \(Value.self)>(\(description))"
    }
}
