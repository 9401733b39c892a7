import Foundation
import HappyCore

extension SceneArt {
    /// Reads the art file; errors name the file and the field.
    public static func load(path: String) throws(SceneArtError) -> SceneArt {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SceneArtError("scene art \(path): the file is missing or unreadable")
        }
        do {
            return try parse(Array(data))
        } catch {
            throw SceneArtError("scene art \(path): \(error.message)")
        }
    }

    /// Parses the JSON text of the art file.
    public static func parse(_ bytes: [UInt8]) throws(SceneArtError) -> SceneArt {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes, maxDepth: 16)
        } catch {
            throw SceneArtError("not valid JSON: \(error)")
        }
        let root = Field(json, "")
        if json["format"] != nil, try root.number("format") != 1 {
            throw SceneArtError("format: only format 1 is understood")
        }
        let dragon = try root.object("dragon")
        let panel = try root.object("panel")
        let scene = try root.object("scene")
        return SceneArt(
            dragonBox: try dragon.positive("box"),
            dragon: try dragon.shapes("shapes"),
            panel: Panel(
                sceneColor: try panel.color("sceneColor"),
                rowHeight: try panel.nonNegative("rowHeight"),
                rowColor: try panel.color("rowColor"),
                labelHeight: try panel.nonNegative("labelHeight"),
                labelColor: try panel.color("labelColor"),
                textColor: try panel.color("textColor"),
                fontSize: try panel.positive("fontSize"),
                initialStatus: try panel.string("initialStatus"),
                buttons: try panel.array("buttons").map { (button) throws(SceneArtError) in try button.button() }),
            composite: Composite(
                width: try scene.positive("width"),
                height: try scene.positive("height"),
                background: try scene.color("background"),
                face: try scene.object("face").rect(),
                heart: try scene.object("heart").rect(),
                dragon: try scene.object("dragon").rect()))
    }
}

/// A JSON value with its location, for error messages such as
/// `dragon.shapes[3].fill: "#zz" is not a colour`.
private struct Field {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, _ path: String) {
        self.value = value
        self.path = path
    }

    private func fail(_ message: String) -> SceneArtError {
        SceneArtError(path.isEmpty ? message : "\(path): \(message)")
    }

    private func member(_ key: String) -> Field? {
        value[key].map { Field($0, path.isEmpty ? key : "\(path).\(key)") }
    }

    private func required(_ key: String) throws(SceneArtError) -> Field {
        guard value.isObject else { throw fail("must be an object") }
        guard let field = member(key) else { throw fail("\"\(key)\" is missing") }
        return field
    }

    func object(_ key: String) throws(SceneArtError) -> Field {
        let field = try required(key)
        guard field.value.isObject else { throw field.fail("must be an object") }
        return field
    }

    func array(_ key: String) throws(SceneArtError) -> [Field] {
        let field = try required(key)
        guard case .array(let items) = field.value else { throw field.fail("must be an array") }
        return items.enumerated().map { Field($1, "\(field.path)[\($0)]") }
    }

    func number(_ key: String) throws(SceneArtError) -> Double {
        let field = try required(key)
        guard let number = field.value.doubleValue else { throw field.fail("must be a number") }
        return number
    }

    func positive(_ key: String) throws(SceneArtError) -> Double {
        let value = try number(key)
        guard value > 0 else { throw try required(key).fail("must be greater than 0") }
        return value
    }

    func nonNegative(_ key: String) throws(SceneArtError) -> Double {
        let value = try number(key)
        guard value >= 0 else { throw try required(key).fail("must not be negative") }
        return value
    }

    func string(_ key: String) throws(SceneArtError) -> String {
        let field = try required(key)
        guard let text = field.value.stringValue else { throw field.fail("must be a string") }
        return text
    }

    func color(_ key: String) throws(SceneArtError) -> RGBColor {
        let field = try required(key)
        guard let text = field.value.stringValue, let color = RGBColor(hex: text) else {
            throw field.fail("must be a colour \"#rrggbb\"")
        }
        return color
    }

    func optionalColor(_ key: String) throws(SceneArtError) -> RGBColor? {
        guard member(key) != nil else { return nil }
        return try color(key)
    }

    func rect() throws(SceneArtError) -> ArtRect {
        ArtRect(x: try number("x"), y: try number("y"), width: try positive("width"), height: try positive("height"))
    }

    func shapes(_ key: String) throws(SceneArtError) -> [ArtShape] {
        try array(key).map { (field) throws(SceneArtError) in try field.shape() }
    }

    func optionalShapes(_ key: String) throws(SceneArtError) -> [ArtShape] {
        member(key) == nil ? [] : try shapes(key)
    }

    /// `{ "path": "M…" }`, `{ "polygon": [x, y, …] }` or `{ "ellipse": [cx, cy, rx, ry] }`,
    /// with `fill`, `stroke` (colours) and `lineWidth` (default 1).
    func shape() throws(SceneArtError) -> ArtShape {
        let outline: ArtShape.Outline
        if let path = member("path") {
            guard let text = path.value.stringValue else { throw path.fail("must be a string") }
            do { outline = .path(try SVGPathParser.parse(text)) } catch { throw path.fail(error.message) }
        } else if let polygon = member("polygon") {
            let numbers = try polygon.numbers()
            guard numbers.count >= 6, numbers.count % 2 == 0 else {
                throw polygon.fail("needs at least three x, y pairs")
            }
            var commands: [PathCommand] = [.move(x: numbers[0], y: numbers[1])]
            for index in stride(from: 2, to: numbers.count, by: 2) {
                commands.append(.line(x: numbers[index], y: numbers[index + 1]))
            }
            outline = .path(commands + [.close])
        } else if let ellipse = member("ellipse") {
            let numbers = try ellipse.numbers()
            guard numbers.count == 4, numbers[2] > 0, numbers[3] > 0 else {
                throw ellipse.fail("must be [cx, cy, rx, ry] with positive radii")
            }
            outline = .ellipse(centerX: numbers[0], centerY: numbers[1], radiusX: numbers[2], radiusY: numbers[3])
        } else {
            throw fail("a shape needs \"path\", \"polygon\" or \"ellipse\"")
        }
        let fill = try optionalColor("fill")
        let stroke = try optionalColor("stroke")
        guard fill != nil || stroke != nil else { throw fail("a shape needs \"fill\" or \"stroke\"") }
        let lineWidth = member("lineWidth") == nil ? 1 : try positive("lineWidth")
        return ArtShape(outline: outline, fill: fill, stroke: stroke, lineWidth: lineWidth)
    }

    private func numbers() throws(SceneArtError) -> [Double] {
        guard case .array(let items) = value else { throw fail("must be an array of numbers") }
        var numbers: [Double] = []
        for item in items {
            guard let number = item.doubleValue else { throw fail("must be an array of numbers") }
            numbers.append(number)
        }
        return numbers
    }

    func button() throws(SceneArtError) -> SceneArt.Button {
        let areaName = try string("area"), alignName = try string("align")
        guard let area = SceneArt.Button.Area(rawValue: areaName) else {
            throw try required("area").fail("must be \"scene\" or \"row\"")
        }
        guard let align = SceneArt.Button.Alignment(rawValue: alignName) else {
            throw try required("align").fail("must be \"left\", \"center\" or \"right\"")
        }
        return SceneArt.Button(
            name: try string("name"), action: try string("action"), area: area, align: align,
            x: try number("x"), y: try number("y"), width: try positive("width"), height: try positive("height"),
            fill: try color("fill"), radius: try nonNegative("radius"),
            shapes: try shapes("shapes"), hiddenShapes: try optionalShapes("hiddenShapes"))
    }
}
