import HappyCore

/// Where an admitted intent goes, from the WebSocket (`MessageIntake`) and
/// `POST /api/intent` (`APIRoutes`) alike: to exactly one handler. A dragon
/// intent in a room that votes (`crowd.dragon` `vote`) is counted by
/// `VoteCounter`, which submits each round's majority; every other intent
/// goes to `CommitCoordinator` as it is.
final class IntentRouter {
    private let votes: VoteCounter
    private let coordinator: CommitCoordinator

    init(votes: VoteCounter, coordinator: CommitCoordinator) {
        self.votes = votes
        self.coordinator = coordinator
    }

    /// `voterKey` names the sender should the intent be a vote (its
    /// connection, or its address over HTTP).
    func route(_ intent: Intent, in runtime: RoomRuntime, sender: Participant, reply: ReplyTarget, voterKey: String) {
        if votes.counts(intent, in: runtime) {
            votes.cast(intent, in: runtime, sender: sender, reply: reply, voterKey: voterKey)
        } else {
            coordinator.submit(intent, in: runtime, sender: sender, reply: reply)
        }
    }
}
