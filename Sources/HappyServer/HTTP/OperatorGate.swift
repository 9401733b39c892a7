import HappyCore

/// Who may operate (PROTOCOL.md section 13), checked the same way on every
/// operator route: the request's `Host`, `Origin` and body
/// (`OperatorRequestCheck`), then its credential (`AccessControl.check`).
final class OperatorGate {
    private let access: AccessControl
    private var check: OperatorRequestCheck
    private let responder: HTTPResponder

    init(access: AccessControl, check: OperatorRequestCheck, responder: HTTPResponder) {
        self.access = access
        self.check = check
        self.responder = responder
    }

    /// Applies a configuration read again (SIGHUP): host names and origins.
    func reconfigure(_ check: OperatorRequestCheck) {
        self.check = check
    }

    /// Whether the request may go on; false once refused (401 or 403 with the reason).
    func admits(_ request: HTTPRequest, room: String?) -> Bool {
        if let refusal = requestRefusal(request) {
            responder.respond(request.exchange, refusal)
            return false
        }
        let credential = AccessControl.bearer(request.headers["authorization"])
        if case .failure(let refusal) = access.check(credential, for: .operatorAPI(room: room)) {
            responder.respond(request.exchange, HTTPError(refusal))
            return false
        }
        return true
    }

    /// Why the request's `Host`, `Origin` or body rule it out, or nil.
    func requestRefusal(_ request: HTTPRequest) -> HTTPError? {
        check.refusal(method: request.method, host: request.headers["host"], origin: request.headers["origin"],
                      contentType: request.headers["content-type"], bodyLength: request.body.count)
            .map { HTTPError($0) }
    }
}
