// The settings an operator sets beyond file, environment and flags
// (docs/operating.md, "Configuration"): changes over the admin endpoint stay
// through a restart and a SIGHUP until dropped, and secrets come from files.

import Foundation
import Testing
@testable import GuildhallServer

@Suite struct SettingsLayersTests {
    func setting(_ key: String, port: Int, token: String = "op-secret") throws -> (value: String?, source: String?) {
        let table = try HTTPExchange.request("GET", "/settings", port: port, token: token).json
        let row = table[key] as? [String: Any]
        return (row?["value"] as? String, row?["source"] as? String)
    }

    /// PUT /settings is kept in the data folder: a restart keeps it (source
    /// admin); DELETE /settings/<key> brings back what the other layers say,
    /// and that too outlives a restart. A change that cannot be kept changes nothing.
    @Test func anAdminsChangeOutlivesARestartUntilDropped() async throws {
        let server = try TestServer {
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "op-secret"
            try $0.set("rate-typing", "3")
        }
        defer { server.stop() }
        let put = try HTTPExchange.request("PUT", "/settings", port: server.adminPort, token: "op-secret", body: #"{"rate-typing": 9}"#)
        #expect(put.status == 200, "\(put)")
        #expect(try setting("rate-typing", port: server.adminPort) == ("9", "admin"))
        let kept = try String(contentsOfFile: server.folder + "/admin-settings.json", encoding: .utf8)
        #expect(kept.contains("\"rate-typing\"") && kept.contains("\"9\""))

        try server.restart()
        #expect(try setting("rate-typing", port: server.adminPort) == ("9", "admin"), "a restart keeps it")
        let (alice, _) = try await server.client("alice")
        #expect(try await alice.connect().limits.rateTyping == 9, "and the sessions are held to it")

        let dropped = try HTTPExchange.request("DELETE", "/settings/rate-typing", port: server.adminPort, token: "op-secret")
        #expect(dropped.status == 200 && dropped.json["value"] as? String == "3", "\(dropped)")
        #expect(try setting("rate-typing", port: server.adminPort).value == "3")
        #expect(try HTTPExchange.request("DELETE", "/settings/rate-typing", port: server.adminPort, token: "op-secret").status == 404,
                "no override left to drop")
        #expect(try HTTPExchange.request("DELETE", "/settings/no-such-key", port: server.adminPort, token: "op-secret").status == 404)
        try server.restart()
        #expect(try setting("rate-typing", port: server.adminPort) .value == "3", "dropped for good")

        // The override file cannot be written (its temporary name is taken by a folder): 503, nothing changed.
        try FileManager.default.createDirectory(atPath: server.folder + "/admin-settings.json.tmp", withIntermediateDirectories: false)
        let refused = try HTTPExchange.request("PUT", "/settings", port: server.adminPort, token: "op-secret", body: #"{"rate-typing": 11}"#)
        #expect(refused.status == 503 && refused.body.contains("nothing was changed"), "\(refused)")
        #expect(try setting("rate-typing", port: server.adminPort).value == "3")
    }

    /// A SIGHUP re-reads the configuration file and keeps the admin's overrides on top of it.
    @Test func aSIGHUPKeepsTheAdminsOverrides() async throws {
        let folder = NSTemporaryDirectory() + "guildhall-layers-\(UUID().uuidString)"
        let config = folder + ".conf"
        defer { try? FileManager.default.removeItem(atPath: folder); try? FileManager.default.removeItem(atPath: config) }
        try "small-server-threshold = 2000\nunread-display-cap = 99\n".write(toFile: config, atomically: true, encoding: .utf8)
        let admin = try NATSServer.freePort()
        let server = try await ServerProcess(folder: folder, arguments: ["--config", config, "--set", "admin-listen=127.0.0.1:\(admin)",
                                                                         "--set", "admin-token=op-secret"])
        defer { server.signal(SIGTERM); _ = server.wait() }
        #expect(try HTTPExchange.request("PUT", "/settings", port: admin, token: "op-secret", body: #"{"small-server-threshold": 5}"#).status == 200)
        try "small-server-threshold = 3000\nunread-display-cap = 50\n".write(toFile: config, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        try await waitUntil("the SIGHUP applied (unread-display-cap from the file)") { try setting("unread-display-cap", port: admin) == ("50", "file") }
        #expect(try setting("small-server-threshold", port: admin) == ("5", "admin"))
    }

    /// secret-file and admin-token-file: container secrets, read with their trailing newline dropped.
    @Test func secretsComeFromFiles() async throws {
        let files = NSTemporaryDirectory() + "guildhall-secrets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: files) }
        try (testSecret + "\n").write(toFile: files + "/secret", atomically: true, encoding: .utf8)
        try "from-a-file\n".write(toFile: files + "/admin", atomically: true, encoding: .utf8)
        let server = try TestServer {
            $0.secret = ""
            $0.secretFile = files + "/secret"
            $0.adminListen = "127.0.0.1:0"
            $0.adminTokenFile = files + "/admin"
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        #expect(try await alice.connect().userID == "alice", "a token signed with the file's secret logs in")
        #expect(try HTTPExchange.request("GET", "/settings", port: server.adminPort, token: "from-a-file").status == 200)
        #expect(try HTTPExchange.request("GET", "/settings", port: server.adminPort, token: "from-another-file").status == 401)
        #expect(try setting("admin-token", port: server.adminPort, token: "from-a-file") == ("(set)", "admin-token-file"))

        // Both forms of one secret, or a file that is not there: the server does not start, and says why.
        #expect(throws: SettingsError.self) { _ = try TestServer { $0.secretFile = files + "/secret" } }
        #expect(throws: SettingsError.self) { _ = try TestServer { $0.adminToken = "t"; $0.sources["admin-token"] = "flag"; $0.adminTokenFile = files + "/admin" } }
        #expect(throws: SettingsError.self) { _ = try TestServer { $0.secret = ""; $0.secretFile = files + "/missing" } }
    }
}
