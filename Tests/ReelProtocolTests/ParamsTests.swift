import Testing
@testable import ReelProtocol

@Suite("Params")
struct ParamsTests {
    private func params(_ object: JSONObject, method: String = "player.seek") -> Params { Params(object, method: method) }

    /// The message of the invalid-params error `body` throws, or nil when it throws nothing.
    private func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as RPCError {
            #expect(error.code == -32602)
            return error.message
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test func optionalDoubleAcceptsIntegersAndDoubles() throws {
        #expect(try params(["position": 12]).optionalDouble("position") == 12)
        #expect(try params(["position": 12.5]).optionalDouble("position") == 12.5)
        #expect(try params([:]).optionalDouble("position") == nil)
        #expect(try params(["position": .null]).optionalDouble("position") == nil)
    }

    @Test func doubleOfTheWrongTypeNamesTheParameter() {
        #expect(message { _ = try params(["position": "12"]).optionalDouble("position") } == "position must be a number")
        #expect(message { _ = try params(["position": true]).requiredDouble("position") } == "position must be a number")
    }

    @Test func nonFiniteDoubleIsRejected() {
        #expect(message { _ = try params(["position": .double(.infinity)]).optionalDouble("position") } == "position must be a finite number")
        #expect(message { _ = try params(["position": .double(.nan)]).requiredDouble("position") } == "position must be a finite number")
    }

    @Test func missingRequiredParameterNamesItAndTheMethod() {
        #expect(message { _ = try params([:]).requiredDouble("position") } == "missing parameter \"position\" for player.seek")
        #expect(message { _ = try params(["name": .null], method: "library.rename").requiredString("name") } == "missing parameter \"name\" for library.rename")
        #expect(message { _ = try params([:]).requiredInt("subscription") } != nil)
    }

    @Test func stringAccessors() throws {
        #expect(try params(["name": "x"]).requiredString("name") == "x")
        #expect(try params([:]).optionalString("name") == nil)
        #expect(message { _ = try params(["name": 3]).optionalString("name") } == "name must be a string")
    }

    @Test func intAccessorsAcceptIntegralNumbersOnly() throws {
        #expect(try params(["limit": 50]).optionalInt("limit") == 50)
        #expect(try params(["limit": 50.0]).optionalInt("limit") == 50)
        #expect(try params(["limit": 7]).requiredInt("limit") == 7)
        #expect(message { _ = try params(["limit": 0.5]).optionalInt("limit") } == "limit must be an integer")
        #expect(message { _ = try params(["limit": 1e300]).optionalInt("limit") } == "limit must be an integer")
        #expect(message { _ = try params(["limit": "5"]).optionalInt("limit") } == "limit must be a number")
    }

    @Test func intInRangeNamesTheBounds() throws {
        #expect(try params(["limit": 500]).optionalInt("limit", in: 1...500) == 500)
        #expect(message { _ = try params(["limit": 501]).optionalInt("limit", in: 1...500) } == "limit must be between 1 and 500")
    }

    @Test func boolAccessor() throws {
        #expect(try params(["flag": true]).optionalBool("flag") == true)
        #expect(try params([:]).optionalBool("flag") == nil)
        #expect(message { _ = try params(["flag": 1]).optionalBool("flag") } == "flag must be true or false")
    }

    @Test func rejectsUnknownParametersByName() throws {
        try params(["position": 1]).rejectUnknown(allowed: ["position", "offset"])
        #expect(message { try params(["position": 1, "foo": 2]).rejectUnknown(allowed: ["position", "offset"]) }
            == "unknown parameter \"foo\" for player.seek")
    }

    @Test func takesTheMethodFromTheRequest() {
        let request = RPCRequest(id: 1, method: "library.get", params: ["bogus": 1])
        #expect(message { try Params(request).rejectUnknown(allowed: ["item", "path"]) } == "unknown parameter \"bogus\" for library.get")
        #expect(Params(request).has("bogus"))
        #expect(!Params(request).has("item"))
    }
}
