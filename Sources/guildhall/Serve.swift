// `guildhall serve`: run the server until SIGTERM or SIGINT.

import ArgumentParser
import Foundation
import GuildhallServer

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Guildhall server.",
        discussion: """
        Settings come from the defaults, then --config FILE, then GUILDHALL_* environment \
        variables, then flags (--data, --listen, --set KEY=VALUE). --print-config shows every \
        setting with its meaning and the value it would use.
        """)

    @OptionGroup var settingsOptions: SettingsOptions

    @Option(name: .long, help: "Client listener, HOST:PORT (default 127.0.0.1:7400; port 0 picks one).")
    var listen: String?

    @Flag(name: .long, help: "Print the resolved configuration, annotated, and exit.")
    var printConfig = false

    @Flag(name: .long, help: "Print every setting as a Markdown reference (docs/configuration.md) and exit.")
    var printConfigReference = false

    func run() throws {
        if printConfigReference {
            print(Settings.reference(), terminator: "")
            return
        }
        let settings = try settingsOptions.resolve(listen: listen)
        if printConfig {
            print(settings.annotatedConfig(), terminator: "")
            return
        }
        let rc = try ServeMain.run(settings: settings, reload: { try settingsOptions.resolve(listen: listen) }) { port, webSocketPort in
            let host = settings.listen.split(separator: ":").dropLast().joined(separator: ":")
            print("guildhall listening on \(host):\(port)")
            if webSocketPort > 0 {
                let wsHost = settings.wsListen.split(separator: ":").dropLast().joined(separator: ":")
                let page = settings.webClient == "on" ? ", web client at http://\(wsHost):\(webSocketPort)/" : ""
                print("websocket listening on \(wsHost):\(webSocketPort) (upgrade at /ws\(page))")
            }
            fflush(nil)
        }
        if rc != 0 { throw ExitCode(3) }
    }
}
