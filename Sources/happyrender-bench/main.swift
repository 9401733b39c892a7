import Foundation
import HappyCore
import HappyRender

let usage = """
    usage: happyrender-bench [--art FILE] [--size N] [--iterations N]
           happyrender-bench [--art FILE] --write DIR

    Times render + PNG encode of each view at N×N (default 300×300), or
    writes sample frames (default state and a changed one) as PNG files.

    options:
      --art FILE        the scene art (default web/assets/scene-art.json)
      --size N          side of the frames timed (default 300)
      --iterations N    frames per view (default 200)
      --write DIR       write sample frames <view>-<state>.png into DIR, at the
                        views' default sizes or at N×N when --size is given
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("happyrender-bench: \(message)\n".utf8))
    exit(2)
}

var artPath = "web/assets/scene-art.json"
var size = 300
var iterations = 200
var writeDirectory: String?
var sizeGiven = false
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let option = arguments.removeFirst()
    if option == "--help" { print(usage); exit(0) }
    guard let value = arguments.first else { fail("\(option) needs a value\n\(usage)") }
    arguments.removeFirst()
    switch option {
    case "--art": artPath = value
    case "--size":
        guard let number = Int(value), (16...2048).contains(number) else { fail("--size must be 16...2048") }
        size = number
        sizeGiven = true
    case "--iterations":
        guard let number = Int(value), number > 0 else { fail("--iterations must be positive") }
        iterations = number
    case "--write": writeDirectory = value
    default: fail("unknown option \(option)\n\(usage)")
    }
}

let art: SceneArt
do { art = try SceneArt.load(path: artPath) } catch { fail(error.message) }
let renderer = FrameRenderer(art: art, geometry: SceneGeometry())
let standard = FrameState(scene: .standard, dragonStatus: art.panel.initialStatus, step: 0)

if let directory = writeDirectory {
    var changed = standard
    changed.scene.face.happiness = 100
    changed.scene.heart.rate = 0.8
    changed.scene.dragon.x = 120
    changed.dragonStatus = "forward, (x,y) = (120, 10)"
    changed.step = 25
    var hidden = changed
    hidden.scene.dragon.hidden = true
    hidden.dragonStatus = "hide"
    var sad = standard
    sad.scene.face.happiness = 0
    sad.scene.face.scale = 0.5
    sad.scene.heart.rate = 0.2
    sad.scene.heart.lineWidth = 6
    sad.scene.heart.strokeColor = RGBColor(hex: "#0000ff")!
    sad.scene.heart.fillColor = RGBColor(hex: "#ff8800")!
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let samples = [("default", standard), ("changed", changed), ("hidden", hidden), ("sad", sad)]
    for view in FrameView.allCases {
        let (width, height) = sizeGiven ? (size, size) : renderer.defaultSize(of: view)
        for (name, state) in samples {
            let path = "\(directory)/\(view.rawValue)-\(name).png"
            do {
                let bytes = try renderer.png(view, state, width: width, height: height)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                print("\(path) \(width)x\(height) \(bytes.count) bytes")
            } catch {
                fail("\(path): \(error)")
            }
        }
    }
    exit(0)
}

print("render + PNG encode, \(size)x\(size), \(iterations) frames per view")
for view in FrameView.allCases {
    var renderSeconds = 0.0, encodeSeconds = 0.0, bytes = 0
    for index in 0..<iterations {
        var state = standard
        state.step = index % 100
        let start = SystemTime.monotonicSeconds()
        do {
            let image = try renderer.render(view, state, width: size, height: size)
            let drawn = SystemTime.monotonicSeconds()
            bytes += try image.pngBytes().count
            encodeSeconds += SystemTime.monotonicSeconds() - drawn
            renderSeconds += drawn - start
        } catch {
            fail("\(view.rawValue): \(error)")
        }
    }
    let perFrame = { (seconds: Double) in String(format: "%.3f", seconds * 1000 / Double(iterations)) }
    print("\(view.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) "
        + "render \(perFrame(renderSeconds)) ms + encode \(perFrame(encodeSeconds)) ms "
        + "= \(perFrame(renderSeconds + encodeSeconds)) ms/frame, \(bytes / iterations) bytes")
}
