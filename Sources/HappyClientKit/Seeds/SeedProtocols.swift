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
    func faceView(_ faceView: FaceView, didChangeHappiness happiness: Int)
    func faceView(_ faceView: FaceView, didChangeScale scale: Double)
}

extension FaceViewDelegate {
    public func faceView(_ faceView: FaceView, didChangeHappiness happiness: Int) {}
    public func faceView(_ faceView: FaceView, didChangeScale scale: Double) {}
}

/// What the shared heart reports (`heartView:didChangeRate:`, `heartView:didChangeStyle:`).
public protocol HeartViewDelegate: AnyObject {
    func heartView(_ heartView: HeartView, didChangeRate rate: Double)
    func heartViewDidChangeStyle(_ heartView: HeartView)
}

extension HeartViewDelegate {
    public func heartView(_ heartView: HeartView, didChangeRate rate: Double) {}
    public func heartViewDidChangeStyle(_ heartView: HeartView) {}
}

/// As the seed's `BLDragonViewDelegate`: the dragon's buttons, pressed by
/// anyone in the room, with the view passed along as the sender (its
/// `frame` already moved, its `sender` naming who pressed).
public protocol DragonViewDelegate: AnyObject {
    func backButtonClicked(_ dragonView: DragonView)
    func forwardButtonClicked(_ dragonView: DragonView)
    func dragonView(_ dragonView: DragonView, didChangeHidden hidden: Bool)
}

extension DragonViewDelegate {
    public func dragonView(_ dragonView: DragonView, didChangeHidden hidden: Bool) {}
}
