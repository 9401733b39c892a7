import HappyCore

extension HappyServer {
    /// SIGHUP: reads the configuration again. What can change while running
    /// applies to what happens next, nobody is dropped; what cannot change
    /// (where it listens, its files, its store) keeps its value and is named
    /// in the log; a configuration that does not parse is refused whole.
    func reload() {
        guard let readConfiguration else {
            return logger.warn("reload asked for, but this server was given no configuration file to read again")
        }
        SystemdNotify.send("RELOADING=1")
        defer { SystemdNotify.send("READY=1") }
        let read: HappyConfig
        switch readConfiguration() {
        case .failure(let error):
            return logger.error("configuration not reloaded; the running one stays", ["why": error.message])
        case .success(let config):
            read = config
        }
        let old = config
        let fixed = Self.fixedKeysChanged(from: old, to: read)
        let next = Self.keepingFixedKeys(of: old, in: read)
        for key in fixed {
            logger.warn("\(key) cannot change while the server runs; it keeps its old value until a restart or an upgrade",
                        ["key": key])
        }
        apply(next)
        if next.limits.maxClients > old.limits.maxClients, descriptorLimit > 0,
           next.limits.descriptorsNeeded > descriptorLimit {
            logger.warn("limits.maxClients \(next.limits.maxClients) wants about \(next.limits.descriptorsNeeded) "
                + "descriptors, but this process was started with \(descriptorLimit); restart or upgrade it "
                + "to take up more (and raise LimitNOFILE if that is the cap)", ["key": "limits.maxClients"])
        }
        logger.lifecycle("configuration reloaded", ["unchanged": fixed.isEmpty ? "none" : fixed.joined(separator: ",")])
        for warning in ExposureWarnings.check(next) { logger.warn(warning) }
    }

    /// Hands `next` to every component that reads settings at run time.
    private func apply(_ next: HappyConfig) {
        config = next
        logger.setLevel(LogLevel(name: next.log.level) ?? .info)
        access.reconfigure(next.auth)
        admission.reconfigure(next.limits)
        addressLimits.reconfigure(cap: next.limits.maxConnectionsPerAddress, trustedProxies: next.proxies)
        reconfigureWebhooks(next)
        http.reconfigure(next)
        gate.reconfigure(next.limits)
        operatorGate.reconfigure(OperatorRequestCheck(config: next))
        api.reconfigure(next)
        registry.reconfigure(next)
        broadcaster.reconfigure(PresenceListing(config: next))
        directory.reconfigure(next)
        frames.reconfigure(next)
        streams.reconfigure(next)
        pointers.reconfigure(next.limits)
        crowd.reconfigure(next.crowd, presenceBroadcastMax: next.limits.presenceBroadcastMax)
        votes.reconfigure(next.crowd)
    }

    /// The keys a running server cannot take up: where it listens, what it
    /// serves, where and how it stores, the scene's rules and the cluster.
    static func fixedKeysChanged(from old: HappyConfig, to new: HappyConfig) -> [String] {
        var keys: [String] = []
        if old.host != new.host { keys.append("host") }
        if old.port != new.port { keys.append("port") }
        if old.webRoot != new.webRoot { keys.append("webRoot") }
        if old.dataDir != new.dataDir { keys.append("dataDir") }
        if old.defaultRoom != new.defaultRoom { keys.append("defaultRoom") }
        if old.scene != new.scene { keys.append("scene") }
        if old.tls != new.tls { keys.append("tls") }
        if old.compression != new.compression { keys.append("compression") }
        if old.conformance != new.conformance { keys.append("conformance") }
        if old.cluster != new.cluster { keys.append("cluster") }
        if old.persistence != new.persistence { keys.append("persistence") }
        if old.limits.historySize != new.limits.historySize { keys.append("limits.historySize") }
        if old.backup != new.backup { keys.append("backup") }
        if old.log.format != new.log.format { keys.append("log.format") }
        return keys
    }

    /// `new` with the fixed keys' values of `old`.
    static func keepingFixedKeys(of old: HappyConfig, in new: HappyConfig) -> HappyConfig {
        var kept = new
        kept.host = old.host
        kept.port = old.port
        kept.webRoot = old.webRoot
        kept.dataDir = old.dataDir
        kept.defaultRoom = old.defaultRoom
        kept.scene = old.scene
        kept.tls = old.tls
        kept.compression = old.compression
        kept.conformance = old.conformance
        kept.cluster = old.cluster
        kept.persistence = old.persistence
        kept.limits.historySize = old.limits.historySize
        kept.backup = old.backup
        kept.log.format = old.log.format
        return kept
    }
}
