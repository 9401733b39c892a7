/// Writes client messages (PROTOCOL.md section 4) as JSON text: what a client sends, the
/// other side of `ClientMessageDecoder`.
public enum IntentEncoder {
    /// `{"type":"intent","id":…,"action":…, parameters…}`: the action's parameters as its
    /// entry in the table names them, in that order.
    public static func intent(_ action: Action, id: String?) -> String {
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        w.key("type"); w.string("intent")
        if let id { w.key("id"); w.string(id) }
        let spec = action.kind.spec
        w.key("action"); w.string(spec.wireName)
        for (parameter, value) in zip(spec.parameters, action.parameterValues) {
            guard let value else { continue }
            w.key(parameter.name)
            switch value {
            case .number(let number): w.number(number)
            case .boolean(let flag): w.bool(flag)
            case .color(let color): w.color(color)
            }
        }
        w.endObject()
        return w.text
    }

    /// `{"type":"pointer","view":…,"x":…,"y":…,"activity":…}`, or
    /// `{"type":"pointer","view":null}` to hide the pointer (section 10).
    /// Coordinates are kept within 0...1 and rounded to 1/10000 of the view.
    public static func pointer(_ position: PointerPosition?) -> String {
        var w = JSONWriter(capacity: 80)
        w.beginObject()
        w.key("type"); w.string("pointer")
        w.key("view")
        if let position {
            w.string(position.view.rawValue)
            w.key("x"); w.number(coordinate(position.x))
            w.key("y"); w.number(coordinate(position.y))
            w.key("activity"); w.string(position.activity.rawValue)
        } else {
            w.null()
        }
        w.endObject()
        return w.text
    }

    private static func coordinate(_ value: Double) -> Double {
        guard value.isFinite else { return 0.5 }
        return (min(1, max(0, value)) * 10_000).rounded() / 10_000
    }

    /// `{"type":"ping","id":…}`
    public static func ping(id: String) -> String {
        var w = JSONWriter(capacity: 32)
        w.beginObject()
        w.key("type"); w.string("ping")
        w.key("id"); w.string(id)
        w.endObject()
        return w.text
    }
}
