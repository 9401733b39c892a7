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

/// Reads and checks an intent's parameters against the table of section 4.
struct IntentParameters {
    let json: JSONValue
    let actionName: String

    func action() throws(WireError) -> Action {
        switch actionName {
        case "face.setHappiness":
            return .setHappiness(try integer("value", what: "happiness"))
        case "face.nudgeHappiness":
            let delta = try integer("delta", what: "delta")
            guard Double(SceneRules.nudgeRange.lowerBound)...Double(SceneRules.nudgeRange.upperBound) ~= delta else {
                throw invalid("delta must be between -100 and 100")
            }
            return .nudgeHappiness(Int(delta))
        case "face.setScale":
            return .setScale(try positive("value", what: "scale"))
        case "face.pinch":
            return .pinch(try positive("factor", what: "factor"))
        case "heart.setRate":
            return .setRate(try number("value", what: "rate"))
        case "heart.setStyle":
            return .setStyle(try style())
        case "dragon.forward": return .dragonForward
        case "dragon.back": return .dragonBack
        case "dragon.setHidden":
            guard let raw = json["value"] else { throw invalid("dragon.setHidden needs value: a boolean") }
            guard let hidden = raw.boolValue else { throw invalid("hidden must be a boolean, got \(raw.kindName)") }
            return .setHidden(hidden)
        case "dragon.toggleHidden": return .toggleHidden
        case "room.reset": return .reset
        default:
            throw WireError(.unknownAction, "unknown action \"\(actionName.prefix(64))\"")
        }
    }

    private func invalid(_ message: String) -> WireError {
        WireError(.invalidValue, message)
    }

    private func number(_ field: String, what: String) throws(WireError) -> Double {
        guard let raw = json[field] else { throw invalid("\(actionName) needs \(field): a number") }
        guard let value = raw.doubleValue else { throw invalid("\(what) must be a number, got \(raw.kindName)") }
        guard value.isFinite else { throw invalid("\(what) must be a finite number") }
        return value
    }

    private func integer(_ field: String, what: String) throws(WireError) -> Double {
        guard let raw = json[field] else { throw invalid("\(actionName) needs \(field): an integer") }
        guard let value = raw.doubleValue else { throw invalid("\(what) must be an integer, got \(raw.kindName)") }
        guard value.isFinite, value == value.rounded() else { throw invalid("\(what) must be an integer") }
        return value
    }

    private func positive(_ field: String, what: String) throws(WireError) -> Double {
        let value = try number(field, what: what)
        guard value > 0 else { throw invalid("\(what) must be greater than 0") }
        return value
    }

    private func color(_ field: String) throws(WireError) -> RGBColor? {
        guard let raw = json[field] else { return nil }
        guard let text = raw.stringValue, let color = RGBColor(hex: text) else {
            throw invalid("\(field) must be a colour like \"#f00\" or \"#ff0000\"")
        }
        return color
    }

    private func style() throws(WireError) -> HeartStyle {
        var style = HeartStyle()
        style.fillColor = try color("fillColor")
        style.strokeColor = try color("strokeColor")
        if json["lineWidth"] != nil {
            let width = try number("lineWidth", what: "lineWidth")
            guard SceneRules.lineWidthRange ~= width else { throw invalid("lineWidth must be between 0 and 20") }
            style.lineWidth = width
        }
        guard style.fillColor != nil || style.strokeColor != nil || style.lineWidth != nil else {
            throw invalid("heart.setStyle needs at least one of fillColor, strokeColor, lineWidth")
        }
        return style
    }
}
