import CTLS
import Foundation

/// OpenSSL's TLS client on a non-blocking socket: each call does what it can
/// and says which poll() events it waits for. The server's certificate must
/// be trusted by the system's store (`SSL_CERT_FILE` and `SSL_CERT_DIR` add
/// others) and name the host, as a browser checks it.
final class TLSSession {
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    private init(context: OpaquePointer, ssl: OpaquePointer) {
        self.context = context
        self.ssl = ssl
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    static func make(fd: Int32, host: String) -> Result<TLSSession, TLSSetupFailure> {
        guard let context = SSL_CTX_new(TLS_client_method()) else { return .failure(TLSSetupFailure(reason: "TLS: \(errorQueueText())")) }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_default_verify_paths(context)
        SSL_CTX_set_options(context, happy_tls_ignore_unexpected_eof)
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            return .failure(TLSSetupFailure(reason: "TLS: \(errorQueueText())"))
        }
        let session = TLSSession(context: context, ssl: ssl)
        SSL_set_fd(ssl, fd)
        if isAddress(host) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            happy_tls_set_server_name(ssl, host)
            SSL_set1_host(ssl, host)
        }
        return .success(session)
    }

    func handshake() -> IOResult {
        let result = SSL_connect(ssl)
        return result == 1 ? .done(0) : outcome(of: result, during: "handshake")
    }

    func write(_ bytes: UnsafeRawPointer, count: Int) -> IOResult {
        let result = withSIGPIPEBlocked { SSL_write(ssl, bytes, Int32(min(count, Int(Int32.max)))) }
        return result > 0 ? .done(Int(result)) : outcome(of: result, during: "write")
    }

    func read(_ buffer: UnsafeMutableRawPointer, count: Int) -> IOResult {
        let result = SSL_read(ssl, buffer, Int32(min(count, Int(Int32.max))))
        return result > 0 ? .done(Int(result)) : outcome(of: result, during: "read")
    }

    private func outcome(of result: Int32, during step: String) -> IOResult {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .wait(Int16(POLLIN))
        case SSL_ERROR_WANT_WRITE: return .wait(Int16(POLLOUT))
        case SSL_ERROR_ZERO_RETURN: return .end
        case SSL_ERROR_SYSCALL where errno == 0: return .end
        case SSL_ERROR_SYSCALL: return .failed("TLS \(step): \(String(cString: strerror(errno)))")
        default:
            let verified = SSL_get_verify_result(ssl)
            if verified != X509_V_OK {
                return .failed("TLS: the server's certificate is not trusted: "
                               + String(cString: X509_verify_cert_error_string(verified)))
            }
            return .failed("TLS \(step): \(Self.errorQueueText())")
        }
    }

    /// OpenSSL's oldest queued error, in its words; the queue is emptied.
    private static func errorQueueText() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "unknown error" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func isAddress(_ host: String) -> Bool {
        var storage = in6_addr()
        return inet_pton(AF_INET, host, &storage) == 1 || inet_pton(AF_INET6, host, &storage) == 1
    }
}

/// Why OpenSSL could not be set up for a connection.
struct TLSSetupFailure: Error {
    var reason: String
}

/// Runs `body` with SIGPIPE blocked on this thread and discards one it
/// raised: OpenSSL writes with write(), and a write to a connection the
/// server closed must fail rather than end the program.
private func withSIGPIPEBlocked<T>(_ body: () -> T) -> T {
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
    let result = body()
    var pending = sigset_t()
    sigpending(&pending)
    if sigismember(&pending, SIGPIPE) == 1 {
        var now = timespec()
        sigtimedwait(&pipeSignal, nil, &now)
    }
    pthread_sigmask(SIG_SETMASK, &previous, nil)
    return result
}
