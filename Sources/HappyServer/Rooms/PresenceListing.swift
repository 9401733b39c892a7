import HappyCore

/// How many clients a presence list names (welcomes, resyncs, `/api/state`):
/// at most `presenceBroadcastMax`, and in a crowd room (more than
/// `crowd.presenceBatchAbove` clients) no more than a crowd's batches name,
/// so that a crowd joining does not send every newcomer a long list. The
/// count always covers everyone.
struct PresenceListing {
    let broadcastMax: Int
    let crowdAbove: Int

    init(config: HappyConfig) {
        broadcastMax = config.limits.presenceBroadcastMax
        crowdAbove = config.crowd.presenceBatchAbove
    }

    /// The longest list for a room of `count` clients.
    func limit(count: Int) -> Int {
        guard count > crowdAbove else { return broadcastMax }
        return min(broadcastMax, max(crowdAbove, PresenceBatch.listLimit))
    }
}
