// The JSON value model shared by the daemon and the CLI.
//
// `JSONValue` is what `JSONParser.swift` produces and `JSONWriter.swift` consumes. The daemon's
// method handlers read request parameters out of it (through `Params`), build results with it
// (through `ModelJSON.swift`), and the CLI reads replies and pushed events out of it.

/// A JSON value (RFC 8259).
///
/// Numbers keep the distinction the text had: an integer literal that fits `Int64` is `.int`,
/// every other number is `.double`. The synthesized equality is structural, so `.int(3)` and
/// `.double(3)` are different values; use `doubleValue`/`intValue` to compare numerically.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object that keeps its keys in insertion order (the order they are written in).
///
/// Keys are unique: setting an existing key replaces its value in place (the key keeps its
/// position). Lookups are linear, which is faster than hashing for the handful of members that
/// protocol messages have. Equality ignores the order of keys, as JSON does.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// The members in insertion order; keys are unique.
    public private(set) var members: [Element]

    /// An empty object.
    public init() { members = [] }

    /// An object with `pairs`; for a repeated key the last value wins (at the first position).
    public init(_ pairs: some Sequence<(String, JSONValue)>) {
        self.init(uniquing: pairs.map { (key: $0.0, value: $0.1) })
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(uniquing: elements.map { (key: $0.0, value: $0.1) })
    }

    /// Builds from members the caller guarantees to have unique keys.
    init(uniqueMembers: [Element]) { members = uniqueMembers }

    /// Builds from members that may repeat keys: the last value wins, at the key's first
    /// position. Linear time (the parser uses it on untrusted input).
    init(uniquing members: [Element]) {
        let n = members.count
        if n < 2 {
            self.members = members
            return
        }
        if n <= 16 {
            var hasDuplicate = false
            outer: for i in 1..<n {
                for j in 0..<i where members[i].key == members[j].key {
                    hasDuplicate = true
                    break outer
                }
            }
            if !hasDuplicate {
                self.members = members
                return
            }
        }
        var positions: [String: Int] = [:]
        positions.reserveCapacity(n)
        var unique: [Element] = []
        unique.reserveCapacity(n)
        for member in members {
            if let position = positions[member.key] {
                unique[position].value = member.value
            } else {
                positions[member.key] = unique.count
                unique.append(member)
            }
        }
        self.members = unique
    }

    /// The value for `key`, or nil when the object has no such member. Setting nil removes it.
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    /// Removes the member `key`; returns its value.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let index = members.firstIndex(where: { $0.key == key }) else { return nil }
        return members.remove(at: index).value
    }

    /// Sets every member of `other` (its values win), appending new keys in `other`'s order.
    public mutating func merge(_ other: JSONObject) {
        for (key, value) in other.members { self[key] = value }
    }

    /// The keys in insertion order.
    public var keys: [String] { members.map(\.key) }
    /// The values in insertion order.
    public var values: [JSONValue] { members.map(\.value) }
    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    /// Whether the object has a member `key` (which may be `null`).
    public func contains(_ key: String) -> Bool { members.contains { $0.key == key } }

    public func makeIterator() -> IndexingIterator<[Element]> { members.makeIterator() }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (key, value) in lhs.members {
            guard let other = rhs[key], other == value else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent, to agree with ==.
        var combined = 0
        for (key, value) in members {
            var memberHasher = Hasher()
            memberHasher.combine(key)
            memberHasher.combine(value)
            combined = combined &+ memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

// MARK: - Accessors

extension JSONValue {
    public var isNull: Bool { if case .null = self { true } else { false } }

    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }

    /// The number as a Double, for `.int` and `.double`.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// The number as an integer: `.int`, or a `.double` with no fractional part that fits `Int64`
    /// (`48000.0` is accepted, `0.5` is not).
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            // Not `Int64(exactly:)`: it calls libm's trunc, and ReelProtocol links without libm.
            guard d >= -0x1p63, d < 0x1p63 else { return nil }  // also rejects NaN
            let i = Int64(d)
            return Double(i) == d ? i : nil
        default: return nil
        }
    }

    /// `int64Value` as an `Int`.
    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }

    /// The member `key` of an object; nil for a missing member or a value that is not an object.
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// `"null"`, `"a boolean"`, `"a number"`, ... for error messages.
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue {
    /// `.string`, or `.null` for nil.
    public init(_ string: String?) { self = string.map(JSONValue.string) ?? .null }
    /// `.double`, or `.null` for nil.
    public init(_ double: Double?) { self = double.map(JSONValue.double) ?? .null }
    /// `.int`, or `.null` for nil.
    public init(_ int: Int?) { self = int.map { .int(Int64($0)) } ?? .null }
}

// MARK: - Literals

extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { jsonString }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { jsonString }
}
