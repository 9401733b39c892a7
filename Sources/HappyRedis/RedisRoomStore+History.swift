import HappyCore

/// History and replay (PROTOCOL.md section 11), read on the store's read
/// connection. Each read is one Lua script, so the room's hash and its stream
/// are seen at one instant even while other nodes commit; it reads by id, so
/// its cost does not grow with the length of the stream.
extension RedisRoomStore {
    /// Lua: the room's past, nil when the room is not recorded: `epoch`,
    /// `seq`, `first` (the oldest seq held), and the base (the state at
    /// `first` - 1) as `kind` ('event': `json` is an event message, 'scene':
    /// a scene, 'defaults': none stored) and `status`. The stream may hold
    /// more than `limit` events (what a resume needs): only the newest
    /// `limit` are history, the one before them its base.
    static let pastFunction = entryFieldFunction + """
        local function past(room, events, limit)
          local f = redis.call('HMGET', room, 'epoch', 'seq', 'first', 'baseEvent', 'baseScene', 'baseStatus', 'scene')
          if not f[1] then return nil end
          local p = { epoch = f[1], seq = tonumber(f[2]), status = f[6] or '' }
          if f[3] then
            p.first = tonumber(f[3])
            if f[4] then p.kind, p.json = 'event', f[4]
            elseif f[5] then p.kind, p.json = 'scene', f[5]
            else p.kind, p.json = 'defaults', '' end
          else
            -- Recorded before the base was kept: the oldest stored event stands as the base.
            local oldest = redis.call('XRANGE', events, '-', '+', 'COUNT', 1)[1]
            if oldest then
              p.first = tonumber(string.match(oldest[1], '^%d+')) + 1
              p.kind, p.json, p.status = 'event', field(oldest, 'e') or '', field(oldest, 's') or ''
            else
              p.first = p.seq + 1
              p.kind, p.json, p.status = 'scene', f[7] or '', ''
            end
          end
          local newest = p.seq - limit + 1
          if newest > p.first then
            local before = redis.call('XRANGE', events, tostring(newest - 1), tostring(newest - 1), 'COUNT', 1)[1]
            if before then
              p.first = newest
              p.kind, p.json, p.status = 'event', field(before, 'e') or '', field(before, 's') or ''
            end
          end
          return p
        end

        """

    /// KEYS: room, events. ARGV: since, count, history limit.
    /// Returns nil, or {epoch, seq, first, entries}.
    static let historyScript = pastFunction + """
        local p = past(KEYS[1], KEYS[2], tonumber(ARGV[3]))
        if not p then return false end
        local from = math.max(tonumber(ARGV[1]) + 1, p.first)
        local entries = {}
        if from <= p.seq and tonumber(ARGV[2]) > 0 then
          entries = redis.call('XRANGE', KEYS[2], tostring(from), tostring(p.seq), 'COUNT', ARGV[2])
        end
        return { p.epoch, tostring(p.seq), tostring(p.first), entries }
        """

    /// KEYS: room, events. ARGV: seq, history limit. Returns nil, {'beyond', seq},
    /// {'gone', first}, {'missing', first} or {'found', epoch, kind, json, label}.
    static let pastStateScript = pastFunction + """
        local p = past(KEYS[1], KEYS[2], tonumber(ARGV[2]))
        if not p then return false end
        local at = tonumber(ARGV[1])
        if at > p.seq then return { 'beyond', tostring(p.seq) } end
        if at < p.first - 1 then return { 'gone', tostring(p.first) } end
        if at == p.first - 1 then return { 'found', p.epoch, p.kind, p.json, p.status } end
        local entry = redis.call('XRANGE', KEYS[2], ARGV[1], ARGV[1], 'COUNT', 1)[1]
        if not entry then return { 'missing', tostring(p.first) } end
        return { 'found', p.epoch, 'event', field(entry, 'e') or '', field(entry, 's') or '' }
        """

    public func history(ofRoom name: String, after since: UInt64, limit: Int) throws(StoreError) -> HistoryPage? {
        let reply = try reads.evaluate(Self.historyScript, keys: [Self.roomKey(name), Self.eventsKey(name)],
                                       arguments: [String(since), String(max(0, limit)), String(max(0, historyLimit))],
                                       replicaAcks: replicaAcks)
        if case .null = reply { return nil }
        let parts = reply.elements
        guard parts.count == 4, let epoch = parts[0].text,
              let seq = parts[1].text.flatMap(UInt64.init), let first = parts[2].text.flatMap(UInt64.init) else {
            throw StoreError(.damaged, "room \(name) in Redis is damaged (its history reads as \(reply))")
        }
        var events: [StoredEvent] = []
        for entry in parts[3].elements {
            guard let event = Self.storedEvent(entry) else {
                throw StoreError(.damaged, "room \(name) in Redis is damaged (an entry of happy:events:\(name) is unreadable)")
            }
            events.append(event)
        }
        return HistoryPage(epoch: epoch, seq: seq, first: first, events: events)
    }

    public func pastState(ofRoom name: String, at seq: UInt64) throws(StoreError) -> PastStateLookup {
        let reply = try reads.evaluate(Self.pastStateScript, keys: [Self.roomKey(name), Self.eventsKey(name)],
                                       arguments: [String(seq), String(max(0, historyLimit))], replicaAcks: replicaAcks)
        if case .null = reply { return .unknownRoom }
        let parts = reply.elements
        let damaged = StoreError(.damaged, "room \(name) in Redis is damaged (its state at \(seq) reads as \(reply))")
        switch parts.first?.text {
        case "beyond":
            guard parts.count == 2, let current = parts[1].text.flatMap(UInt64.init) else { throw damaged }
            return .beyond(current: current)
        case "gone":
            guard parts.count == 2, let first = parts[1].text.flatMap(UInt64.init) else { throw damaged }
            return .gone(first: first)
        case "missing":
            throw StoreError(.damaged, "room \(name) in Redis is damaged (event \(seq) is missing from happy:events:\(name))")
        case "found":
            guard parts.count == 5, let epoch = parts[1].text, case .bulk(let json) = parts[3] else { throw damaged }
            let scene: Scene?
            switch parts[2].text {
            case "event": scene = MemoryRoomStore.scene(in: json)
            case "scene": scene = (try? JSONParser.parse(json)).flatMap(Scene.init(json:))
            default: scene = defaults
            }
            guard let scene else {
                throw StoreError(.damaged, "room \(name) in Redis is damaged (its state at \(seq) is unreadable)")
            }
            return .found(PastState(epoch: epoch, seq: seq, scene: scene, dragonStatus: parts[4].text ?? ""))
        default:
            throw damaged
        }
    }
}
