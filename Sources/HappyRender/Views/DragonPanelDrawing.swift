import HappyCore

/// The dragon panel of the delegate lesson (`BLDragonView` and its view
/// controller): a cyan scene `geometry.width`×`geometry.height` with the
/// dragon at (x, y) and the back/forward buttons, a row with the hide
/// button, and the purple status label with white text.
struct DragonPanelLayout {
    let art: SceneArt
    let geometry: SceneGeometry

    var width: Double { geometry.width }
    var height: Double { geometry.height + art.panel.rowHeight + art.panel.labelHeight }
    var rowTop: Double { geometry.height }
    var labelTop: Double { geometry.height + art.panel.rowHeight }

    /// The dragon's box in panel coordinates.
    func dragonRect(_ dragon: Scene.Dragon) -> ArtRect {
        ArtRect(x: dragon.x, y: dragon.y, width: geometry.dragonSize, height: geometry.dragonSize)
    }

    /// A button's box in panel coordinates.
    func rect(of button: SceneArt.Button) -> ArtRect {
        let top = button.area == .scene ? 0 : rowTop
        return ArtRect(x: button.left(inAreaWidth: width), y: top + button.y, width: button.width, height: button.height)
    }

    /// Draws in the panel's box (0, 0, width, height) and never outside it.
    func draw(_ dragon: Scene.Dragon, status: String, in context: DrawingContext) {
        let panel = art.panel
        context.isolated {
            context.clip(toX: 0, y: 0, width: width, height: height)
            context.rectangle(0, 0, width, geometry.height)
            context.setColor(panel.sceneColor)
            context.fill()
            context.rectangle(0, rowTop, width, panel.rowHeight)
            context.setColor(panel.rowColor)
            context.fill()
            context.rectangle(0, labelTop, width, panel.labelHeight)
            context.setColor(panel.labelColor)
            context.fill()

            for button in panel.buttons { draw(button, hidden: dragon.hidden, in: context) }

            if !dragon.hidden {
                // Like a UIImageView in a view that clips: the dragon stays in the scene.
                context.isolated {
                    context.rectangle(0, 0, width, geometry.height)
                    context.clip()
                    let box = dragonRect(dragon)
                    context.translate(box.x, box.y)
                    context.scale(geometry.dragonSize / art.dragonBox, geometry.dragonSize / art.dragonBox)
                    context.draw(art.dragon)
                }
            }

            context.setColor(panel.textColor)
            context.centeredText(status, x: width / 2, y: labelTop + panel.labelHeight / 2, size: panel.fontSize)
        }
    }

    private func draw(_ button: SceneArt.Button, hidden: Bool, in context: DrawingContext) {
        let box = rect(of: button)
        context.isolated {
            context.translate(box.x, box.y)
            context.newPath()
            context.roundedRectangle(0, 0, box.width, box.height, radius: button.radius)
            context.setColor(button.fill)
            context.fill()
            context.draw(button.shapes)
            if hidden { context.draw(button.hiddenShapes) }
        }
    }
}
