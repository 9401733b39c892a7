import HappyCore
import HappyLWS

extension LWSServerDescription {
    /// The server's context and vhost: the WebSocket protocol, the router's
    /// mount points, files from `webRoot` (`/js/` readable from other origins
    /// as `auth.allowedOrigins` says), compression and TLS as configured.
    /// `crossOrigin`: the policy as it stands when each file is asked for.
    init(config: HappyConfig, webRoot: String, mountPoints: [String], crossOrigin: CurrentCrossOriginPolicy,
         debugLogging: Bool) {
        let batch = Broadcaster.writeBatchBytes
        let security = SecurityHeaders(tls: config.tls.isEnabled)
        self.init(
            host: config.host, port: config.port, vhostName: "happy",
            protocols: [LWSProtocol(name: "happy.v1", id: 0, rxBufferSize: 256, txPacketSize: batch),
                        LWSProtocol(name: "happy-http", id: 1, rxBufferSize: 0, txPacketSize: batch)],
            callbackMounts: mountPoints.map { ($0, "happy-http") },
            fileMount: ("/", webRoot, "index.html"),
            fileHeaders: LWSFileHeaders(protocolName: "happy-http", headers: { [crossOrigin, security] path, origin in
                security.file(path: path) + crossOrigin.policy.fileHeaders(path: path, origin: origin)
            }),
            permessageDeflate: config.compression,
            tls: config.tls.isEnabled ? (config.tls.cert, config.tls.key) : nil,
            requestTimeoutSeconds: UInt32(HTTPIntake.requestTimeoutSeconds),
            logLevel: debugLogging ? [.errors, .warnings] : .errors)
    }
}
