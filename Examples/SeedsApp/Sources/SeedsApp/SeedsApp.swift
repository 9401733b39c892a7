import HappyClientKit
import SwiftUI

/// The three seed views in one window, steered by everyone in the room.
/// `HAPPY_URL` and `HAPPY_ROOM` in the environment pick the server and room.
@main
struct SeedsApp: App {
    @State private var model = RoomModel(
        url: ProcessInfo.processInfo.environment["HAPPY_URL"] ?? "ws://127.0.0.1:8080",
        room: ProcessInfo.processInfo.environment["HAPPY_ROOM"] ?? "lobby")
    @Environment(\.scenePhase) private var scenePhase

    var body: some SwiftUI.Scene {
        WindowGroup {
            SeedsScreen(model: model)
                .task { await model.join() }
        }
        // The documented way to leave in the background and come back with
        // every event of the pause (UIKit apps: room.followAppLifecycle()).
        .onChange(of: scenePhase) { _, phase in
            switch phase {
            case .background: model.room?.suspend()
            case .active: model.room?.resume()
            default: break
            }
        }
    }
}

/// The face, the heart and the dragon, one under the other, and the connection.
struct SeedsScreen: View {
    let model: RoomModel

    var body: some View {
        ScrollView {
            VStack(spacing: 16) {
                Text(model.status).font(.footnote).foregroundStyle(.secondary)
                FaceDrawing(model: model).frame(height: 240)
                HeartDrawing(model: model).frame(width: 200, height: 200)
                DragonStage(model: model)
                if let problem = model.problem { Text(problem).foregroundStyle(.red).font(.footnote) }
            }
            .padding()
        }
    }
}
