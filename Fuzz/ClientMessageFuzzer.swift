// libFuzzer entry over the wire codec and the room reducer, compiled together
// with HappyCore's sources by scripts/fuzz.sh (one module, no package build).

/// Checks the scene invariants the reducer promises, whatever the input.
func checkInvariants(_ scene: Scene, rules: SceneRules) {
    precondition((0...100).contains(scene.face.happiness), "happiness out of range")
    precondition(scene.face.scale >= rules.scaleMin && scene.face.scale <= rules.scaleMax, "scale out of range")
    precondition(scene.heart.rate >= 0 && scene.heart.rate <= 1, "rate out of range")
    precondition(scene.heart.lineWidth > 0 && scene.heart.lineWidth <= 20, "lineWidth out of range")
    precondition(scene.dragon.x.isFinite && scene.dragon.y.isFinite, "dragon position not finite")
}

nonisolated(unsafe) var fuzzRoom = Room<Int>(name: "fuzz", epoch: "e", snapshot: RoomSnapshot(seq: 0, scene: .standard),
                                             historyCapacity: 16)
let fuzzRules = SceneRules()
let fuzzReducer = SceneReducer(rules: fuzzRules)

func allNumbersFinite(_ value: JSONValue) -> Bool {
    switch value {
    case .number(let d): return d.isFinite
    case .array(let elements): return elements.allSatisfy(allNumbersFinite)
    case .object(let members): return members.allSatisfy { allNumbersFinite($0.value) }
    default: return true
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientMessage(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    switch ClientMessageDecoder.decode(bytes) {
    case .success(.intent(let intent)):
        let applied = fuzzRoom.apply(intent.action, sender: Participant(id: "f", name: "fuzz"), time: 0,
                                     reducer: fuzzReducer)
        checkInvariants(fuzzRoom.working.scene, rules: fuzzRules)
        if let event = applied.event {
            precondition(event.seq == fuzzRoom.working.seq, "event seq is not the room's")
            let encoded = ServerMessageEncoder.event(event)
            guard case .event(let decoded) = ServerMessage.decode((try? JSONParser.parse(encoded))!) else {
                preconditionFailure("an encoded event does not decode")
            }
            precondition(decoded.state == event.state, "event state does not round-trip")
            fuzzRoom.commit(event, historyElement: Int(event.seq))
        }
        let ack = ServerMessageEncoder.ack(id: intent.id, seq: applied.ackSeq, result: applied.outcome.result)
        precondition((try? JSONParser.parse(ack)) != nil, "ack is not JSON")
    case .success(.ping(let id)):
        precondition((try? JSONParser.parse(ServerMessageEncoder.pong(id: id, serverTime: 1))) != nil)
    case .success(.pointer(let position)):
        guard let position else { break }
        precondition((0...1).contains(position.x) && (0...1).contains(position.y), "a pointer outside its view")
        let entry = ServerMessageEncoder.pointerEntry(PointerEntry(id: "f", name: "fuzz", position: position))
        let batch = ServerMessageEncoder.pointers(room: "fuzz", entries: [entry], gone: [])
        guard case .pointers(let decoded) = ServerMessage.decode((try? JSONParser.parse(batch))!),
              let back = decoded.pointers.first?.position, back.view == position.view,
              back.activity == position.activity, abs(back.x - position.x) < 1e-9, abs(back.y - position.y) < 1e-9 else {
            preconditionFailure("a pointer does not round-trip")
        }
    case .failure(let error):
        let encoded = ServerMessageEncoder.error(error)
        precondition((try? JSONParser.parse(encoded)) != nil, "error answer is not JSON")
    }
    // Whatever parses (with finite numbers: 1e400 is JSON but no Double)
    // must re-encode to text that parses to the same value.
    if let value = try? JSONParser.parse(bytes), allNumbersFinite(value) {
        var writer = JSONWriter()
        writer.value(value)
        precondition((try? JSONParser.parse(writer.bytes)) == value, "JSON does not round-trip")
    }
    return 0
}
