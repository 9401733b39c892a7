import HappyClientKit
import SwiftUI

/// The seed's `BLDragonView` and its controller: a cyan scene with the
/// 100×100 dragon, back and forward buttons that move it by a step within
/// the scene, a hide button, and the purple status label the delegate sets.
/// The scene has the room's geometry (375×180 points by default).
struct DragonStage: View {
    let model: RoomModel

    var body: some View {
        let geometry = model.geometry
        let dragon = model.scene.dragon
        VStack(spacing: 12) {
            ZStack(alignment: .topLeading) {
                Color.cyan
                Text("🐉")
                    .font(.system(size: geometry.dragonSize * 0.8))
                    .frame(width: geometry.dragonSize, height: geometry.dragonSize)
                    .offset(x: dragon.x, y: dragon.y)
                    .opacity(dragon.hidden ? 0 : 1)
                    .animation(.easeOut(duration: 0.2), value: dragon.x)
            }
            .frame(width: geometry.width, height: geometry.height)
            .clipped()
            HStack(spacing: 24) {
                Button("Back", systemImage: "arrow.backward") { model.act { try await $0.dragon.backButtonClicked() } }
                Button("Forward", systemImage: "arrow.forward") { model.act { try await $0.dragon.forwardButtonClicked() } }
                Button(dragon.hidden ? "Show" : "Hide", systemImage: "eye") { model.act { try await $0.dragon.hideButtonClicked() } }
            }
            .buttonStyle(.bordered)
            Text(model.dragonStatus)
                .foregroundStyle(.white)
                .frame(maxWidth: .infinity, minHeight: 60)
                .background(Color.purple)
        }
    }
}
