import Foundation
import HappyClientKit

// room-tour [seconds]: joins the room "tour", follows its people, scene and
// connection for a few seconds while it sets the face's happiness, then leaves.
let url = ProcessInfo.processInfo.environment["HAPPY_URL"] ?? "ws://127.0.0.1:8080"
let seconds = Double(CommandLine.arguments.dropFirst().first ?? "") ?? 3

let room: HappyRoom
do {
    room = try await HappyRoom.connect(to: url, room: "tour", name: "guide")
} catch .closed(_, let close) where close.kind == .policyViolation {
    print("refused: \(close.reason)")      // a bad room name or token, an origin not allowed
    exit(65)
} catch {
    print("cannot join: \(error)")         // it names the address and what to check
    exit(69)
}

let followers = [
    Task {
        for await status in room.status { print("status: \(status)") }
    },
    Task {
        for await people in room.presence {
            print("here (\(people.count)): \(people.people.map(\.name).sorted().joined(separator: ", "))")
        }
    },
    Task {
        for await scene in room.state { print("happiness \(scene.face.happiness)") }
    },
]

do {
    let outcome = try await room.perform(.setHappiness(75))
    switch outcome.result {
    case .applied, .clamped: print("set at seq \(outcome.seq)")
    case .unchanged: print("it was 75 already")
    case .blocked, .counted: print("not for the face: \(outcome.result)")
    }
} catch .refused(let error) where error.code == .rateLimited {
    print("too fast: \(error.message)")
} catch {
    print("not done: \(error)")
}

let ping = try await room.ping()
print("round trip \(ping.roundTripMilliseconds < 1000 ? "under" : "over") a second")

try? await Task.sleep(for: .seconds(seconds))
room.leave()                                // every sequence ends
for follower in followers { await follower.value }
print("left")
