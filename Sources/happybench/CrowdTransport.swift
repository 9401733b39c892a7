import Foundation
import HappyClientKit

/// How the crowd's clients talk to the server (`--crowd-client`).
enum CrowdClientKind: String {
    /// Plain sockets on epoll (`CrowdSocketLoop`): what 10 000 clients at 20
    /// ticks a second need from one core.
    case sockets
    /// HappyClientKit's `WebSocketConnection` on `ClientLoop`s (lws).
    case kit
}

/// What a `CrowdSocketLoop` calls, on its thread, for each of its sockets.
protocol SocketClient: AnyObject {
    /// One whole message from the server.
    func receive(_ bytes: UnsafeRawBufferPointer)
    /// The connection ended: why, and the server's close code when it sent one.
    func ended(_ why: String, closeCode: Int?)
}

/// One client's connection, whichever the transport.
protocol CrowdLink: AnyObject {
    func send(text: String)
    /// Drops the connection without a close frame.
    func abort()
}

extension WebSocketConnection: CrowdLink {}

/// A thread that carries many crowd connections and calls their clients
/// (`CrowdClient.receive`, `CrowdClient.ended`) on itself.
protocol CrowdLoop: AnyObject, Sendable {
    /// Connects `client` to `path` (`/ws?room=…`) on the server.
    func open(_ client: CrowdClient, port: Int, path: String) -> CrowdLink
    /// Runs `body` on the loop's thread.
    func perform(_ body: @escaping @Sendable () -> Void)
    /// Closes every connection and stops the thread; waits for it.
    func shutdown()
}

/// `ClientLoop` as a crowd loop: each client is its connection's delegate.
final class KitCrowdLoop: CrowdLoop, @unchecked Sendable {
    private let loop: ClientLoop

    init(name: String) throws {
        loop = try ClientLoop(name: name)
    }

    func open(_ client: CrowdClient, port: Int, path: String) -> CrowdLink {
        loop.connect(WebSocketURL("ws://127.0.0.1:\(port)\(path)")!,
                     options: WebSocketOptions(keepaliveSeconds: nil), delegate: client)
    }

    func perform(_ body: @escaping @Sendable () -> Void) { loop.perform(body) }

    func shutdown() { loop.shutdown() }
}

extension CrowdClient: WebSocketDelegate {
    func webSocketDidOpen(_ connection: WebSocketConnection, subprotocol: String?) {}

    func webSocket(_ connection: WebSocketConnection, didReceive bytes: UnsafeRawBufferPointer, binary: Bool) {
        receive(bytes)
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        ended("closed \(code.map(String.init) ?? "without a close frame") \(reason)")
    }

    func webSocketDidFail(_ connection: WebSocketConnection, error: String) {
        ended("failed: \(error)")
    }
}

extension CrowdClientKind {
    /// `count` loops of this kind (none left running if one cannot start).
    func loops(_ count: Int) throws -> [CrowdLoop] {
        var loops: [CrowdLoop] = []
        do {
            for index in 0..<count {
                switch self {
                case .sockets: loops.append(try CrowdSocketLoop(name: "crowd-\(index)"))
                case .kit: loops.append(try KitCrowdLoop(name: "crowd-\(index)"))
                }
            }
        } catch {
            for loop in loops { loop.shutdown() }
            throw error
        }
        return loops
    }
}
