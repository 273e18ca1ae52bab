import Foundation
import Strata
import Testing

/// A shape stored at record level: its case is the record's one field.
private enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case square(side: Double)
}

/// What a cold hunt found: a type that lists a record's fields (a
/// dictionary, an enum, a custom `init(from:)`) saw a chain of renames
/// followed only as far as the schema's dictionary order allowed, and
/// the old names beside the new.
@Suite("Typed: a chain of renames seen by a decoder that lists the fields")
struct TypedRenameChainTests {
    @Test("a record read as a dictionary holds each field once, under the newest name of its chain")
    func dictionaryThroughChain() throws {
        let schema = RecordSchema(renamedFields: ["a": "b", "b": "c", "c": "d", "d": "e", "x": "y"])
        let decoder = RecordDecoder(schema: schema)
        let fields = try decoder.decode([String: Int].self, from: ["a": 1, "x": 2, "z": 3])
        #expect(fields == ["e": 1, "y": 2, "z": 3])
        // From the middle of the chain, and with a field already renamed beside an old one.
        #expect(try decoder.decode([String: Int].self, from: ["c": 5]) == ["e": 5])
        // A cycle ends: no name repeats.
        let cycle = RecordDecoder(schema: RecordSchema(renamedFields: ["p": "q", "q": "p"]))
        #expect(try cycle.decode([String: Int].self, from: ["p": 1]).count == 1)
    }

    @Test("an enum whose case was renamed twice decodes from a record of the oldest name")
    func enumCaseRenamed() throws {
        let stored = try RecordEncoder().encode(Shape.circle(radius: 2))
        // The record as an older version wrote it: the case under its first name.
        var old = Record()
        for field in stored { old[field.name == "circle" ? "round" : field.name] = field.value }
        let decoder = RecordDecoder(schema: RecordSchema(renamedFields: ["round": "disc", "disc": "circle"]))
        #expect(try decoder.decode(Shape.self, from: old) == .circle(radius: 2))
    }
}
