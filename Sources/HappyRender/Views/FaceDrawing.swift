import HappyCore

/// The face of the Happiness lesson (`faceView drawRect:`), ported line by
/// line: a blue circle of radius `scale` × half the short side, two eyes,
/// and a Bézier mouth whose control points move with the smile.
enum FaceDrawing {
    static let lineWidth = 5.0
    static let strokeColor = RGBColor(red: 0, green: 0, blue: 255)  // UIColor blueColor
    static let eyeH = 0.30
    static let eyeV = 0.30
    static let eyeRadius = 0.10
    static let mouthH = 0.45
    static let mouthV = 0.40
    static let mouthSmile = 0.25

    /// The face's radius in a view of this size.
    static func radius(width: Double, height: Double, scale: Double) -> Double {
        min(width, height) / 2 * scale
    }

    /// Draws in the box (0, 0, width, height) and never outside it: from
    /// scale ≈ 1.41 the circle lies wholly beyond the box.
    static func draw(_ face: Scene.Face, in context: DrawingContext, width: Double, height: Double) {
        let midX = width / 2, midY = height / 2
        let size = radius(width: width, height: height, scale: face.scale)
        context.isolated {
            context.clip(toX: 0, y: 0, width: width, height: height)
            context.setLineWidth(lineWidth)
            context.setColor(strokeColor)
            circle(context, x: midX, y: midY, radius: size)

            let eyeY = midY - size * eyeV
            circle(context, x: midX - size * eyeH, y: eyeY, radius: size * eyeRadius)
            circle(context, x: midX + size * eyeH, y: eyeY, radius: size * eyeRadius)

            let startX = midX - size * mouthH, endX = midX + size * mouthH
            let mouthY = midY + size * mouthV
            let smile = min(1, max(-1, face.smile))
            let offset = mouthSmile * size * smile
            context.newPath()
            context.move(to: startX, mouthY)
            context.curve(to: endX, mouthY,
                          control1: startX + size * mouthH * 2 / 3, mouthY + offset,
                          control2: endX - size * mouthH * 2 / 3, mouthY + offset)
            context.stroke()
        }
    }

    /// `drawCircleAtPoint:withRadius:inContext:`.
    private static func circle(_ context: DrawingContext, x: Double, y: Double, radius: Double) {
        context.newPath()
        context.arc(centerX: x, centerY: y, radius: radius, from: 0, to: 2 * Double.pi)
        context.stroke()
    }
}
