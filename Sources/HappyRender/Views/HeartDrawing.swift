import Foundation
import HappyCore

/// The heart of the DrawHeart lesson (`HeartView drawRect:`), ported line by
/// line: two arcs and two quadratic curves stroked, then used as a clip for
/// a cosine wave filled from the bottom up to the level `rate` gives.
enum HeartDrawing {
    /// `spaceWidth`: the margin around the heart.
    static let margin = 5.0
    /// `waveAmplitude`.
    static let amplitude = 5.0

    /// The two lobes' radius: a quarter of the view's short side, less margins.
    static func radius(width: Double, height: Double) -> Double {
        min((width - margin * 2) / 4, (height - margin * 2) / 4)
    }

    /// The y of the wave's centre line for `rate` (the seed's formula): at 0
    /// just below the bottom tip, at 1 just above the lobes.
    static func waveLevel(height: Double, rate: Double) -> Double {
        (height - 3 * margin + amplitude * 2) * (1 - rate) + margin - amplitude
    }

    /// Draws in the box (0, 0, width, height) and never outside it (an
    /// outline wider than twice the margin would reach beyond it).
    static func draw(_ heart: Scene.Heart, step: Int, in context: DrawingContext, width: Double, height: Double) {
        let lineWidth = heart.lineWidth == 0 ? 1 : heart.lineWidth
        context.isolated {
            context.clip(toX: 0, y: 0, width: width, height: height)
            outline(context, width: width, height: height)
            context.setRoundCaps()
            context.setLineWidth(lineWidth)
            context.setColor(heart.strokeColor)
            context.strokePreservingPath()
            context.clip()

            let t = WaveClock.phase(step: step)
            let startY = waveLevel(height: height, rate: heart.rate)
            context.move(to: margin, startY)
            var i = 0.0
            while i < width - margin * 2 + lineWidth * 2 {
                context.line(to: margin + i - lineWidth, startY + amplitude * cos(Double.pi / 50 * i + t))
                i += 1
            }
            context.line(to: width - margin * 2, height - margin * 2)
            context.line(to: margin, height - margin * 2)
            context.setColor(heart.fillColor)
            context.fill()
        }
    }

    /// The heart's path: left and right upper half circles, then quadratic
    /// curves to the bottom tip and back to the start.
    static func outline(_ context: DrawingContext, width: Double, height: Double) {
        let r = radius(width: width, height: height)
        context.newPath()
        context.arc(centerX: margin + r, centerY: margin + r, radius: r, from: Double.pi, to: 2 * Double.pi)
        context.arc(centerX: margin + r * 3, centerY: margin + r, radius: r, from: Double.pi, to: 2 * Double.pi)
        context.quadCurve(to: width / 2, height - margin * 2, control: width - margin, height * 0.6)
        context.quadCurve(to: margin, margin + r, control: margin, height * 0.6)
    }
}
