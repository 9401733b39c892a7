import HappyClientKit
import SwiftUI

/// The seed's `HeartView`: two arcs and two quadratic curves, filled with a
/// wave up to the room's `rate`. The wave moves on the server's clock
/// (PROTOCOL.md section 8), so every screen shows the same wave at once.
/// The slider sets the rate for everyone when it is let go.
struct HeartDrawing: View {
    let model: RoomModel
    @State private var rate: Double?

    var body: some View {
        VStack {
            TimelineView(.animation) { _ in
                Canvas { context, size in draw(in: &context, size: size) }
            }
            Slider(value: Binding(get: { rate ?? model.scene.heart.rate }, set: { rate = $0 }), in: 0...1,
                   onEditingChanged: { editing in
                       guard !editing, let chosen = rate else { return }
                       model.act { try await $0.heart.setRate(chosen) }
                       rate = nil
                   })
        }
    }

    private func draw(in context: inout GraphicsContext, size: CGSize) {
        let heart = model.scene.heart
        let space = 5.0, amplitude = 5.0
        let (width, height) = (size.width, size.height)
        let radius = min((width - space * 2) / 4, (height - space * 2) / 4)
        var outline = Path()
        // SwiftUI's `clockwise` reads the other way round from UIKit's: these go over the top.
        outline.addArc(center: CGPoint(x: space + radius, y: space + radius), radius: radius,
                       startAngle: .radians(.pi), endAngle: .radians(0), clockwise: false)
        outline.addArc(center: CGPoint(x: space + radius * 3, y: space + radius), radius: radius,
                       startAngle: .radians(.pi), endAngle: .radians(0), clockwise: false)
        outline.addQuadCurve(to: CGPoint(x: width / 2, y: height - space * 2),
                             control: CGPoint(x: width - space, y: height * 0.6))
        outline.addQuadCurve(to: CGPoint(x: space, y: space + radius), control: CGPoint(x: space, y: height * 0.6))
        let lineWidth = heart.lineWidth == 0 ? 1 : heart.lineWidth
        context.stroke(outline, with: .color(Color(heart.strokeColor)),
                       style: StrokeStyle(lineWidth: lineWidth, lineCap: .round))

        let t = WaveClock.phase(step: WaveClock.step(atMilliseconds: model.serverTime))
        let top = (height - 3 * space + amplitude * 2) * (1 - (rate ?? heart.rate)) + space - amplitude
        var wave = Path()
        wave.move(to: CGPoint(x: space, y: top))
        for i in 0..<max(0, Int(width - space * 2 + lineWidth * 2)) {
            wave.addLine(to: CGPoint(x: space + Double(i) - lineWidth, y: top + amplitude * cos(.pi / 50 * Double(i) + t)))
        }
        wave.addLine(to: CGPoint(x: width - space * 2, y: height - space * 2))
        wave.addLine(to: CGPoint(x: space, y: height - space * 2))
        wave.closeSubpath()
        var clipped = context
        clipped.clip(to: outline)
        clipped.fill(wave, with: .color(Color(heart.fillColor)))
    }
}

extension Color {
    /// A scene colour as SwiftUI draws it.
    init(_ color: RGBColor) {
        self.init(red: Double(color.red) / 255, green: Double(color.green) / 255, blue: Double(color.blue) / 255)
    }
}
