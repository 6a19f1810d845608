// `guildhall health`: exits 0 when a server answers on its client port.
// It sends a login with no token and expects the server's 401: that proves
// the loop is accepting, reading and answering, not merely that a port is open.

import ArgumentParser
import GuildhallClient

struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that a Guildhall server answers (for container health checks).")

    @Option(name: .long, help: "Server address, HOST:PORT.")
    var server = "127.0.0.1:7400"

    @Option(name: .long, help: "Admin endpoint, HOST:PORT: ask its /healthz instead of logging in.")
    var admin: String?

    @OptionGroup var https: AdminTLS

    func run() async throws {
        if let admin {
            let (status, text) = (try? await https.request("GET", admin, "/healthz", token: nil)) ?? (0, "no answer")
            print(status == 200 ? "healthy: \(admin) /healthz answered" : "unhealthy: \(status) \(text)")
            if status != 200 { throw ExitCode(1) }
            return
        }
        guard let colon = server.lastIndex(of: ":"), let port = Int(server[server.index(after: colon)...]) else {
            throw ValidationError("--server must be HOST:PORT")
        }
        var options = ClientOptions(token: "")
        options.autoReconnect = false
        options.connectTimeoutMs = 2_000
        if https.isOn { options.tls = ClientTLS(caFile: https.caFile) }
        let client = GuildhallClient(host: String(server[..<colon]), port: port, options: options)
        defer { client.close() }
        do {
            try await client.connect()
        } catch let e as GuildhallError where e.code == .unauthenticated {
            print("healthy: \(server) answered")
            return
        } catch {
            print("unhealthy: \(error)")
            throw ExitCode(1)
        }
        print("unhealthy: an empty token was accepted")
        throw ExitCode(1)
    }
}
