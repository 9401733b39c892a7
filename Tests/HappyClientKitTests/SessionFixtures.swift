import HappyClientKit
import HappyCore

/// Server messages for session tests, decoded from JSON text as a client reads them.
enum SessionFixtures {
    static func state(happiness: Int = 50, x: Double = 10) -> String {
        """
        {"face":{"happiness":\(happiness),"smile":0,"scale":0.9},\
        "heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},\
        "dragon":{"x":\(x),"y":10,"hidden":false}}
        """
    }

    static func welcome(epoch: String = "e1", seq: UInt64, recovered: Bool = false, happiness: Int = 50,
                        presence: [(String, String)] = [("c1", "me")]) -> WelcomeMessage {
        let text = welcomeText(epoch: epoch, seq: seq, recovered: recovered, happiness: happiness, presence: presence)
        guard case .welcome(let welcome)? = ServerMessage.decode(text)?.0 else { fatalError("bad welcome fixture") }
        return welcome
    }

    /// A welcome as the server writes it.
    static func welcomeText(epoch: String = "e1", seq: UInt64, recovered: Bool = false, happiness: Int = 50,
                            presence: [(String, String)] = [("c1", "me")]) -> String {
        let list = presence.map { #"{"id":"\#($0.0)","name":"\#($0.1)"}"# }.joined(separator: ",")
        return """
            {"type":"welcome","protocol":1,"room":"lobby","you":{"id":"c1","name":"me","role":"player"},\
            "epoch":"\(epoch)","seq":\(seq),"state":\(state(happiness: happiness)),\
            "scene":{"width":375,"height":180,"dragonSize":100,"step":10},\
            "presence":[\(list)],"presenceCount":\(presence.count),"serverTime":1764460000123,\
            "recovered":\(recovered),"limits":{"intentsPerSecond":60,"intentBurst":120,"maxMessageBytes":4096}}
            """
    }

    static func event(seq: UInt64, happiness: Int) -> EventMessage {
        guard case .event(let event)? = ServerMessage.decode(eventText(seq: seq, happiness: happiness))?.0 else {
            fatalError("bad event fixture")
        }
        return event
    }

    /// An event as the server writes it: happiness set to `happiness` by alice.
    static func eventText(seq: UInt64, happiness: Int) -> String {
        """
        {"type":"event","seq":\(seq),"room":"lobby","time":1764460000456,"name":"faceView:didChangeHappiness:",\
        "sender":{"id":"c7","name":"alice"},"changes":[{"path":"face.happiness","from":0,"to":\(happiness)}],\
        "state":\(state(happiness: happiness))}
        """
    }

    static func tick(from: UInt64, seq: UInt64, x: Double, presence: String? = nil) -> TickMessage {
        let text = """
            {"type":"tick","room":"lobby","from":\(from),"seq":\(seq),"time":1764460000456,\
            "names":{"forwardButtonClicked:":\(seq >= from ? seq - from + 1 : 0)},"senders":[{"id":"c7","name":"alice"}],\
            "senderCount":1,"changes":[],"state":\(state(x: x))\(presence.map { #","presence":\#($0)"# } ?? "")}
            """
        guard case .tick(let tick)? = ServerMessage.decode(text)?.0 else { fatalError("bad tick fixture") }
        return tick
    }
}
