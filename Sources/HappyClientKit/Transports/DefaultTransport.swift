import Synchronization

extension HappyRoom {
    /// The transport a room uses unless given one: on Linux libwebsockets, on
    /// one `ClientLoop` (one lws thread) shared by every room of the process;
    /// elsewhere `URLSessionWebSocketTask`.
    ///
    /// - Throws: `.cannotConnect` when the shared client loop cannot start (Linux).
    public static func defaultTransport() throws(SessionError) -> any HappyTransport {
        #if os(Linux)
        return LWSTransport(loop: try SharedClientLoop.loop())
        #else
        return URLSessionTransport.shared
        #endif
    }
}

#if os(Linux)
extension HappyRoom {
    /// A room not joined yet, on a client loop of the caller's (one loop
    /// serves any number of rooms and sessions). Linux only.
    public convenience init(configuration: SessionConfiguration, loop: ClientLoop) {
        self.init(configuration: configuration, transport: LWSTransport(loop: loop))
    }
}

extension HappySession {
    /// A session not started yet whose connections run on `loop` (one loop
    /// serves any number of sessions). Linux only.
    public convenience init(configuration: SessionConfiguration, loop: ClientLoop) {
        self.init(configuration: configuration, transport: LWSTransport(loop: loop))
    }
}

/// One client loop (one lws thread) serves every room of the process that
/// was given no transport.
private enum SharedClientLoop {
    private static let shared = Mutex<ClientLoop?>(nil)

    static func loop() throws(SessionError) -> ClientLoop {
        try shared.withLock { loop throws(SessionError) -> ClientLoop in
            if let loop { return loop }
            do throws(ClientError) {
                let made = try ClientLoop(name: "happy-rooms")
                loop = made
                return made
            } catch {
                throw .cannotConnect(url: "", reason: "the client loop could not start: \(error.message)")
            }
        }
    }
}
#endif
