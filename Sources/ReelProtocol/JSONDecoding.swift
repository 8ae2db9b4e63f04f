// Reading typed values out of received JSON, for the client side.
//
// The CLI turns replies and events into model values with `PlayerState(json:)`,
// `DaemonInfo(json:)`, `RPCMessage(line:)` and so on; they all report a malformed value with a
// `JSONDecodingError` that names the offending field.

/// A received value did not have the expected shape; `message` names the field.
public struct JSONDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// Reads the members of an object that is expected to be a `type`; errors say
/// `<type>.<field> must be ...`.
struct ObjectReader {
    let object: JSONObject
    let type: String

    init(_ value: JSONValue, as type: String) throws(JSONDecodingError) {
        guard let object = value.objectValue else {
            throw JSONDecodingError("\(type) must be an object, not \(value.kindDescription)")
        }
        self.object = object
        self.type = type
    }

    func wrongType(_ key: String, _ expected: String) -> JSONDecodingError {
        guard let value = object[key] else { return JSONDecodingError("\(type).\(key) is missing") }
        return JSONDecodingError("\(type).\(key) must be \(expected), not \(value.kindDescription)")
    }

    /// The member, or nil when it is missing or null.
    func optional(_ key: String) -> JSONValue? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    func string(_ key: String) throws(JSONDecodingError) -> String {
        guard let value = object[key]?.stringValue else { throw wrongType(key, "a string") }
        return value
    }

    func optionalString(_ key: String) throws(JSONDecodingError) -> String? {
        guard let value = optional(key) else { return nil }
        guard let string = value.stringValue else { throw wrongType(key, "a string or null") }
        return string
    }

    func double(_ key: String) throws(JSONDecodingError) -> Double {
        guard let value = object[key]?.doubleValue else { throw wrongType(key, "a number") }
        return value
    }

    func optionalDouble(_ key: String) throws(JSONDecodingError) -> Double? {
        guard let value = optional(key) else { return nil }
        guard let double = value.doubleValue else { throw wrongType(key, "a number or null") }
        return double
    }

    func int(_ key: String) throws(JSONDecodingError) -> Int {
        guard let value = object[key]?.intValue else { throw wrongType(key, "an integer") }
        return value
    }

    func bool(_ key: String) throws(JSONDecodingError) -> Bool {
        guard let value = object[key]?.boolValue else { throw wrongType(key, "a boolean") }
        return value
    }

    func optionalInt(_ key: String) throws(JSONDecodingError) -> Int? {
        guard let value = optional(key) else { return nil }
        guard let int = value.intValue else { throw wrongType(key, "an integer or null") }
        return int
    }

    /// An integer member that may be absent (then `defaultValue`).
    func int(_ key: String, default defaultValue: Int) throws(JSONDecodingError) -> Int {
        guard optional(key) != nil else { return defaultValue }
        return try int(key)
    }

    /// A boolean member that may be absent (then `defaultValue`).
    func bool(_ key: String, default defaultValue: Bool) throws(JSONDecodingError) -> Bool {
        guard optional(key) != nil else { return defaultValue }
        return try bool(key)
    }
}
