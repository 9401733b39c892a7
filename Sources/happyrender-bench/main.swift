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

/// Seconds of CPU this thread has used: unlike the wall clock, it does not
/// count time spent waiting for a core on a busy machine.
func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Times in milliseconds: median and 99th percentile (nearest rank).
struct Timings {
    private var samples: [Double] = []
    mutating func add(_ seconds: Double) { samples.append(seconds * 1000) }
    private func rank(_ fraction: Double) -> Double {
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int((fraction * Double(sorted.count)).rounded(.up)) - 1)]
    }
    var summary: String { String(format: "%6.3f / %6.3f", rank(0.5), rank(0.99)) }
}

print("render + PNG encode, \(size)x\(size), \(iterations) frames per view; ms median / p99")
print("cpu: this thread's CPU time (the wall clock also counts waiting for a core);")
print("cairo: the same frames through Cairo's own PNG writer, the encoder used before")
print("view    render            encode            render+encode     cpu render+encode  bytes  | cairo encode      cairo bytes")
for view in FrameView.allCases {
    var render = Timings(), encode = Timings(), total = Timings(), cpuTotal = Timings(), cairoEncode = Timings()
    var bytes = 0, cairoBytes = 0
    for index in 0..<iterations {
        var state = standard
        state.step = index % 100
        do {
            let start = SystemTime.monotonicSeconds(), cpuStart = threadCPUSeconds()
            let image = try renderer.render(view, state, width: size, height: size)
            let drawn = SystemTime.monotonicSeconds()
            bytes += try image.pngBytes().count
            let encoded = SystemTime.monotonicSeconds(), cpuEncoded = threadCPUSeconds()
            cairoBytes += try image.cairoPNGBytes().count
            cairoEncode.add(SystemTime.monotonicSeconds() - encoded)
            render.add(drawn - start)
            encode.add(encoded - drawn)
            total.add(encoded - start)
            cpuTotal.add(cpuEncoded - cpuStart)
        } catch {
            fail("\(view.rawValue): \(error)")
        }
    }
    print("\(view.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(render.summary)   \(encode.summary)   "
        + "\(total.summary)   \(cpuTotal.summary)    \(String(format: "%5d", bytes / iterations))  | "
        + "\(cairoEncode.summary)   \(cairoBytes / iterations)")
}
