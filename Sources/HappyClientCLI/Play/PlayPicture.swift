import HappyCore
import HappyRender

/// Draws the picture of a layout with HappyRender and turns it into
/// terminal lines.
struct PlayPicture {
    let renderer: FrameRenderer
    let encoder: CellEncoder

    /// The picture's lines for `state`, with `marks` over it.
    func lines(_ layout: PlayLayout, state: FrameState, marks: [CellMark] = []) throws(RenderError) -> [String] {
        encoder.lines(try grid(layout, state: state), marks: marks)
    }

    /// The picture's pixels for `state`; views are flattened onto the
    /// scene's background colour, the rest stays transparent.
    func grid(_ layout: PlayLayout, state: FrameState) throws(RenderError) -> PixelGrid {
        var grid = PixelGrid(width: layout.pixelWidth, height: layout.pixelHeight)
        let background = RGB(renderer.art.composite.background)
        for placement in layout.placements {
            let image = try renderer.render(placement.view, state, width: placement.width, height: placement.height)
            grid.draw(Self.grid(image, over: background), atX: placement.x, y: placement.y)
        }
        return grid
    }

    static func grid(_ image: RenderedImage, over background: RGB) -> PixelGrid {
        var grid = PixelGrid(width: image.width, height: image.height)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let pixel = image.pixel(x: x, y: y)
                grid[x, y] = RGB(red: pixel.red, green: pixel.green, blue: pixel.blue).over(background, alpha: pixel.alpha)
            }
        }
        return grid
    }

    /// A picture area with one centred line of text (when there is no art).
    static func message(_ text: String, layout: PlayLayout) -> [String] {
        var lines = Array(repeating: "", count: layout.pictureRows)
        guard !lines.isEmpty else { return lines }
        let fitted = PlayScreen.fit(text, width: layout.columns)
        lines[lines.count / 2] = String(repeating: " ", count: max(0, (layout.columns - fitted.count) / 2)) + fitted
        return lines
    }
}

extension RGB {
    init(_ color: RGBColor) {
        self.init(red: color.red, green: color.green, blue: color.blue)
    }
}
