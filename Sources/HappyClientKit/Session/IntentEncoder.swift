import HappyCore

/// Writes client messages (PROTOCOL.md section 4) as JSON text.
public enum IntentEncoder {
    /// `{"type":"intent","id":…,"action":…, parameters…}`
    public static func intent(_ action: Action, id: String?) -> String {
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        w.key("type"); w.string("intent")
        if let id { w.key("id"); w.string(id) }
        w.key("action"); w.string(action.wireName)
        switch action {
        case .setHappiness(let value), .setScale(let value), .setRate(let value):
            w.key("value"); w.number(value)
        case .nudgeHappiness(let delta):
            w.key("delta"); w.int(delta)
        case .pinch(let factor):
            w.key("factor"); w.number(factor)
        case .setStyle(let style):
            if let fill = style.fillColor { w.key("fillColor"); w.string(fill.hex) }
            if let stroke = style.strokeColor { w.key("strokeColor"); w.string(stroke.hex) }
            if let width = style.lineWidth { w.key("lineWidth"); w.number(width) }
        case .setHidden(let hidden):
            w.key("value"); w.bool(hidden)
        case .dragonForward, .dragonBack, .toggleHidden, .reset:
            break
        }
        w.endObject()
        return w.text
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
