import HappyClientKit

/// The exit codes of `happyclient` (documented in `--help` and docs/happyclient.md),
/// from BSD's sysexits where one fits.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    case success = 0
    /// The command line was wrong (EX_USAGE).
    case usage = 64
    /// The server refused: an error answer or a close code (EX_DATAERR).
    case refused = 65
    /// The server could not be reached (EX_UNAVAILABLE).
    case cannotConnect = 69
    /// The output file could not be written (EX_CANTCREAT).
    case cannotWrite = 73
    /// No answer within `--timeout` (EX_TEMPFAIL).
    case timeout = 75

    /// The exit code for a session failure.
    public init(_ error: SessionError) {
        switch error {
        case .refused, .closed, .removed: self = .refused
        case .cannotConnect, .connectionLost, .stopped, .cancelled: self = .cannotConnect
        case .invalidURL: self = .usage
        case .timeout: self = .timeout
        }
    }

    /// The lines of the help text that list the codes.
    static let helpLines = """
          0   success
          64  usage error: the command line is wrong (nothing was sent)
          65  refused by the server: an error answer (its code and message), a
              close such as 1008 (bad room, name or token) or 1013 (server full),
              or removed by an operator (4003 kicked, 4004 room deleted)
          69  cannot connect: the message names the URL and the reason
          73  the output file (frame --out) could not be written
          75  timeout: no answer within --timeout seconds
        """
}
