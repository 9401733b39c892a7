import HappyCore

/// Every HTTP error answer: a status, a machine-readable code and a message
/// that says what is wrong, sent as `{"type":"error","code":…,"message":…}`.
struct HTTPError: Error, Equatable {
    var status: Int
    var code: ErrorCode
    var message: String
    /// The intent id the error answers, if any.
    var id: String?

    init(status: Int, _ code: ErrorCode, _ message: String, id: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.id = id
    }

    /// With the code's own status (`ErrorCode.httpStatus`).
    init(_ code: ErrorCode, _ message: String, id: String? = nil) {
        self.init(status: code.httpStatus, code, message, id: id)
    }

    /// A protocol error as `POST /api/intent` answers it (PROTOCOL.md section 6).
    init(_ error: WireError) {
        self.init(error.code, error.message, id: error.id)
    }

    /// A credential refused: 401 `unauthorized` or 403 `forbidden`.
    init(_ refusal: AccessRefusal) {
        self.init(refusal.code, refusal.message)
    }

    static func notFound(_ method: String, _ route: String) -> HTTPError {
        HTTPError(.notFound, "no route \(method) \(route)")
    }

    static func methodNotAllowed(_ method: String, _ route: String) -> HTTPError {
        HTTPError(.methodNotAllowed, "\(method) is not allowed on \(route)")
    }

    static func unavailable(_ message: String) -> HTTPError {
        HTTPError(.unavailable, message)
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
        writer.key("code"); writer.string(code.rawValue)
        writer.key("message"); writer.string(message)
        writer.endObject()
        return writer.bytes
    }
}

extension ErrorCode {
    /// The HTTP status an error with this code answers with, unless the
    /// route says otherwise (a body too large is a 413 `bad_message`).
    var httpStatus: Int {
        switch self {
        case .badJSON, .badMessage, .unknownAction, .invalidValue: return 400
        case .unauthorized: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .methodNotAllowed: return 405
        case .unsupported: return 409
        case .gone: return 410
        case .rateLimited: return 429
        case .renderFailed: return 500
        case .unavailable: return 503
        }
    }
}
