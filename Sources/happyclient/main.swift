import Foundation
import HappyClientCLI

exit(HappyClient.run(arguments: Array(CommandLine.arguments.dropFirst()),
                     environment: ProcessInfo.processInfo.environment))
