// directus-bridge: the command-line entry point. Everything else lives in BridgeApp.
#if canImport(Glibc)
import Glibc
#endif
import BridgeApp

let code = await BridgeApplication.main(arguments: Array(CommandLine.arguments.dropFirst()))
exit(code.rawValue)
