/// One header line of a request or an answer.
public struct HTTPHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Which servers an https request trusts. The default is the system's store
/// (Debian's /etc/ssl/certs), checked as a browser checks it.
public struct TLSTrust: Sendable, Equatable {
    /// A PEM file of CA certificates, trusted besides the system's directory of them.
    public var caFile: String?
    /// A directory of hashed CA certificates (`c_rehash`), instead of the system's.
    public var caDirectory: String?
    /// Whether the certificate's chain must lead to a trusted CA.
    public var verifyPeer: Bool
    /// Whether the certificate must name the host of the URL.
    public var verifyHost: Bool

    public init(caFile: String? = nil, caDirectory: String? = nil, verifyPeer: Bool = true, verifyHost: Bool = true) {
        self.caFile = caFile
        self.caDirectory = caDirectory
        self.verifyPeer = verifyPeer
        self.verifyHost = verifyHost
    }

    /// The system's store.
    public static let system = TLSTrust()

    /// The system's store plus the file and directory that `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` name, as OpenSSL's own tools read them (libcurl does not).
    public static func fromEnvironment(_ environment: [String: String]) -> TLSTrust {
        TLSTrust(caFile: environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 },
                 caDirectory: environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 })
    }
}

/// An outgoing HTTP request: what `HTTPClient.perform` sends, and how long it may take.
public struct HTTPClientRequest: Sendable, Equatable {
    public var method: String
    /// `http://` or `https://` only.
    public var url: String
    public var headers: [HTTPHeader]
    public var body: [UInt8]
    /// Seconds the whole exchange may take, connecting included.
    public var timeout: Double
    public var trust: TLSTrust
    /// A larger answer body fails with `answerTooLarge` rather than filling memory.
    public var maxResponseBytes: Int

    public init(method: String = "GET", url: String, headers: [HTTPHeader] = [], body: [UInt8] = [],
                timeout: Double, trust: TLSTrust = .system, maxResponseBytes: Int = 64 << 20) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.trust = trust
        self.maxResponseBytes = maxResponseBytes
    }
}

/// An HTTP answer, whatever its status.
public struct HTTPClientResponse: Sendable, Equatable {
    public var status: Int
    /// The headers of the final answer (not of a `100 Continue`), names as the server spelled them.
    public var headers: [HTTPHeader]
    public var body: [UInt8]

    public init(status: Int, headers: [HTTPHeader], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first header of that name, in any case.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
