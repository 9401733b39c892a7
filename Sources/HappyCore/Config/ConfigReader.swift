extension HappyConfig {
    /// Parses the text of a `config.json` and validates it. `source` names the
    /// file in error messages.
    public static func parse(_ text: String, source: String = "config.json") throws(ConfigError) -> HappyConfig {
        let json: JSONValue
        do {
            json = try JSONParser.parse(text)
        } catch {
            throw ConfigError("\(source): not valid JSON (\(error))")
        }
        var reader = ConfigReader(source: source)
        var config = HappyConfig()
        try reader.read(json, into: &config)
        try config.validate(source: source)
        return config
    }

    /// Checks ranges and relations between keys.
    public func validate(source: String = "config.json") throws(ConfigError) {
        func fail(_ key: String, _ rule: String) -> ConfigError {
            ConfigError("\(source): \(key) \(rule)", key: key)
        }
        guard !host.isEmpty else { throw fail("host", "must not be empty") }
        guard (0...65535).contains(port) else { throw fail("port", "must be between 0 and 65535 (0 picks a free port)") }
        guard !webRoot.isEmpty else { throw fail("webRoot", "must not be empty") }
        guard !dataDir.isEmpty else { throw fail("dataDir", "must not be empty") }
        guard Names.isValidRoom(defaultRoom) else { throw fail("defaultRoom", "must be 1-64 characters of A-Z a-z 0-9 _ -") }
        for entry in trustedProxies where IPAddress(entry) == nil {
            throw fail("trustedProxies", "entry \"\(entry)\" is not an IP address: list each proxy's address as the "
                       + "server sees it, such as \"127.0.0.1\" or \"::1\" (no host names, ports or ranges)")
        }

        guard (0...100).contains(scene.happiness) else { throw fail("scene.happiness", "must be between 0 and 100") }
        guard scene.scaleMin > 0 else { throw fail("scene.scaleMin", "must be greater than 0") }
        guard scene.scaleMax >= scene.scaleMin else { throw fail("scene.scaleMax", "must not be below scene.scaleMin") }
        guard (scene.scaleMin...scene.scaleMax).contains(scene.scale) else {
            throw fail("scene.scale", "must be between scene.scaleMin and scene.scaleMax")
        }
        guard (0...1).contains(scene.rate) else { throw fail("scene.rate", "must be between 0 and 1") }
        guard RGBColor(hex: scene.fillColor) != nil else { throw fail("scene.fillColor", "must be a colour like \"#ff0000\"") }
        guard RGBColor(hex: scene.strokeColor) != nil else { throw fail("scene.strokeColor", "must be a colour like \"#000000\"") }
        guard (0...20).contains(scene.lineWidth) else { throw fail("scene.lineWidth", "must be between 0 and 20") }
        guard scene.width > 0 else { throw fail("scene.width", "must be greater than 0") }
        guard scene.height > 0 else { throw fail("scene.height", "must be greater than 0") }
        guard scene.dragonSize > 0, scene.dragonSize <= scene.width else {
            throw fail("scene.dragonSize", "must be greater than 0 and at most scene.width")
        }
        guard scene.step > 0 else { throw fail("scene.step", "must be greater than 0") }

        guard limits.maxClients >= 1 else { throw fail("limits.maxClients", "must be at least 1") }
        guard limits.maxRooms >= 1 else { throw fail("limits.maxRooms", "must be at least 1") }
        guard (64...16_777_216).contains(limits.maxMessageBytes) else {
            throw fail("limits.maxMessageBytes", "must be between 64 and 16777216")
        }
        guard limits.intentsPerSecond > 0 else { throw fail("limits.intentsPerSecond", "must be greater than 0") }
        guard limits.intentBurst >= 1 else { throw fail("limits.intentBurst", "must be at least 1") }
        guard limits.floodLimit >= 1 else { throw fail("limits.floodLimit", "must be at least 1") }
        guard limits.maxQueuedBytes >= 1024 else { throw fail("limits.maxQueuedBytes", "must be at least 1024") }
        guard limits.writeTimeoutSeconds > 0 else { throw fail("limits.writeTimeoutSeconds", "must be greater than 0") }
        guard limits.pingIntervalSeconds > 0 else { throw fail("limits.pingIntervalSeconds", "must be greater than 0") }
        guard limits.pingTimeoutSeconds > 0 else { throw fail("limits.pingTimeoutSeconds", "must be greater than 0") }
        guard limits.historySize >= 0 else { throw fail("limits.historySize", "must not be negative") }
        guard limits.presenceBroadcastMax >= 0 else { throw fail("limits.presenceBroadcastMax", "must not be negative") }
        guard limits.maxConnectionsPerAddress >= 0 else {
            throw fail("limits.maxConnectionsPerAddress", "must not be negative (0 means no cap)")
        }
        guard limits.pointersPerSecond > 0 else { throw fail("limits.pointersPerSecond", "must be greater than 0") }
        guard (1...60_000).contains(limits.pointerIntervalMs) else {
            throw fail("limits.pointerIntervalMs", "must be between 1 and 60000")
        }
        guard limits.maxPointersPerBatch >= 1 else { throw fail("limits.maxPointersPerBatch", "must be at least 1") }
        guard limits.httpPerSecond > 0 else { throw fail("limits.httpPerSecond", "must be greater than 0") }
        guard limits.httpBurst >= 1 else { throw fail("limits.httpBurst", "must be at least 1") }
        guard limits.roomsPerAddress >= 1 else { throw fail("limits.roomsPerAddress", "must be at least 1 (new rooms a minute)") }
        guard limits.streamsPerAddress >= 1 else { throw fail("limits.streamsPerAddress", "must be at least 1") }
        for name in publicHosts where !HostName.isValid(name) {
            throw fail("publicHosts", "entry \"\(name)\" is not a host name: list names such as \"happy.example.com\" "
                       + "(no scheme, port or path)")
        }
        guard persistence.historyLimit >= 0 else { throw fail("persistence.historyLimit", "must not be negative") }

        guard tls.cert.isEmpty == tls.key.isEmpty else { throw fail("tls", "needs both cert and key, or neither") }
        if !cluster.redis.isEmpty, RedisTarget(cluster.redis) == nil {
            throw fail("cluster.redis", "must look like redis://[:password@]host:port/db or "
                       + "redis+sentinel://[:password@]host:port,host:port,.../master[/db]")
        }
        if let acks = cluster.minReplicaAcks {
            guard (0...16).contains(acks) else {
                throw fail("cluster.minReplicaAcks", "must be between 0 and 16 (replicas that confirm a commit before its ack)")
            }
            guard acks == 0 || !cluster.redis.isEmpty else {
                throw fail("cluster.minReplicaAcks", "needs cluster.redis (replica acks only apply to Redis)")
            }
        }
        guard (10...1000).contains(crowd.tickMs) else { throw fail("crowd.tickMs", "must be between 10 and 1000") }
        guard crowd.tickAbove >= 1 else { throw fail("crowd.tickAbove", "must be at least 1") }
        guard crowd.presenceBatchAbove >= 0 else { throw fail("crowd.presenceBatchAbove", "must not be negative") }
        guard crowd.tickWritesPerSecond == 0 || crowd.tickWritesPerSecond >= 1000 else {
            throw fail("crowd.tickWritesPerSecond", "must be 0 (ticks always crowd.tickMs apart) or at least 1000")
        }
        for (index, webhook) in webhooks.enumerated() {
            let key = "webhooks[\(index)]"
            guard webhook.url.hasPrefix("http://") || webhook.url.hasPrefix("https://"), webhook.url.count > 8 else {
                throw fail("\(key).url", "must be an http:// or https:// URL, got \"\(webhook.url)\"")
            }
            guard !webhook.events.isEmpty else { throw fail("\(key).events", "must list at least one delivery type") }
            guard !webhook.secret.isEmpty else {
                throw fail("\(key).secret", "must not be empty: it signs every batch (X-Happy-Signature)")
            }
        }
        // The URL is the webhook's identity (its queue): one receiver is one entry.
        var firstWithURL: [String: Int] = [:]
        for (index, webhook) in webhooks.enumerated() {
            if let first = firstWithURL[webhook.url] {
                throw fail("webhooks[\(index)].url", "repeats webhooks[\(first)].url: list both entries' events in one")
            }
            firstWithURL[webhook.url] = index
        }
        guard webhookQueueMax >= 1 else { throw fail("webhookQueueMax", "must be at least 1") }
        guard backup.everySeconds >= 0 else { throw fail("backup.everySeconds", "must not be negative (0: no periodic backups)") }
        guard backup.everySeconds == 0 || !backup.dir.isEmpty else {
            throw fail("backup.everySeconds", "needs backup.dir (the folder the copies go to)")
        }
        guard backup.keep >= 1 else { throw fail("backup.keep", "must be at least 1") }
        guard ["debug", "info", "warn", "error"].contains(log.level) else {
            throw fail("log.level", "must be one of debug, info, warn, error")
        }
        guard ["text", "json"].contains(log.format) else { throw fail("log.format", "must be \"text\" or \"json\"") }
    }
}

/// Reads JSON into a `HappyConfig`, refusing unknown keys and wrong types.
struct ConfigReader {
    let source: String

    mutating func read(_ json: JSONValue, into config: inout HappyConfig) throws(ConfigError) {
        let root = try members(json, path: "")
        for (key, value) in root {
            switch key {
            case "host": config.host = try string(value, key)
            case "port": config.port = try integer(value, key)
            case "webRoot": config.webRoot = try string(value, key)
            case "dataDir": config.dataDir = try string(value, key)
            case "defaultRoom": config.defaultRoom = try string(value, key)
            case "compression": config.compression = try bool(value, key)
            case "trustedProxies": config.trustedProxies = try strings(value, key)
            case "publicHosts": config.publicHosts = try strings(value, key)
            case "scene": try readScene(value, into: &config.scene)
            case "limits": try readLimits(value, into: &config.limits)
            case "persistence":
                for (k, v) in try members(value, path: "persistence") {
                    let name = "persistence.\(k)"
                    switch k {
                    case "enabled": config.persistence.enabled = try bool(v, name)
                    case "fsync": config.persistence.fsync = try bool(v, name)
                    case "historyLimit": config.persistence.historyLimit = try integer(v, name)
                    default: throw unknown(name)
                    }
                }
            case "auth":
                for (k, v) in try members(value, path: "auth") {
                    let name = "auth.\(k)"
                    switch k {
                    case "secret": config.auth.secret = try string(v, name)
                    case "allowedOrigins": config.auth.allowedOrigins = try strings(v, name)
                    case "audience": config.auth.audience = try string(v, name)
                    case "issuer": config.auth.issuer = try string(v, name)
                    default: throw unknown(name)
                    }
                }
            case "tls":
                for (k, v) in try members(value, path: "tls") {
                    let name = "tls.\(k)"
                    switch k {
                    case "cert": config.tls.cert = try string(v, name)
                    case "key": config.tls.key = try string(v, name)
                    default: throw unknown(name)
                    }
                }
            case "conformance":
                for (k, v) in try members(value, path: "conformance") {
                    let name = "conformance.\(k)"
                    switch k {
                    case "echo": config.conformance.echo = try bool(v, name)
                    default: throw unknown(name)
                    }
                }
            case "cluster":
                for (k, v) in try members(value, path: "cluster") {
                    let name = "cluster.\(k)"
                    switch k {
                    case "redis": config.cluster.redis = try string(v, name)
                    case "allowNonDurableRedis": config.cluster.allowNonDurableRedis = try bool(v, name)
                    case "minReplicaAcks": config.cluster.minReplicaAcks = try integer(v, name)
                    default: throw unknown(name)
                    }
                }
            case "crowd":
                for (k, v) in try members(value, path: "crowd") {
                    let name = "crowd.\(k)"
                    switch k {
                    case "mode": config.crowd.mode = try choice(v, name, of: HappyConfig.CrowdSection.Mode.self)
                    case "tickMs": config.crowd.tickMs = try integer(v, name)
                    case "tickAbove": config.crowd.tickAbove = try integer(v, name)
                    case "presenceBatchAbove": config.crowd.presenceBatchAbove = try integer(v, name)
                    case "dragon": config.crowd.dragon = try choice(v, name, of: HappyConfig.CrowdSection.DragonMode.self)
                    case "tickWritesPerSecond": config.crowd.tickWritesPerSecond = try integer(v, name)
                    default: throw unknown(name)
                    }
                }
            case "webhooks":
                guard case .array(let list) = value else { throw wrongType("webhooks", "a list of objects", value) }
                config.webhooks = []
                for (index, entry) in list.enumerated() { config.webhooks.append(try readWebhook(entry, index: index)) }
            case "webhookQueueMax": config.webhookQueueMax = try integer(value, key)
            case "backup":
                for (k, v) in try members(value, path: "backup") {
                    let name = "backup.\(k)"
                    switch k {
                    case "dir": config.backup.dir = try string(v, name)
                    case "everySeconds": config.backup.everySeconds = try integer(v, name)
                    case "keep": config.backup.keep = try integer(v, name)
                    default: throw unknown(name)
                    }
                }
            case "log":
                for (k, v) in try members(value, path: "log") {
                    let name = "log.\(k)"
                    switch k {
                    case "level": config.log.level = try string(v, name)
                    case "format": config.log.format = try string(v, name)
                    default: throw unknown(name)
                    }
                }
            default:
                throw unknown(key)
            }
        }
    }

    private func readWebhook(_ json: JSONValue, index: Int) throws(ConfigError) -> HappyConfig.Webhook {
        var webhook = HappyConfig.Webhook(url: "", events: [], secret: "")
        for (k, v) in try members(json, path: "webhooks[\(index)]") {
            let name = "webhooks[\(index)].\(k)"
            switch k {
            case "url": webhook.url = try string(v, name)
            case "secret": webhook.secret = try string(v, name)
            case "events":
                let names = WebhookEventType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                guard case .array(let items) = v else { throw wrongType(name, "a list of \(names)", v) }
                webhook.events = []
                for item in items { webhook.events.append(try choice(item, name, of: WebhookEventType.self)) }
            default: throw unknown(name)
            }
        }
        return webhook
    }

    private func readScene(_ json: JSONValue, into s: inout HappyConfig.SceneSection) throws(ConfigError) {
        for (k, v) in try members(json, path: "scene") {
            let name = "scene.\(k)"
            switch k {
            case "happiness": s.happiness = try integer(v, name)
            case "scale": s.scale = try number(v, name)
            case "scaleMin": s.scaleMin = try number(v, name)
            case "scaleMax": s.scaleMax = try number(v, name)
            case "rate": s.rate = try number(v, name)
            case "fillColor": s.fillColor = try string(v, name)
            case "strokeColor": s.strokeColor = try string(v, name)
            case "lineWidth": s.lineWidth = try number(v, name)
            case "dragonX": s.dragonX = try number(v, name)
            case "dragonY": s.dragonY = try number(v, name)
            case "width": s.width = try number(v, name)
            case "height": s.height = try number(v, name)
            case "dragonSize": s.dragonSize = try number(v, name)
            case "step": s.step = try number(v, name)
            default: throw unknown(name)
            }
        }
    }

    private func readLimits(_ json: JSONValue, into l: inout HappyConfig.LimitsSection) throws(ConfigError) {
        for (k, v) in try members(json, path: "limits") {
            let name = "limits.\(k)"
            switch k {
            case "maxClients": l.maxClients = try integer(v, name)
            case "maxRooms": l.maxRooms = try integer(v, name)
            case "maxMessageBytes": l.maxMessageBytes = try integer(v, name)
            case "intentsPerSecond": l.intentsPerSecond = try number(v, name)
            case "intentBurst": l.intentBurst = try integer(v, name)
            case "floodLimit": l.floodLimit = try integer(v, name)
            case "maxQueuedBytes": l.maxQueuedBytes = try integer(v, name)
            case "writeTimeoutSeconds": l.writeTimeoutSeconds = try number(v, name)
            case "pingIntervalSeconds": l.pingIntervalSeconds = try number(v, name)
            case "pingTimeoutSeconds": l.pingTimeoutSeconds = try number(v, name)
            case "historySize": l.historySize = try integer(v, name)
            case "presenceBroadcastMax": l.presenceBroadcastMax = try integer(v, name)
            case "maxConnectionsPerAddress": l.maxConnectionsPerAddress = try integer(v, name)
            case "pointersPerSecond": l.pointersPerSecond = try number(v, name)
            case "pointerIntervalMs": l.pointerIntervalMs = try integer(v, name)
            case "maxPointersPerBatch": l.maxPointersPerBatch = try integer(v, name)
            case "httpPerSecond": l.httpPerSecond = try number(v, name)
            case "httpBurst": l.httpBurst = try integer(v, name)
            case "roomsPerAddress": l.roomsPerAddress = try integer(v, name)
            case "streamsPerAddress": l.streamsPerAddress = try integer(v, name)
            default: throw unknown(name)
            }
        }
    }

    // MARK: typed reads

    /// An unknown key, with the keys its section takes (read from `HappyConfig`'s structure) and
    /// the nearest of them.
    private func unknown(_ key: String) -> ConfigError {
        let section = key.lastIndex(of: ".").map { String(key[..<$0]) } ?? ""
        let name = key.lastIndex(of: ".").map { String(key[key.index(after: $0)...]) } ?? key
        let accepted = HappyConfig.keys(under: section)
        var text = "\(source): unknown key \"\(key)\""
        if let nearest = ConfigKeys.nearest(to: name, in: accepted) { text += " (did you mean \"\(nearest)\"?)" }
        if !accepted.isEmpty { text += "; \(section.isEmpty ? "the top level" : section) takes \(accepted.joined(separator: ", "))" }
        return ConfigError(text + " (see docs/configuration.md)", key: key)
    }

    private func wrongType(_ key: String, _ expected: String, _ value: JSONValue) -> ConfigError {
        ConfigError("\(source): \(key) must be \(expected), got \(value.kindName)", key: key)
    }

    private func members(_ json: JSONValue, path: String) throws(ConfigError) -> [(key: String, value: JSONValue)] {
        guard case .object(let members) = json else {
            throw ConfigError(path.isEmpty ? "\(source): the top level must be a JSON object"
                                           : "\(source): \(path) must be an object, got \(json.kindName)",
                              key: path.isEmpty ? nil : path)
        }
        var seen = Set<String>()
        for member in members where !seen.insert(member.key).inserted {
            let key = (path.isEmpty ? "" : path + ".") + member.key
            throw ConfigError("\(source): key \"\(key)\" appears twice", key: key)
        }
        return members
    }

    private func string(_ v: JSONValue, _ key: String) throws(ConfigError) -> String {
        guard let s = v.stringValue else { throw wrongType(key, "a string", v) }
        return s
    }

    private func bool(_ v: JSONValue, _ key: String) throws(ConfigError) -> Bool {
        guard let b = v.boolValue else { throw wrongType(key, "true or false", v) }
        return b
    }

    private func number(_ v: JSONValue, _ key: String) throws(ConfigError) -> Double {
        guard let d = v.doubleValue, d.isFinite else { throw wrongType(key, "a number", v) }
        return d
    }

    private func integer(_ v: JSONValue, _ key: String) throws(ConfigError) -> Int {
        guard let d = v.doubleValue, d.isFinite, d == d.rounded(), abs(d) < 9e15 else {
            throw wrongType(key, "an integer", v)
        }
        return Int(d)
    }

    /// One of an enum's raw values, or an error listing them.
    private func choice<Choice: RawRepresentable & CaseIterable>(_ v: JSONValue, _ key: String,
                                                                 of type: Choice.Type) throws(ConfigError) -> Choice
    where Choice.RawValue == String {
        let names = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let text = v.stringValue else { throw wrongType(key, "one of \(names)", v) }
        guard let value = Choice(rawValue: text) else {
            throw ConfigError("\(source): \(key) must be one of \(names), got \"\(text)\"", key: key)
        }
        return value
    }

    private func strings(_ v: JSONValue, _ key: String) throws(ConfigError) -> [String] {
        guard case .array(let list) = v else { throw wrongType(key, "a list of strings", v) }
        var out: [String] = []
        for item in list {
            guard let s = item.stringValue else { throw wrongType(key, "a list of strings", item) }
            out.append(s)
        }
        return out
    }
}
