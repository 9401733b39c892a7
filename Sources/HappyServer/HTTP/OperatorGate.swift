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
    func admits(_ exchange: HTTPExchange, room: String?) -> Bool {
        if let refusal = requestRefusal(exchange) {
            responder.respond(exchange, refusal)
            return false
        }
        let credential = AccessControl.bearer(exchange.headers["authorization"])
        if case .failure(let refusal) = access.check(credential, for: .operatorAPI(room: room)) {
            responder.respond(exchange, HTTPError(refusal))
            return false
        }
        return true
    }

    /// Why the request's `Host`, `Origin` or body rule it out, or nil.
    func requestRefusal(_ exchange: HTTPExchange) -> HTTPError? {
        check.refusal(method: exchange.method, host: exchange.headers["host"], origin: exchange.headers["origin"],
                      contentType: exchange.headers["content-type"], bodyLength: exchange.body.count)
            .map { HTTPError($0) }
    }
}
