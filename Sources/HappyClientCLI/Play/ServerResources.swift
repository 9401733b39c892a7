import HappyClientKit
import HappyCore
import HappyRender

/// What `play` reads from the server over HTTP besides the WebSocket: the
/// scene art the page and the server's renderer share, and the room's seq
/// and epoch (to replay recent events for the dragon's status label).
struct ServerResources {
    let common: CommonOptions

    /// The art from `path`, or else from `/assets/scene-art.json` on the server.
    func art(path: String?) -> Result<SceneArt, ResourceError> {
        if let path {
            do { return .success(try SceneArt.load(path: path)) } catch { return .failure(ResourceError(error.message)) }
        }
        let url = common.url.httpBase + "/assets/scene-art.json"
        switch get(url) {
        case .success(let bytes):
            do { return .success(try SceneArt.parse(bytes)) } catch { return .failure(ResourceError("\(url): \(error.message)")) }
        case .failure(let reason):
            return .failure(reason)
        }
    }

    /// The room's `(seq, epoch)` from `/api/state`, or nil.
    func roomPosition() -> (seq: UInt64, epoch: String)? {
        guard case .success(let bytes) = get(ServerHTTP(common: common).url("/api/state")),
              let json = try? JSONParser.parse(bytes, maxDepth: 64),
              let seq = json["seq"]?.doubleValue, seq >= 0, seq < 9e15, let epoch = json["epoch"]?.stringValue else {
            return nil
        }
        return (UInt64(seq), epoch)
    }

    /// GET `url` with the token, within `--timeout`.
    private func get(_ url: String) -> Result<[UInt8], ResourceError> {
        ServerHTTP(common: common).get(url).mapError { ResourceError("\($0)") }
    }
}

/// Why a resource could not be read from the server or a file.
struct ResourceError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
