import HappyCore

extension RedisRoomStore {
    public func history(ofRoom name: String, after since: UInt64, limit: Int) throws(StoreError) -> HistoryPage? {
        throw StoreError(.io, "history is not implemented by the Redis store yet")
    }

    public func pastState(ofRoom name: String, at seq: UInt64) throws(StoreError) -> PastStateLookup {
        throw StoreError(.io, "history is not implemented by the Redis store yet")
    }
}
