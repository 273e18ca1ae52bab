import PersistentCollections

/// One part of a packed value, as ``_PackedReader/walkValue(_:)`` meets it.
enum _PackedPart {
    /// A value that is not a list or map, at these bytes (its tag included).
    case scalar(Range<Int>)
    /// A list starts; its elements follow, then ``end``.
    case list(count: Int)
    /// A map starts; each entry's key, then its value, follow, then ``end``.
    case map(count: Int)
    /// The key of the map entry whose value comes next, at these bytes
    /// (its length included).
    case key(Range<Int>)
    /// The list or map last started ends.
    case end
}

// A record built in memory (a literal, `Database(_:)`, a transaction given
// to `apply`) may nest values without bound; only what a store writes is
// held to `Value.maximumNesting`. The readers recurse down to
// `Value.recursionLimit` levels and continue here, with the lists and maps
// entered kept on the heap instead of the stack.

extension _PackedReader {
    /// Moves past one value, calling `visit` with each of its parts in
    /// order. No recursion, whatever the depth. O(size).
    mutating func walkValue(_ visit: (_PackedPart) -> Void) {
        // Per list or map entered: the values it still holds, and whether it is a map.
        var open: [(left: Int, isMap: Bool)] = []
        while true {
            let start = offset
            switch valueTag() {
            case .list:
                let count = Int(varint())
                visit(.list(count: count))
                open.append((count, false))
            case .map:
                let count = Int(varint())
                visit(.map(count: count))
                open.append((count, true))
            default:
                offset = start
                skipValue()  // a scalar: no recursion
                visit(.scalar(start..<offset))
            }
            while let last = open.last, last.left == 0 {
                open.removeLast()
                visit(.end)
            }
            guard !open.isEmpty else { return }
            open[open.count - 1].left -= 1
            if open[open.count - 1].isMap {
                let keyStart = offset
                let length = Int(varint())
                offset += length
                visit(.key(keyStart..<offset))
            }
        }
    }

    /// ``value(levelsAbove:)`` without recursion. O(size).
    mutating func deepValue() -> Value {
        let source = bytes
        var assembler = _ValueAssembler()
        walkValue { part in
            switch part {
            case .scalar(let range):
                var reader = _PackedReader(source, offset: range.lowerBound)
                assembler.add(reader.value())
            case .list(let count): assembler.beginList(capacity: count)
            case .map: assembler.beginMap()
            case .key(let range):
                var reader = _PackedReader(source, offset: range.lowerBound)
                assembler.key(Key(reader.string()))
            case .end: assembler.end()
            }
        }
        return assembler.result!
    }
}
