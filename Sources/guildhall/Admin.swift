// `guildhall admin …` talks to a running server's admin endpoint (docs/operating.md),
// and `guildhall restore` installs a backup into an empty data folder.
// HTTP (or HTTPS, `--tls`) goes through Foundation's URLSession.

import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GuildhallStore

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask a running server's admin endpoint: status, metrics, settings, set KEY=VALUE…, backup, drain, cluster.")

    @Argument(help: "status, metrics, settings, set, backup or drain.") var action: String
    @Argument(help: "For set: KEY=VALUE pairs.") var pairs: [String] = []
    @Option(name: .long, help: "Admin endpoint, HOST:PORT.") var admin = "127.0.0.1:7401"
    @Option(name: .long, help: "Admin token (default: $GUILDHALL_ADMIN_TOKEN).") var token: String?
    @Flag(help: "Print the endpoint's JSON as it is.") var json = false
    @OptionGroup var https: AdminTLS

    func run() async throws {
        let (method, path, body): (String, String, Data?) = switch action {
        case "status": ("GET", "/readyz", nil)
        case "metrics": ("GET", "/metrics", nil)
        case "settings": ("GET", "/settings", nil)
        case "set": ("PUT", "/settings", try Self.body(pairs))
        case "backup": ("POST", "/backup", nil)
        case "drain": ("POST", "/drain", nil)
        case "cluster": ("GET", "/cluster", nil)
        default: throw ValidationError("unknown action \(action): status, metrics, settings, set, backup, drain or cluster")
        }
        if action == "status" {
            let (health, _) = try await call("GET", "/healthz", nil)
            print("healthz: \(health)")
        }
        let (status, text) = try await call(method, path, body)
        if json || action == "metrics" || action == "status" {
            print(action == "status" ? "readyz: \(status) \(text.trimmingCharacters(in: .whitespacesAndNewlines))" : text, terminator: action == "status" ? "\n" : "")
        } else if action == "settings", let table = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: [String: Any]] {
            for key in table.keys.sorted() {
                let s = table[key]!
                print("\(key) = \(s["value"] ?? "")  (default \(s["default"] ?? ""), \(s["live"] as? Bool == true ? "live" : "restart"), from \(s["source"] ?? ""))")
            }
        } else {
            print(text, terminator: "")
        }
        if status >= 300 { throw ExitCode(1) }
    }

    static func body(_ pairs: [String]) throws -> Data {
        var object: [String: String] = [:]
        for p in pairs {
            guard let eq = p.firstIndex(of: "=") else { throw ValidationError("set expects KEY=VALUE, not \(p)") }
            object[String(p[..<eq])] = String(p[p.index(after: eq)...])
        }
        return try JSONSerialization.data(withJSONObject: object)
    }

    private func call(_ method: String, _ path: String, _ body: Data?) async throws -> (Int, String) {
        try await https.request(method, admin, path, token: token ?? ProcessInfo.processInfo.environment["GUILDHALL_ADMIN_TOKEN"], body: body)
    }

    static func request(_ method: String, _ url: String, token: String?, body: Data? = nil) async throws -> (Int, String) {
        guard let u = URL(string: url) else { throw ValidationError("bad address \(url)") }
        var r = URLRequest(url: u, timeoutInterval: 60)
        r.httpMethod = method
        if let token, !token.isEmpty { r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            r.httpBody = body
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: r)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}

/// How to reach an admin endpoint that speaks TLS (`tls-admin`).
struct AdminTLS: ParsableArguments {
    @Flag(name: .customLong("tls"), help: "The admin endpoint speaks TLS (https); its certificate must verify.") var enabled = false
    @Option(name: .customLong("ca-file"), help: "PEM file of the CAs the endpoint's certificate must chain to (default: the system's).")
    var caFile: String?

    var isOn: Bool { enabled || caFile != nil }

    /// `method path` on the endpoint `admin` (HOST:PORT): over TLS when asked, else plain HTTP.
    func request(_ method: String, _ admin: String, _ path: String, token: String?, body: Data? = nil) async throws -> (Int, String) {
        guard isOn else { return try await Admin.request(method, "http://\(admin)\(path)", token: token, body: body) }
        guard let colon = admin.lastIndex(of: ":"), let port = Int(admin[admin.index(after: colon)...]) else {
            throw ValidationError("--admin must be HOST:PORT")
        }
        return try HTTPSExchange.request(method, host: String(admin[..<colon]), port: port, path: path, caFile: caFile, token: token, body: body)
    }
}

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a backup (PRAGMA integrity_check) and install it into an empty data folder.")

    @Argument(help: "The backup file (from POST /backup or `guildhall admin backup`).") var backup: String
    @Option(name: .long, help: "The data folder to restore into; it must hold no database.") var data: String

    func run() throws {
        do { try Store.restore(backup, into: data) } catch { throw ValidationError(error.description) }
        print("restored \(backup) into \(data)")
    }
}
