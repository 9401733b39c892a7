import HappyCore

extension DrawingContext {
    /// Fills, then strokes, each shape in the current coordinates.
    func draw(_ shapes: [ArtShape]) {
        for shape in shapes { draw(shape) }
    }

    func draw(_ shape: ArtShape) {
        newPath()
        switch shape.outline {
        case .path(let commands):
            for command in commands {
                switch command {
                case .move(let x, let y): move(to: x, y)
                case .line(let x, let y): line(to: x, y)
                case .cubic(let x1, let y1, let x2, let y2, let x, let y):
                    curve(to: x, y, control1: x1, y1, control2: x2, y2)
                case .quad(let cx, let cy, let x, let y): quadCurve(to: x, y, control: cx, cy)
                case .close: closePath()
                }
            }
        case .ellipse(let cx, let cy, let rx, let ry):
            ellipse(centerX: cx, centerY: cy, radiusX: rx, radiusY: ry)
        }
        if let color = shape.fill {
            setColor(color)
            if shape.stroke != nil { fillPreservingPath() } else { fill() }
        }
        if let stroke = shape.stroke {
            setRoundJoins()
            setRoundCaps()
            setLineWidth(shape.lineWidth)
            setColor(stroke)
            self.stroke()
        }
        newPath()
    }

    /// Scales a `contentWidth`×`contentHeight` drawing to fit `box`, keeping
    /// its aspect and centring it (the rest of the box stays untouched).
    func fitted(_ contentWidth: Double, _ contentHeight: Double, in box: ArtRect, _ body: () -> Void) {
        let scale = min(box.width / contentWidth, box.height / contentHeight)
        isolated {
            translate(box.x + (box.width - contentWidth * scale) / 2, box.y + (box.height - contentHeight * scale) / 2)
            self.scale(scale, scale)
            rectangle(0, 0, contentWidth, contentHeight)
            clip()
            body()
        }
    }
}
