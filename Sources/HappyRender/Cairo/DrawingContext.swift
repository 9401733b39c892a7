import CCairo
import HappyCore

/// A Cairo drawing context on an `ImageSurface`, with the few path and paint
/// operations the views need. Status is checked in `init` and `finish()`;
/// the context is destroyed in `deinit`.
final class DrawingContext {
    private let pointer: OpaquePointer
    /// Kept alive as long as the context draws on it.
    let surface: ImageSurface

    init(_ surface: ImageSurface) throws(RenderError) {
        guard let context = cairo_create(surface.pointer) else { throw RenderError("cairo_create returned nothing") }
        let status = cairo_status(context)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(context)
            throw RenderError("drawing context", status: status)
        }
        pointer = context
        self.surface = surface
    }

    deinit {
        cairo_destroy(pointer)
    }

    /// Throws if any drawing operation failed (Cairo errors are sticky).
    func finish() throws(RenderError) {
        let status = cairo_status(pointer)
        guard status == CAIRO_STATUS_SUCCESS else { throw RenderError("drawing", status: status) }
        cairo_surface_flush(surface.pointer)
    }

    // MARK: state

    /// Runs `body` between save and restore, so its transforms, clips and
    /// colours do not leak out (the seed's push/pop of the context).
    func isolated(_ body: () -> Void) {
        cairo_save(pointer)
        body()
        cairo_restore(pointer)
    }

    /// Limits drawing to the rectangle (intersected with the current clip),
    /// as a view that clips to its bounds; undone by the enclosing `isolated`.
    func clip(toX x: Double, y: Double, width: Double, height: Double) {
        cairo_new_path(pointer)
        cairo_rectangle(pointer, x, y, width, height)
        cairo_clip(pointer)
    }

    func translate(_ x: Double, _ y: Double) { cairo_translate(pointer, x, y) }
    func scale(_ x: Double, _ y: Double) { cairo_scale(pointer, x, y) }

    func setColor(_ color: RGBColor, alpha: Double = 1) {
        let c = color.unitComponents
        cairo_set_source_rgba(pointer, c.red, c.green, c.blue, alpha)
    }

    func setLineWidth(_ width: Double) { cairo_set_line_width(pointer, width) }
    func setRoundCaps() { cairo_set_line_cap(pointer, CAIRO_LINE_CAP_ROUND) }
    func setRoundJoins() { cairo_set_line_join(pointer, CAIRO_LINE_JOIN_ROUND) }

    // MARK: paths

    func newPath() { cairo_new_path(pointer) }
    func newSubPath() { cairo_new_sub_path(pointer) }
    func move(to x: Double, _ y: Double) { cairo_move_to(pointer, x, y) }
    func line(to x: Double, _ y: Double) { cairo_line_to(pointer, x, y) }
    func closePath() { cairo_close_path(pointer) }

    func curve(to x: Double, _ y: Double, control1 x1: Double, _ y1: Double, control2 x2: Double, _ y2: Double) {
        cairo_curve_to(pointer, x1, y1, x2, y2, x, y)
    }

    /// A quadratic Bézier from the current point, as the equivalent cubic.
    func quadCurve(to x: Double, _ y: Double, control cx: Double, _ cy: Double) {
        var x0 = 0.0, y0 = 0.0
        cairo_get_current_point(pointer, &x0, &y0)
        cairo_curve_to(pointer, x0 + 2 / 3 * (cx - x0), y0 + 2 / 3 * (cy - y0),
                       x + 2 / 3 * (cx - x), y + 2 / 3 * (cy - y), x, y)
    }

    /// An arc from angle `start` to `end`, increasing angle (clockwise on screen, y down).
    func arc(centerX: Double, centerY: Double, radius: Double, from start: Double, to end: Double) {
        cairo_arc(pointer, centerX, centerY, radius, start, end)
    }

    /// A closed ellipse as its own sub-path.
    func ellipse(centerX: Double, centerY: Double, radiusX: Double, radiusY: Double) {
        guard radiusX > 0, radiusY > 0 else { return }
        cairo_save(pointer)
        cairo_translate(pointer, centerX, centerY)
        cairo_scale(pointer, radiusX, radiusY)
        cairo_new_sub_path(pointer)
        cairo_arc(pointer, 0, 0, 1, 0, 2 * Double.pi)
        cairo_close_path(pointer)
        cairo_restore(pointer)
    }

    func rectangle(_ x: Double, _ y: Double, _ width: Double, _ height: Double) {
        cairo_rectangle(pointer, x, y, width, height)
    }

    func roundedRectangle(_ x: Double, _ y: Double, _ width: Double, _ height: Double, radius: Double) {
        let r = max(0, min(radius, width / 2, height / 2))
        guard r > 0 else { return rectangle(x, y, width, height) }
        newSubPath()
        arc(centerX: x + width - r, centerY: y + r, radius: r, from: -Double.pi / 2, to: 0)
        arc(centerX: x + width - r, centerY: y + height - r, radius: r, from: 0, to: Double.pi / 2)
        arc(centerX: x + r, centerY: y + height - r, radius: r, from: Double.pi / 2, to: Double.pi)
        arc(centerX: x + r, centerY: y + r, radius: r, from: Double.pi, to: 3 * Double.pi / 2)
        closePath()
    }

    // MARK: painting

    func stroke() { cairo_stroke(pointer) }
    func strokePreservingPath() { cairo_stroke_preserve(pointer) }
    func fill() { cairo_fill(pointer) }
    func fillPreservingPath() { cairo_fill_preserve(pointer) }
    /// Intersects the clip with the current path and clears the path.
    func clip() { cairo_clip(pointer) }
    func paint() { cairo_paint(pointer) }

    /// One line of text centred on (x, y), in the sans-serif face.
    func centeredText(_ text: String, x: Double, y: Double, size: Double) {
        cairo_select_font_face(pointer, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(pointer, size)
        var extents = cairo_text_extents_t()
        cairo_text_extents(pointer, text, &extents)
        cairo_move_to(pointer, x - extents.width / 2 - extents.x_bearing, y - extents.height / 2 - extents.y_bearing)
        cairo_show_text(pointer, text)
        cairo_new_path(pointer)
    }
}
