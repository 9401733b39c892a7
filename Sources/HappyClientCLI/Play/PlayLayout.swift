import HappyRender

/// Where things go on the `play` screen: a title row, the picture, and
/// five text rows (status label, values, presence, steering, keys). The
/// picture is the composite scene, or — when the terminal is narrow and tall
/// enough for it to come out larger — the face, heart and dragon stacked.
/// Pixels: one per column, two per row.
struct PlayLayout: Equatable {
    /// The natural sizes of what can be drawn (from the art).
    struct Sizes: Equatable {
        var scene: (width: Double, height: Double)
        var views: [(view: FrameView, width: Double, height: Double)]

        static func == (lhs: Sizes, rhs: Sizes) -> Bool {
            lhs.scene == rhs.scene && lhs.views.map(\.view) == rhs.views.map(\.view)
                && lhs.views.map(\.width) == rhs.views.map(\.width) && lhs.views.map(\.height) == rhs.views.map(\.height)
        }
    }

    /// One view drawn at a pixel rectangle of the picture.
    struct Placement: Equatable {
        var view: FrameView
        var x: Int
        var y: Int
        var width: Int
        var height: Int
    }

    /// The smallest terminal the view is drawn in: the key help fits on its
    /// row, and the picture gets ten rows (below that every line was cut and
    /// the picture squeezed to a strip).
    static let minimumColumns = 68
    static let minimumRows = 16
    static let textRowsBelow = 5

    let columns: Int
    let rows: Int
    /// Pixel size of the picture area.
    let pixelWidth: Int
    let pixelHeight: Int
    let placements: [Placement]

    var tooSmall: Bool { columns < Self.minimumColumns || rows < Self.minimumRows }
    var pictureRows: Int { max(0, rows - 1 - Self.textRowsBelow) }
    var isStacked: Bool { placements.count > 1 }

    init(columns: Int, rows: Int, sizes: Sizes) {
        self.columns = columns
        self.rows = rows
        pixelWidth = max(0, columns)
        pixelHeight = max(0, rows - 1 - Self.textRowsBelow) * 2
        guard columns >= Self.minimumColumns, rows >= Self.minimumRows else {
            placements = []
            return
        }
        let width = Double(pixelWidth), height = Double(pixelHeight)
        let compositeScale = min(width / sizes.scene.width, height / sizes.scene.height)
        let stackWidth = sizes.views.map(\.width).max() ?? 1
        let stackHeight = sizes.views.map(\.height).reduce(0, +)
        let stackScale = min(width / stackWidth, height / max(1, stackHeight))
        if stackScale > compositeScale * 1.2 && !sizes.views.isEmpty {
            placements = Self.stack(sizes.views, scale: stackScale, width: pixelWidth, height: pixelHeight)
        } else {
            let w = max(1, Int(sizes.scene.width * compositeScale))
            let h = max(1, Int(sizes.scene.height * compositeScale))
            placements = [Placement(view: .scene, x: (pixelWidth - w) / 2, y: Self.even((pixelHeight - h) / 2),
                                    width: w, height: h)]
        }
    }

    private static func stack(_ views: [(view: FrameView, width: Double, height: Double)], scale: Double,
                              width: Int, height: Int) -> [Placement] {
        let heights = views.map { max(1, Int($0.height * scale)) }
        var y = even((height - heights.reduce(0, +)) / 2)
        var placements: [Placement] = []
        for (index, entry) in views.enumerated() {
            let w = max(1, Int(entry.width * scale))
            placements.append(Placement(view: entry.view, x: (width - w) / 2, y: y, width: w, height: heights[index]))
            y += heights[index]
        }
        return placements
    }

    /// Rounded down to an even pixel row, so a picture starts at a cell's top.
    private static func even(_ value: Int) -> Int { max(0, value - value % 2) }
}

extension PlayLayout.Sizes {
    /// The sizes `renderer` draws at by default (the art's).
    init(renderer: FrameRenderer) {
        func size(_ view: FrameView) -> (Double, Double) {
            let size = renderer.defaultSize(of: view)
            return (Double(size.width), Double(size.height))
        }
        self.init(scene: size(.scene),
                  views: [FrameView.face, .heart, .dragon].map { view in
                      let (width, height) = size(view)
                      return (view, width, height)
                  })
    }
}
