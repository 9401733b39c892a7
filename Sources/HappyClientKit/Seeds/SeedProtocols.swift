/// The face's data source, as in the seed (`smileForFaceView:`): the view
/// asks it how much to smile each time it draws.
public protocol FaceViewDataSource: AnyObject {
    /// -1 (sad) to 1 (happy); values outside are clamped.
    func smile(for faceView: FaceView) -> Double
}

/// What the shared face reports (`faceView:didChangeHappiness:`,
/// `faceView:didChangeScale:`): someone in the room changed it.
/// `faceView.sender` names who.
public protocol FaceViewDelegate: AnyObject {
    /// Someone changed the room's happiness; `happiness` is the new value, 0...100.
    func faceView(_ faceView: FaceView, didChangeHappiness happiness: Int)
    /// Someone changed the face's scale; `scale` is the new value.
    func faceView(_ faceView: FaceView, didChangeScale scale: Double)
}

extension FaceViewDelegate {
    /// Does nothing by default.
    public func faceView(_ faceView: FaceView, didChangeHappiness happiness: Int) {}
    /// Does nothing by default.
    public func faceView(_ faceView: FaceView, didChangeScale scale: Double) {}
}

/// What the shared heart reports (`heartView:didChangeRate:`, `heartView:didChangeStyle:`).
public protocol HeartViewDelegate: AnyObject {
    /// Someone moved the heart's fill level; `rate` is the new value, 0...1.
    func heartView(_ heartView: HeartView, didChangeRate rate: Double)
    /// Someone changed the heart's fill colour, stroke colour or line width (read them from `heartView`).
    func heartViewDidChangeStyle(_ heartView: HeartView)
}

extension HeartViewDelegate {
    /// Does nothing by default.
    public func heartView(_ heartView: HeartView, didChangeRate rate: Double) {}
    /// Does nothing by default.
    public func heartViewDidChangeStyle(_ heartView: HeartView) {}
}

/// As the seed's `BLDragonViewDelegate`: the dragon's buttons, pressed by
/// anyone in the room, with the view passed along as the sender (its
/// `frame` already moved, its `sender` naming who pressed).
public protocol DragonViewDelegate: AnyObject {
    /// Someone pressed the back button, or the crowd voted for it;
    /// called also when the dragon was at the edge and did not move.
    func backButtonClicked(_ dragonView: DragonView)
    /// Someone pressed the forward button, or the crowd voted for it;
    /// called also when the dragon was at the edge and did not move.
    func forwardButtonClicked(_ dragonView: DragonView)
    /// Someone hid or showed the dragon; `hidden` is the new value.
    func dragonView(_ dragonView: DragonView, didChangeHidden hidden: Bool)
}

extension DragonViewDelegate {
    /// Does nothing by default.
    public func dragonView(_ dragonView: DragonView, didChangeHidden hidden: Bool) {}
}
