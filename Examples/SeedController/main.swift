import Foundation
import HappyClientKit

/// The seeds' view controllers in one, driven by everyone in a shared room:
/// `HappinessViewController` (the face's data source, its happiness the
/// model) and the dragon lesson's `ViewController` (the dragon view's
/// delegate, writing its status label), plus the heart's fill level.
final class ViewController: FaceViewDataSource, FaceViewDelegate, HeartViewDelegate, DragonViewDelegate {
    let faceView: FaceView
    let heartView: HeartView
    let dragonView: DragonView

    /// 0 is sad, 100 is very happy. The model the face shows, as in the seed.
    var happiness = 50 {
        didSet { faceView.setNeedsDisplay() }
    }

    var dragonStatusLabel = "dragon's status" {
        didSet { show("status: \(dragonStatusLabel)") }
    }

    init(views: SeedViews) {
        faceView = views.face
        heartView = views.heart
        dragonView = views.dragon
    }

    func viewDidLoad() {
        faceView.dataSource = self
        faceView.delegate = self
        heartView.delegate = self
        dragonView.delegate = self
        happiness = faceView.happiness
    }

    // MARK: FaceViewDataSource

    /// The controller interprets the model for the view: happiness 0...100 as a smile -1...1.
    func smile(for faceView: FaceView) -> Double {
        Double(happiness - 50) / 50
    }

    // MARK: FaceViewDelegate

    func faceView(_ faceView: FaceView, didChangeHappiness happiness: Int) {
        self.happiness = happiness
        show("face: \(by(faceView)) happiness \(happiness), smile \(String(format: "%.2f", faceView.smile ?? 0))")
    }

    func faceView(_ faceView: FaceView, didChangeScale scale: Double) {
        show("face: \(by(faceView)) scale \(scale)")
    }

    // MARK: HeartViewDelegate

    func heartView(_ heartView: HeartView, didChangeRate rate: Double) {
        show("heart: \(by(heartView)) rate \(rate)")
    }

    // MARK: DragonViewDelegate

    func backButtonClicked(_ dragonView: DragonView) {
        let (x, y) = dragonView.origin
        dragonStatusLabel = "\(by(dragonView)) back, (x,y) = (\(Int(x)), \(Int(y)))"
    }

    func forwardButtonClicked(_ dragonView: DragonView) {
        let (x, y) = dragonView.origin
        dragonStatusLabel = "\(by(dragonView)) forward, (x,y) = (\(Int(x)), \(Int(y)))"
    }

    func dragonView(_ dragonView: DragonView, didChangeHidden hidden: Bool) {
        dragonStatusLabel = "\(by(dragonView)) \(hidden ? "hide" : "show")"
    }

    // MARK: output

    private func by(_ view: SharedView) -> String {
        view.sender.map { "\($0.name):" } ?? "the crowd:"
    }

    private func show(_ line: String) {
        say(line)
    }
}

/// One line on standard output, at once (a test reads it through a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// seed-controller [--url ws://host:port] [--room R] [--name N] [--press forward|back] [--events N]
var options = ["--url": ProcessInfo.processInfo.environment["HAPPY_URL"] ?? "ws://127.0.0.1:8080",
               "--room": "lobby", "--name": "controller", "--events": "0"]
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard options.keys.contains(flag) || flag == "--press", let value = arguments.popFirst() else {
        FileHandle.standardError.write(Data("seed-controller: unknown option or missing value: \(flag)\n".utf8))
        exit(64)
    }
    options[flag] = value
}

do {
    let room = try await HappyRoom.connect(to: options["--url"]!, room: options["--room"], name: options["--name"])
    let views = SeedViews(room: room)
    let controller = ViewController(views: views)
    controller.viewDidLoad()
    say("joined \(room.you?.name ?? "?") in \(options["--room"]!): happiness \(controller.happiness)")
    switch options["--press"] {
    case "forward": try await views.dragon.forwardButtonClicked()
    case "back": try await views.dragon.backButtonClicked()
    default: break
    }
    // Stop after --events room events (0: until interrupted).
    let wanted = Int(options["--events"] ?? "0") ?? 0
    var seen = 0
    for await update in room.events {
        if case .event = update { seen += 1 }
        if wanted > 0 && seen >= wanted { break }
    }
    room.leave()
} catch {
    FileHandle.standardError.write(Data("seed-controller: \(error)\n".utf8))
    exit(69)
}
