import Foundation
import HappyClientKit

let url = ProcessInfo.processInfo.environment["HAPPY_URL"] ?? "ws://127.0.0.1:8080"
let room = try await HappyRoom.connect(to: url, room: "lobby", name: "alice")

let outcome = try await room.perform(.dragonForward)
print("\(outcome.result) at seq \(outcome.seq): the dragon is at x = \(outcome.state.dragon.x)")

for await update in room.events {
    guard case .event(let event) = update else { continue }
    print("#\(event.seq) \(event.sender?.name ?? "the crowd"): \(event.delegateName)")
}
