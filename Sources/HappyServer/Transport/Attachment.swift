/// What the server attaches to an lws connection: a WebSocket `Connection`
/// or an `HTTPExchange`. The kind is a stored flag, so the per-message
/// callbacks find their object without a dynamic cast.
class Attachment {
    let isConnection: Bool

    init(isConnection: Bool) {
        self.isConnection = isConnection
    }
}
