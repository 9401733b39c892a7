import HappyCore
import HappyRender

/// A validated `GET /frame/{view}.png` or `GET /stream/{view}.png` request
/// (PROTOCOL.md section 6): the view from the path; `w`, `h` integers
/// 16...2048; `phase` 0...99 (frames); `fps` 1...30, default 10 (streams).
/// With neither `w` nor `h` the view's default size is used; with one of
/// them the other follows the default size's aspect.
struct FrameQuery: Equatable {
    enum Kind: String {
        case frame, stream
    }

    /// The query parameters a frame or stream request may name; `v` is
    /// ignored (a page changes it to load a frame anew).
    static func parameters(of kind: Kind) -> [String] {
        switch kind {
        case .frame: return ["room", "token", "w", "h", "phase", "seq", "v"]
        case .stream: return ["room", "token", "w", "h", "fps"]
        }
    }

    static let sizes = 16...2048
    static let phases = 0...99
    static let frameRates = 1...30
    static let defaultFrameRate = 10

    var view: FrameView
    var width: Int
    var height: Int
    var phase: Int?
    var fps: Int
    /// A past frame: the room right after event `seq` (section 11), frames only.
    var seq: UInt64?

    /// The view named by `route` (`/frame/face.png`), or nil when the route is not one of `kind`'s.
    static func view(in route: String, kind: Kind) -> Result<FrameView, HTTPError>? {
        let prefix = "/\(kind.rawValue)/"
        guard route.hasPrefix(prefix) else { return nil }
        let file = route.dropFirst(prefix.count)
        guard file.hasSuffix(".png"), let view = FrameView(rawValue: String(file.dropLast(4))) else {
            let names = FrameView.allCases.map(\.rawValue).joined(separator: ", ")
            return .failure(HTTPError(.notFound, "no view \(file): use \(prefix){\(names)}.png"))
        }
        return .success(view)
    }

    /// The validated query of a frame or stream request, or the error to answer.
    static func parse(_ request: HTTPRequest, kind: Kind,
                      defaultSize: (FrameView) -> (width: Int, height: Int)) -> Result<FrameQuery, HTTPError> {
        guard let view = view(in: request.route, kind: kind) else {
            return .failure(.notFound(request.method, request.route))
        }
        return view.flatMap { parse(view: $0, kind: kind, query: request.query, defaultSize: defaultSize($0)) }
    }

    static func parse(view: FrameView, kind: Kind, query: [String: String],
                      defaultSize: (width: Int, height: Int)) -> Result<FrameQuery, HTTPError> {
        do throws(HTTPError) {
            let width = try QueryArgument.integer(query, "w", in: sizes)
            let height = try QueryArgument.integer(query, "h", in: sizes)
            let phase = kind == .frame ? try QueryArgument.integer(query, "phase", in: phases) : nil
            let fps = kind == .stream ? try QueryArgument.integer(query, "fps", in: frameRates) ?? defaultFrameRate : defaultFrameRate
            let size = resolve(width: width, height: height, defaultSize: defaultSize)
            var parsed = FrameQuery(view: view, width: size.width, height: size.height, phase: phase, fps: fps)
            if kind == .frame { parsed.seq = try QueryArgument.sequenceNumber(query, "seq") }
            return .success(parsed)
        } catch {
            return .failure(error)
        }
    }

    /// Fills a missing side from the default size's aspect.
    private static func resolve(width: Int?, height: Int?, defaultSize: (width: Int, height: Int))
        -> (width: Int, height: Int) {
        let clamp = { (value: Double) in min(sizes.upperBound, max(sizes.lowerBound, Int(value.rounded()))) }
        switch (width, height) {
        case let (w?, h?): return (w, h)
        case let (w?, nil): return (w, clamp(Double(w) * Double(defaultSize.height) / Double(defaultSize.width)))
        case let (nil, h?): return (clamp(Double(h) * Double(defaultSize.width) / Double(defaultSize.height)), h)
        case (nil, nil): return defaultSize
        }
    }
}
