/// A message from a client (PROTOCOL.md section 4).
public enum ClientMessage: Equatable, Sendable {
    /// An `intent`: an action for the room, with the client's optional `id`.
    case intent(Intent)
    /// An application-level `ping`; the server answers a `pong` echoing `id`.
    case ping(id: String?)
    /// A live pointer (section 10); nil hides it.
    case pointer(PointerPosition?)
}

/// Turns the text of one client message into a `ClientMessage`, or into the
/// exact error the protocol prescribes.
public enum ClientMessageDecoder {
    /// The longest `id` a client may send, in characters; a longer one is `bad_message`.
    public static let maxIDLength = 64

    /// Decodes one client message from its UTF-8 bytes.
    ///
    /// - Returns: the message, or the error to answer with: `bad_json` when the bytes
    ///   are not JSON (or nest deeper than `JSONParser.defaultMaxDepth`), `bad_message`
    ///   when they are not an object with a known `type` or the `id` is not a string of
    ///   at most `maxIDLength` characters, and `unknown_action` or `invalid_value` for an
    ///   intent or pointer that breaks the rules of section 4 or 10.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<ClientMessage, WireError> {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            return .failure(WireError(.badJSON, "message is not valid JSON: \(error)"))
        }
        return decode(json)
    }

    /// Decodes one client message from its UTF-8 bytes, with the results of the buffer overload.
    public static func decode(_ bytes: [UInt8]) -> Result<ClientMessage, WireError> {
        bytes.withUnsafeBufferPointer { decode($0) }
    }

    /// Decodes one client message from its text, with the results of the byte overloads.
    public static func decode(_ text: String) -> Result<ClientMessage, WireError> {
        decode(Array(text.utf8))
    }

    /// Decodes a message already parsed as JSON: reads `id`, then dispatches on `type`
    /// (`intent`, `ping` or `pointer`). An error carries the `id` once it could be read.
    public static func decode(_ json: JSONValue) -> Result<ClientMessage, WireError> {
        guard json.isObject else {
            return .failure(WireError(.badMessage, "a message must be a JSON object, got \(json.kindName)"))
        }
        var id: String?
        if let rawID = json["id"], rawID != .null {
            guard let text = rawID.stringValue else {
                return .failure(WireError(.badMessage, "id must be a string"))
            }
            guard text.count <= maxIDLength else {
                return .failure(WireError(.badMessage, "id must be at most \(maxIDLength) characters"))
            }
            id = text
        }
        guard let type = json["type"] else {
            return .failure(WireError(.badMessage, "message has no \"type\"", id: id))
        }
        switch type.stringValue {
        case "intent":
            return decodeIntent(json, id: id).map { .intent($0) }
        case "ping":
            return .success(.ping(id: id))
        case "pointer":
            return decodePointer(json, id: id).map { .pointer($0) }
        default:
            return .failure(WireError(.badMessage, "unknown message type (expected \"intent\", \"ping\" or \"pointer\")",
                                      id: id))
        }
    }

    /// Decodes the intent in an object already known to have `type: intent`
    /// (also the body of `POST /api/intent`, where `type` may be omitted).
    public static func decodeIntent(_ json: JSONValue, id: String?) -> Result<Intent, WireError> {
        guard let actionValue = json["action"] else {
            return .failure(WireError(.badMessage, "intent has no \"action\"", id: id))
        }
        guard let actionName = actionValue.stringValue else {
            return .failure(WireError(.badMessage, "action must be a string", id: id))
        }
        do {
            let action = try IntentParameters(json: json, actionName: actionName).action()
            return .success(Intent(id: id, action: action))
        } catch var error {
            error.id = id
            return .failure(error)
        }
    }
}

/// Reads and checks an intent's parameters against the action's entry in the table
/// (`ActionTable.swift`, section 4 of the protocol).
struct IntentParameters {
    let json: JSONValue
    let actionName: String

    func action() throws(WireError) -> Action {
        guard let kind = Action.Kind(wireName: actionName) else {
            throw WireError(.unknownAction, "unknown action \"\(actionName.prefix(64))\"")
        }
        let spec = kind.spec
        var values: [ParameterValue?] = []
        values.reserveCapacity(spec.parameters.count)
        for parameter in spec.parameters {
            values.append(try value(of: parameter))
        }
        if spec.needsOneParameter && !values.contains(where: { $0 != nil }) {
            throw invalid("\(actionName) needs at least one of \(spec.parameters.map(\.name).joined(separator: ", "))")
        }
        return Action(kind: kind, checked: values)
    }

    /// The parameter's value, nil when an optional one is absent.
    private func value(of parameter: ParameterSpec) throws(WireError) -> ParameterValue? {
        guard let raw = json[parameter.name] else {
            guard !parameter.isRequired else {
                throw invalid("\(actionName) needs \(parameter.name): \(parameter.type.article)")
            }
            return nil
        }
        let noun = parameter.noun
        switch parameter.type {
        case .integer:
            guard let value = raw.doubleValue else { throw invalid("\(noun) must be an integer, got \(raw.kindName)") }
            guard value.isFinite, value == value.rounded() else { throw invalid("\(noun) must be an integer") }
            return .number(try inRange(value, parameter))
        case .number, .positiveNumber:
            guard let value = raw.doubleValue else { throw invalid("\(noun) must be a number, got \(raw.kindName)") }
            guard value.isFinite else { throw invalid("\(noun) must be a finite number") }
            if parameter.type == .positiveNumber, !(value > 0) { throw invalid("\(noun) must be greater than 0") }
            return .number(try inRange(value, parameter))
        case .boolean:
            guard let value = raw.boolValue else { throw invalid("\(noun) must be a boolean, got \(raw.kindName)") }
            return .boolean(value)
        case .color:
            guard let text = raw.stringValue, let color = RGBColor(hex: text) else {
                throw invalid("\(noun) must be a colour like \"#f00\" or \"#ff0000\"")
            }
            return .color(color)
        }
    }

    private func inRange(_ value: Double, _ parameter: ParameterSpec) throws(WireError) -> Double {
        guard let range = parameter.range, !(range ~= value) else { return value }
        throw invalid("\(parameter.noun) must be between \(Self.text(range.lowerBound)) and \(Self.text(range.upperBound))")
    }

    private func invalid(_ message: String) -> WireError {
        WireError(.invalidValue, message)
    }

    /// `-100` for -100.0, `0.5` for 0.5.
    static func text(_ bound: Double) -> String {
        bound == bound.rounded() && abs(bound) < 1e15 ? String(Int(bound)) : String(bound)
    }
}
