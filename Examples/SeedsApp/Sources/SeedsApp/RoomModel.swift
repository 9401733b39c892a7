import HappyClientKit
import Observation

/// The room for the views: its scene, its status and the dragon's label,
/// on the main actor. Like the seeds' controllers it interprets the model
/// for the views (happiness 0...100 as a smile -1...1) and hears the
/// dragon's delegate calls, which the session makes on the main actor.
@MainActor
@Observable
final class RoomModel {
    let url: String
    let roomName: String
    private(set) var room: HappyRoom?
    private(set) var views: SeedViews?
    private(set) var scene = Scene.standard
    private(set) var geometry = SceneGeometry()
    private(set) var status = "connecting"
    private(set) var dragonStatus = "dragon's status"
    private(set) var problem: String?

    init(url: String, room: String) {
        self.url = url
        roomName = room
    }

    /// The seed's `smileForFaceView:`.
    var smile: Double { Double(scene.face.happiness - 50) / 50 }

    /// The server's clock now, for the heart's shared wave.
    var serverTime: Int64 { room?.snapshot.estimatedServerTime ?? 0 }

    func join() async {
        guard room == nil else { return }
        do {
            let configuration = SessionConfiguration(server: try WebSocketURL(validating: url), room: roomName,
                                                     reconnects: true, deliversOnMainActor: true)
            let room = try HappyRoom(configuration: configuration)
            try await room.join()
            self.room = room
            geometry = room.snapshot.geometry
            let views = SeedViews(room: room)
            views.dragon.delegate = self
            self.views = views
            follow(room)
        } catch {
            problem = "\(error)"
        }
    }

    private func follow(_ room: HappyRoom) {
        Task { [weak self] in
            for await scene in room.state { self?.scene = scene }
        }
        Task { [weak self] in
            for await status in room.status { self?.status = status.description }
        }
    }

    /// Runs a gesture's intent; a refusal (rate limit, viewer) is shown, not thrown.
    func act(_ gesture: @escaping @Sendable (SeedViews) async throws -> IntentOutcome) {
        guard let views else { return }
        Task {
            do {
                _ = try await gesture(views)
                problem = nil
            } catch {
                problem = "\(error)"
            }
        }
    }
}

/// The seed's `BLDragonViewDelegate`, adopted by the controller: the label
/// says who pressed and where the dragon is now.
extension RoomModel: @preconcurrency DragonViewDelegate {
    func forwardButtonClicked(_ dragonView: DragonView) { label("forward", dragonView) }

    func backButtonClicked(_ dragonView: DragonView) { label("back", dragonView) }

    private func label(_ button: String, _ dragonView: DragonView) {
        let (x, y) = dragonView.origin
        dragonStatus = "\(dragonView.sender?.name ?? "the crowd"): \(button), (x,y) = (\(Int(x)), \(Int(y)))"
    }
}
