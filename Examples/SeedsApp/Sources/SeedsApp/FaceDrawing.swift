import HappyClientKit
import SwiftUI

/// The seed's `FaceView`: a blue circle, two eyes and a Bézier mouth whose
/// smile comes from the room's happiness. Pinch scales the face and a
/// vertical pan changes happiness, for everyone (`scale *= gesture.scale`,
/// `happiness -= translation.y / 2`); during a gesture the face shows it
/// locally, and the intent goes out when the gesture ends.
struct FaceDrawing: View {
    let model: RoomModel
    @State private var pinching = 1.0
    @State private var panning = 0.0

    var body: some View {
        Canvas { context, size in
            let middle = CGPoint(x: size.width / 2, y: size.height / 2)
            let radius = min(size.width, size.height) / 2 * model.scene.face.scale * pinching
            let happiness = min(100, max(0, Double(model.scene.face.happiness) - panning / 2))
            let smile = (happiness - 50) / 50
            var face = Path()
            face.addEllipse(in: CGRect(x: middle.x - radius, y: middle.y - radius, width: radius * 2, height: radius * 2))
            for side in [-1.0, 1.0] {
                let eye = CGPoint(x: middle.x + side * radius * 0.30, y: middle.y - radius * 0.30)
                let eyeRadius = radius * 0.10
                face.addEllipse(in: CGRect(x: eye.x - eyeRadius, y: eye.y - eyeRadius,
                                           width: eyeRadius * 2, height: eyeRadius * 2))
            }
            let start = CGPoint(x: middle.x - radius * 0.45, y: middle.y + radius * 0.40)
            let end = CGPoint(x: start.x + radius * 0.90, y: start.y)
            let lift = 0.25 * radius * smile
            face.move(to: start)
            face.addCurve(to: end, control1: CGPoint(x: start.x + radius * 0.30, y: start.y + lift),
                          control2: CGPoint(x: end.x - radius * 0.30, y: end.y + lift))
            context.stroke(face, with: .color(.blue), lineWidth: 5)
        }
        .contentShape(Rectangle())
        .gesture(MagnifyGesture()
            .onChanged { pinching = $0.magnification }
            .onEnded { value in
                let factor = value.magnification
                model.act { try await $0.face.pinch(factor) }
                pinching = 1
            })
        .simultaneousGesture(DragGesture()
            .onChanged { panning = $0.translation.height }
            .onEnded { value in
                let translation = value.translation.height
                model.act { try await $0.face.pan(translationY: translation) }
                panning = 0
            })
        .accessibilityLabel("face, happiness \(model.scene.face.happiness)")
    }
}
