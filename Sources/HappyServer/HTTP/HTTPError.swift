import HappyCore

/// Every HTTP error answer: a status, a machine-readable code and a message
/// that says what is wrong, sent as `{"type":"error","code":…,"message":…}`.
struct HTTPError: Error, Equatable {
    var status: Int
    var code: String
    var message: String
    /// The intent id the error answers, if any.
    var id: String?

    init(status: Int, code: String, _ message: String, id: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.id = id
    }

    /// A protocol error as `POST /api/intent` answers it (PROTOCOL.md section 6).
    init(_ error: WireError) {
        self.init(status: error.code.httpStatus, code: error.code.rawValue, error.message, id: error.id)
    }

    init(status: Int, _ error: WireError) {
        self.init(status: status, code: error.code.rawValue, error.message, id: error.id)
    }

    static func notFound(_ method: String, _ route: String) -> HTTPError {
        HTTPError(status: 404, code: "not_found", "no route \(method) \(route)")
    }

    static func methodNotAllowed(_ method: String, _ route: String) -> HTTPError {
        HTTPError(status: 405, code: "method_not_allowed", "\(method) is not allowed on \(route)")
    }

    static func unavailable(_ message: String) -> HTTPError {
        HTTPError(status: 503, code: ErrorCode.unavailable.rawValue, message)
    }

    /// The 503 for a room the store could not load.
    static func unloaded(_ runtime: RoomRuntime) -> HTTPError {
        .unavailable("room \(runtime.name) could not be loaded: \(runtime.loadError?.message ?? "")")
    }

    /// The JSON body.
    var body: [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.key("type"); writer.string("error")
        if let id { writer.key("id"); writer.string(id) }
        writer.key("code"); writer.string(code)
        writer.key("message"); writer.string(message)
        writer.endObject()
        return writer.bytes
    }
}

extension ErrorCode {
    /// The HTTP status `POST /api/intent` answers with for this error.
    var httpStatus: Int {
        switch self {
        case .badJSON, .badMessage, .unknownAction, .invalidValue: return 400
        case .rateLimited: return 429
        case .forbidden: return 403
        case .unavailable: return 503
        }
    }
}
