import Foundation
import Synchronization

/// A shared view of a room, as one of the seeds' views, for a controller
/// written as in the seeds: its values follow the room, its delegate hears
/// what anyone in the room did (with `sender` naming who), and its gestures
/// and buttons send intents. Not a UIKit view: a stand-in with the same
/// shape. Delegates are called where the session calls its own (the task
/// reading the connection, or the main actor when the configuration asks),
/// one call at a time, in the room's order; read the view from anywhere.
public class SharedView: @unchecked Sendable {
    let lock = NSLock()
    let room: HappyRoom
    private var storedSender: Participant?

    init(room: HappyRoom) {
        self.room = room
    }

    /// Who made the change the delegate is being told of (nil: the crowd's vote, or nobody yet).
    public var sender: Participant? { lock.withLock { storedSender } }

    func setSender(_ sender: Participant?) {
        lock.withLock { storedSender = sender }
    }
}

/// The seed's `FaceView`: a face whose smile its data source decides, with
/// the room's happiness and scale; pinch and pan change them for everyone.
public final class FaceView: SharedView, @unchecked Sendable {
    private weak var storedDataSource: FaceViewDataSource?
    private weak var storedDelegate: FaceViewDelegate?
    private var face = Scene.standard.face
    private var drawnSmile: Double?
    private var draws = 0

    /// Gives the smile each time the view draws; held weakly.
    public var dataSource: FaceViewDataSource? {
        get { lock.withLock { storedDataSource } }
        set { lock.withLock { storedDataSource = newValue } }
    }

    /// Hears what anyone in the room changed, where the session calls its delegate; held weakly.
    public var delegate: FaceViewDelegate? {
        get { lock.withLock { storedDelegate } }
        set { lock.withLock { storedDelegate = newValue } }
    }

    /// The room's happiness, 0 (sad) to 100 (very happy).
    public var happiness: Int { lock.withLock { face.happiness } }
    /// The face's size as a share of the view's shorter side (0.9 by default).
    public var scale: Double { lock.withLock { face.scale } }
    /// The smile the view drew last, as its data source gave it (clamped to -1...1).
    public var smile: Double? { lock.withLock { drawnSmile } }
    /// How many times the view drew.
    public var drawCount: Int { lock.withLock { draws } }

    /// Draws again now: asks the data source for the smile.
    public func setNeedsDisplay() {
        let source = dataSource
        let asked = source?.smile(for: self) ?? 0
        lock.withLock {
            drawnSmile = min(1, max(-1, asked))
            draws += 1
        }
    }

    /// A pinch, as the seed's `pinch:` (`scale *= gesture.scale`), for everyone.
    @discardableResult
    public func pinch(_ gestureScale: Double) async throws(SessionError) -> IntentOutcome {
        try await room.perform(.pinch(gestureScale))
    }

    /// A pan, as the seed's `handleHappinessGesture:` (`happiness -= translation.y / 2`), for everyone.
    /// A pan past the whole range (or not finite) moves happiness by at most 100 (protocol's bound).
    @discardableResult
    public func pan(translationY: Double) async throws(SessionError) -> IntentOutcome {
        let delta = translationY.isFinite ? min(100, max(-100, -(translationY / 2).rounded())) : 0
        return try await room.perform(.nudgeHappiness(Int(delta)))
    }

    func show(_ face: Scene.Face) {
        lock.withLock { self.face = face }
    }
}

/// The seed's `HeartView`: the room's fill level (`rate`, 0...1) and style.
public final class HeartView: SharedView, @unchecked Sendable {
    private weak var storedDelegate: HeartViewDelegate?
    private var heart = Scene.standard.heart

    /// Hears what anyone in the room changed, where the session calls its delegate; held weakly.
    public var delegate: HeartViewDelegate? {
        get { lock.withLock { storedDelegate } }
        set { lock.withLock { storedDelegate = newValue } }
    }

    /// The room's fill level, 0 (empty) to 1 (full).
    public var rate: Double { lock.withLock { heart.rate } }
    /// The heart's fill colour.
    public var fillColor: RGBColor { lock.withLock { heart.fillColor } }
    /// The heart's outline colour.
    public var strokeColor: RGBColor { lock.withLock { heart.strokeColor } }
    /// The heart's outline width (1 by default, at most 20).
    public var lineWidth: Double { lock.withLock { heart.lineWidth } }

    /// Moves the fill level for everyone (the seed's slider).
    @discardableResult
    public func setRate(_ rate: Double) async throws(SessionError) -> IntentOutcome {
        try await room.perform(.setRate(rate))
    }

    func show(_ heart: Scene.Heart) {
        lock.withLock { self.heart = heart }
    }
}

/// The seed's `BLDragonView`: the dragon in its cyan scene, moved by the
/// back and forward buttons of anyone in the room.
public final class DragonView: SharedView, @unchecked Sendable {
    private weak var storedDelegate: DragonViewDelegate?
    private var dragon = Scene.standard.dragon

    /// Hears what anyone in the room pressed, where the session calls its delegate; held weakly.
    public var delegate: DragonViewDelegate? {
        get { lock.withLock { storedDelegate } }
        set { lock.withLock { storedDelegate = newValue } }
    }

    /// The dragon image's frame origin, as the seed's status label reads it.
    public var origin: (x: Double, y: Double) { lock.withLock { (dragon.x, dragon.y) } }
    /// Whether the dragon is hidden (the hide button).
    public var isHidden: Bool { lock.withLock { dragon.hidden } }

    /// The forward button (`forwardButtonClicked:`), for everyone.
    @discardableResult
    public func forwardButtonClicked() async throws(SessionError) -> IntentOutcome {
        try await room.perform(.dragonForward)
    }

    /// The back button (`backButtonClicked:`), for everyone.
    @discardableResult
    public func backButtonClicked() async throws(SessionError) -> IntentOutcome {
        try await room.perform(.dragonBack)
    }

    /// The hide button, for everyone.
    @discardableResult
    public func hideButtonClicked() async throws(SessionError) -> IntentOutcome {
        try await room.perform(.toggleHidden)
    }

    func show(_ dragon: Scene.Dragon) {
        lock.withLock { self.dragon = dragon }
    }
}

/// The three seed views over one room, kept in step with it until `detach()`.
public final class SeedViews: Sendable {
    /// The shared face.
    public let face: FaceView
    /// The shared heart.
    public let heart: HeartView
    /// The shared dragon.
    public let dragon: DragonView
    private let room: HappyRoom
    private let observation: Int

    /// Views showing `room` now; from here on their delegates hear every change.
    public init(room: HappyRoom) {
        self.room = room
        let face = FaceView(room: room), heart = HeartView(room: room), dragon = DragonView(room: room)
        (self.face, self.heart, self.dragon) = (face, heart, dragon)
        let shown = Mutex(room.currentState ?? .standard)
        let scene = shown.withLock { $0 }
        face.show(scene.face)
        heart.show(scene.heart)
        dragon.show(scene.dragon)
        observation = room.observe { update, scene in
            let before = shown.withLock { old in
                defer { old = scene }
                return old
            }
            SeedViews.apply(update, from: before, to: scene, face: face, heart: heart, dragon: dragon)
        }
    }

    /// Stops following the room (the views keep their last values).
    public func detach() {
        room.stopObserving(observation)
    }

    deinit { detach() }

    /// Shows `scene`, then tells each delegate what happened: an event's
    /// name, each name a tick carries (once per name, the views showing the
    /// tick's end), or for a resync or reset, whatever it changed.
    private static func apply(_ update: RoomUpdate, from before: Scene, to scene: Scene,
                              face: FaceView, heart: HeartView, dragon: DragonView) {
        face.show(scene.face)
        heart.show(scene.heart)
        dragon.show(scene.dragon)
        let names: [EventName]
        let sender: Participant?
        switch update {
        case .event(let event):
            names = event.name == .didReset ? changedNames(before, scene) : event.name.map { [$0] } ?? []
            sender = event.sender
        case .tick(let tick):
            names = tick.names.compactMap(\.name)
            sender = tick.senders.first
        case .resynced, .missed:
            names = changedNames(before, scene)
            sender = nil
        case .delivery:
            return
        }
        for view in [face, heart, dragon] as [SharedView] { view.setSender(sender) }
        // The delegate method told is the one for what the event changed, as its entry in the
        // action table says: an event of its own that fills the heart is a rate change to the seed.
        for name in names {
            switch name.spec.summary {
            case .value(.faceHappiness): face.delegate?.faceView(face, didChangeHappiness: scene.face.happiness)
            case .value(.faceScale): face.delegate?.faceView(face, didChangeScale: scene.face.scale)
            case .value(.heartRate): heart.delegate?.heartView(heart, didChangeRate: scene.heart.rate)
            case .heartStyle: heart.delegate?.heartViewDidChangeStyle(heart)
            case .dragonPosition where name == .forwardButtonClicked: dragon.delegate?.forwardButtonClicked(dragon)
            case .dragonPosition where name == .backButtonClicked: dragon.delegate?.backButtonClicked(dragon)
            case .dragonVisibility: dragon.delegate?.dragonView(dragon, didChangeHidden: scene.dragon.hidden)
            case .value, .dragonPosition, .roomReset: break
            }
        }
    }

    /// The delegate names that stand for what changed from `before` to `scene`
    /// (the dragon moving right as its forward button, left as its back button).
    private static func changedNames(_ before: Scene, _ scene: Scene) -> [EventName] {
        var names: [EventName] = []
        if before.face.happiness != scene.face.happiness { names.append(.didChangeHappiness) }
        if before.face.scale != scene.face.scale { names.append(.didChangeScale) }
        if before.heart.rate != scene.heart.rate { names.append(.didChangeRate) }
        var style = before.heart
        style.rate = scene.heart.rate
        if style != scene.heart { names.append(.didChangeStyle) }
        if scene.dragon.x > before.dragon.x { names.append(.forwardButtonClicked) }
        if scene.dragon.x < before.dragon.x { names.append(.backButtonClicked) }
        if before.dragon.hidden != scene.dragon.hidden { names.append(.didChangeHidden) }
        return names
    }
}
