import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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
        let room = common.room.map { "?room=" + QueryEncoding.encode($0) } ?? ""
        guard case .success(let bytes) = get(common.url.httpBase + "/api/state" + room),
              let json = try? JSONParser.parse(bytes, maxDepth: 64),
              let seq = json["seq"]?.doubleValue, seq >= 0, seq < 9e15, let epoch = json["epoch"]?.stringValue else {
            return nil
        }
        return (UInt64(seq), epoch)
    }

    /// GET `url` with the token, within `--timeout`.
    private func get(_ url: String) -> Result<[UInt8], ResourceError> {
        guard let address = URL(string: url) else { return .failure(ResourceError("bad URL \(url)")) }
        var request = URLRequest(url: address)
        request.timeoutInterval = common.timeout
        if let token = common.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let outcome = Latch<Result<[UInt8], ResourceError>>()
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                outcome.set(.failure(ResourceError("\(url): \(error.localizedDescription)")))
            } else if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
                outcome.set(.failure(ResourceError("\(url): HTTP \(status)")))
            } else {
                outcome.set(.success(Array(data ?? Data())))
            }
        }
        task.resume()
        return outcome.wait(timeout: common.timeout + 1) ?? .failure(ResourceError("\(url): no answer within \(Describe.number(common.timeout)) s"))
    }
}

/// Why a resource could not be read from the server or a file.
struct ResourceError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
