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
        let rc = try ServeMain.run(settings: settings, reload: { try settingsOptions.resolve(listen: listen) }) { port, webSocketPort, adminPort in
            let host = { (listen: String) in listen.split(separator: ":").dropLast().joined(separator: ":") }
            print("guildhall listening on \(host(settings.listen)):\(port)")
            // With admin-listen on port 0 (as tests start it), this line is how a caller learns the port.
            if adminPort > 0 { print("admin listening on \(host(settings.adminListen)):\(adminPort)") }
            if webSocketPort > 0 {
                let page = settings.webClient == "on" ? ", web client at http://\(host(settings.wsListen)):\(webSocketPort)/" : ""
                print("websocket listening on \(host(settings.wsListen)):\(webSocketPort) (upgrade at /ws\(page))")
            }
            fflush(nil)
        }
        if rc != 0 { throw ExitCode(3) }
    }
}
