// Typed access to a request's parameters, for the daemon's method handlers.
//
// Every accessor throws `RPCError.invalidParams` (-32602) with a message that names the
// parameter, so a handler can write `let position = try params.requiredDouble("position")`
// and the client learns exactly what was wrong. A `null` value counts as absent.

/// The named parameters of one request.
public struct Params: Sendable, Equatable {
    public var object: JSONObject
    /// The method, for messages (`unknown parameter "foo" for player.seek`).
    public var method: String

    public init(_ object: JSONObject, method: String) {
        self.object = object
        self.method = method
    }

    /// The parameters of `request`.
    public init(_ request: RPCRequest) {
        self.init(request.params, method: request.method)
    }

    /// The raw value; nil when absent or null.
    public subscript(name: String) -> JSONValue? {
        guard let value = object[name], !value.isNull else { return nil }
        return value
    }

    /// Whether the parameter is given (and not null).
    public func has(_ name: String) -> Bool { self[name] != nil }

    /// Throws for the first parameter (in the order given) not in `allowed`.
    public func rejectUnknown(allowed: Set<String>) throws(RPCError) {
        for key in object.keys where !allowed.contains(key) {
            throw .invalidParams("unknown parameter \"\(key)\" for \(method)")
        }
    }

    // MARK: Numbers

    /// A finite number, or nil when absent.
    public func optionalDouble(_ name: String) throws(RPCError) -> Double? {
        guard let value = self[name] else { return nil }
        guard let number = value.doubleValue else { throw .invalidParams("\(name) must be a number") }
        guard number.isFinite else { throw .invalidParams("\(name) must be a finite number") }
        return number
    }

    /// A finite number.
    public func requiredDouble(_ name: String) throws(RPCError) -> Double {
        guard let number = try optionalDouble(name) else { throw missing(name) }
        return number
    }

    /// An integer (`50` or `50.0`), or nil when absent.
    public func optionalInt(_ name: String) throws(RPCError) -> Int? {
        guard let value = self[name] else { return nil }
        guard let number = value.intValue else {
            throw .invalidParams(value.doubleValue == nil ? "\(name) must be a number" : "\(name) must be an integer")
        }
        return number
    }

    /// An integer within `range`, or nil when absent.
    public func optionalInt(_ name: String, in range: ClosedRange<Int>) throws(RPCError) -> Int? {
        guard let number = try optionalInt(name) else { return nil }
        guard range.contains(number) else {
            throw .invalidParams("\(name) must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return number
    }

    /// An integer.
    public func requiredInt(_ name: String) throws(RPCError) -> Int {
        guard let number = try optionalInt(name) else { throw missing(name) }
        return number
    }

    // MARK: Strings and booleans

    /// A string, or nil when absent.
    public func optionalString(_ name: String) throws(RPCError) -> String? {
        guard let value = self[name] else { return nil }
        guard let string = value.stringValue else { throw .invalidParams("\(name) must be a string") }
        return string
    }

    /// A string.
    public func requiredString(_ name: String) throws(RPCError) -> String {
        guard let string = try optionalString(name) else { throw missing(name) }
        return string
    }

    /// `true` or `false`, or nil when absent.
    public func optionalBool(_ name: String) throws(RPCError) -> Bool? {
        guard let value = self[name] else { return nil }
        guard let bool = value.boolValue else { throw .invalidParams("\(name) must be true or false") }
        return bool
    }

    private func missing(_ name: String) -> RPCError {
        .invalidParams("missing parameter \"\(name)\" for \(method)")
    }
}
