import HappyClientKit
import HappyCore

/// What every command runs with: the options, the client loop, the output.
struct CommandContext: Sendable {
    let common: CommonOptions
    let loop: ClientLoop
    let console: Console
    let environment: [String: String]

    /// Joins the room (on this command's client loop) within `--timeout`.
    func joinRoom(reconnects: Bool = false) async throws(SessionError) -> HappyRoom {
        let room = HappyRoom(configuration: common.sessionConfiguration(reconnects: reconnects), loop: loop)
        try await room.join(timeout: common.timeout)
        return room
    }

    /// Prints why the session failed; returns the exit code for it.
    func fail(_ error: SessionError) -> Int32 {
        console.err("happyclient: \(explained(error))")
        return ExitStatus(error).rawValue
    }

    /// The error with libwebsockets' vague reasons ("Unable to connect")
    /// replaced by what a plain TCP connection to the server runs into.
    func explained(_ error: SessionError) -> SessionError {
        guard case .cannotConnect(let url, _) = error,
              let probed = TCPProbe.failure(host: common.url.host, port: common.url.port,
                                            timeout: min(1, common.timeout)) else { return error }
        return .cannotConnect(url: url, reason: probed)
    }
}
