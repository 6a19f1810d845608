// TLS on the client, WebSocket and admin listeners (docs/security.md), with
// independent peers: Python's ssl module, `openssl s_client` and Python's
// websockets over wss, each trusting only the test CA. Bad input gets
// closed without touching anyone else; a reloaded certificate serves the
// connections made after it.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct TLSTests {
    let certs: TestCertificates

    init() throws { certs = try TestCertificates() }

    func server(_ tweak: (inout Settings) throws -> Void = { _ in }) throws -> TestServer {
        try TestServer {
            $0.tlsCertFile = certs.chain
            $0.tlsKeyFile = certs.key
            $0.tlsClient = "on"
            $0.tlsWebSocket = "on"
            $0.tlsAdmin = "on"
            $0.wsListen = "127.0.0.1:0"
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "op-secret"
            try tweak(&$0)
        }
    }

    /// Python's ssl client: logs in over TLS on the client port and prints the answer's payload in hex.
    func pythonLogin(_ port: Int, token: String, ca: String) throws -> (Int32, String) {
        let script = """
        import socket, ssl, struct, sys
        context = ssl.create_default_context(cafile=sys.argv[2])
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                token = sys.argv[3].encode()
                login = bytes([0x0a, len(token)]) + token if len(token) < 128 else bytes([0x0a, len(token) & 0x7f | 0x80, len(token) >> 7]) + token
                request = bytes([0x08, 0x01, 0x52]) + bytes([len(login)]) + login
                frame = bytes([0x0a, len(request)]) + request
                tls.sendall(struct.pack(">I", len(frame)) + frame)
                head = b""
                while len(head) < 4: head += tls.recv(4 - len(head))
                n = struct.unpack(">I", head)[0]
                body = b""
                while len(body) < n: body += tls.recv(n - len(body))
                print(tls.version(), body.hex())
        """
        return try TestCertificates.shell("/usr/bin/python3 -c '\(script)' \(port) '\(ca)' '\(token)'")
    }

    @Test func pythonsSSLClientLogsInOverTLS() throws {
        let server = try server()
        defer { server.stop() }
        let (status, out) = try pythonLogin(server.port, token: server.token("alice"), ca: certs.ca)
        #expect(status == 0, "\(out)")
        let words = out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        #expect(words.first == "TLSv1.3", "\(out)")
        let hex = Array((words.last ?? "").utf8)
        let bytes = stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(decoding: hex[$0...($0 + 1)], as: UTF8.self), radix: 16) }
        let frame = try GHFrame(serializedBytes: bytes)
        #expect(frame.response.login.userID == "alice", "\(frame)")
    }

    @Test func opensslSpeaksTLS12And13AndNothingOlder() throws {
        let server = try server()
        defer { server.stop() }
        for (flag, version) in [("-tls1_3", "TLSv1.3"), ("-tls1_2", "TLSv1.2")] {
            let (status, out) = try TestCertificates.shell(
                "openssl s_client -connect 127.0.0.1:\(server.port) -servername localhost -CAfile '\(certs.ca)' -verify_return_error \(flag) -brief", input: "")
            #expect(status == 0 && out.contains("Protocol version: \(version)") && out.contains("Verification: OK"), "\(flag): \(out)")
        }
        let (old, out) = try TestCertificates.shell("openssl s_client -connect 127.0.0.1:\(server.port) -tls1_1 -brief", input: "")
        #expect(old != 0, "TLS 1.1 refused: \(out)")
    }

    /// Plaintext on a TLS port, garbage, and a handshake that never ends are
    /// each closed; a TLS client meanwhile is served.
    @Test func badClientsAreClosedAndNobodyElseNotices() async throws {
        let server = try server { $0.loginDeadlineMs = 1_000 }
        defer { server.stop() }
        let plain = try RawConnection(port: server.port)
        plain.login(server.token("mallory"))
        let garbage = try RawConnection(port: server.port)
        garbage.send((0..<600).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        let silent = try RawConnection(port: server.port)
        // A ClientHello's first bytes, then nothing.
        silent.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00])
        let (status, out) = try pythonLogin(server.port, token: server.token("alice"), ca: certs.ca)
        #expect(status == 0 && out.hasPrefix("TLSv1.3"), "\(out)")
        for (name, raw) in [("plaintext", plain), ("garbage", garbage), ("unfinished handshake", silent)] {
            _ = raw.framesUntilClosed(timeout: 5)
            #expect(raw.peerClosed, "\(name) closed")
        }
    }

    /// `openssl s_client` and Python see the certificate for what it is:
    /// an expired one or one for another host does not verify.
    @Test(arguments: [("expired", "certificate has expired"), ("other-host", "mismatch")])
    func aCertificateThatDoesNotFitIsRefusedByTheClient(_ which: String, _ says: String) throws {
        let path = which == "expired" ? certs.expired : certs.otherHost
        let chain = certs.folder + "/\(which)-chain.pem"
        _ = try TestCertificates.shell("cat '\(path)' '\(certs.ca)' > '\(chain)'")
        let server = try server { $0.tlsCertFile = chain }
        defer { server.stop() }
        let (status, out) = try pythonLogin(server.port, token: server.token("alice"), ca: certs.ca)
        #expect(status != 0 && out.contains("CERTIFICATE_VERIFY_FAILED") && out.lowercased().contains(says), "\(out)")
    }

    /// POST /tls/reload: connections made after it get the new certificate; a session connected before stays.
    @Test func aReloadedCertificateServesNewConnectionsAndNobodyIsDropped() throws {
        let server = try server()
        defer { server.stop() }
        func serial() throws -> String {
            try TestCertificates.shell("openssl s_client -connect 127.0.0.1:\(server.port) -servername localhost -CAfile '\(certs.ca)' 2>/dev/null"
                                       + " | openssl x509 -noout -serial", input: "").1
        }
        let before = try serial()
        // A session made before the reload: it stays, and answers after.
        let held = try RawConnection(port: server.port)
        try held.startTLS(caFile: certs.ca)
        #expect(held.loginAndSync(server.token("alice")) != nil)
        let early = try TestCertificates.shell("openssl x509 -noout -serial -in '\(certs.folder)/server.pem'").1
        #expect(before == early)
        _ = try TestCertificates.shell("cat '\(certs.renewed)' '\(certs.ca)' > '\(certs.chain)'")
        let ctx = "import ssl; c = ssl.create_default_context(cafile='\(certs.ca)')"
        let reload = try TestCertificates.shell("/usr/bin/python3 -c \"\(ctx); import urllib.request as u; "
            + "r = u.Request('https://localhost:\(server.adminPort)/tls/reload', method='POST', headers={'Authorization': 'Bearer op-secret'}); "
            + "print(u.urlopen(r, context=c).status)\"")
        #expect(reload.0 == 0 && reload.1.contains("200"), "\(reload)")
        let after = try serial()
        let renewed = try TestCertificates.shell("openssl x509 -noout -serial -in '\(certs.renewed)'").1
        #expect(after == renewed && after != before, "\(before) → \(after)")
        var heartbeat = GHRequest()
        heartbeat.id = 77
        heartbeat.heartbeat = GHHeartbeat()
        held.send(heartbeat)
        var pong = false
        while let f = held.nextFrame(timeout: 5) { if f.response.id == 77 { pong = f.response.pong.serverTime > 0; break } }
        #expect(pong, "the session made before the reload still answers")
        // As SIGHUP does: the files are read again (here the first certificate comes back).
        _ = try TestCertificates.shell("cat '\(certs.folder)/server.pem' '\(certs.ca)' > '\(certs.chain)'")
        server.update { _ in }
        #expect(try serial() == before, "a SIGHUP reloads the certificate too")
        // The admin endpoint itself speaks https only: plain HTTP is not answered.
        let plainAdmin = try TestCertificates.shell("/usr/bin/python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:\(server.adminPort)/healthz', timeout=5)\"")
        #expect(plainAdmin.0 != 0)
    }

    /// The SDK and `guildhall client` speak TLS, verifying by name or by address.
    @Test func theSDKAndTheCommandLineClientSpeakTLS() async throws {
        let server = try server()
        defer { server.stop() }
        for host in ["localhost", "127.0.0.1"] {
            var options = ClientOptions(token: server.token("alice-\(host)"))
            options.tls = ClientTLS(caFile: certs.ca)
            let client = GuildhallClient(host: host, port: server.port, options: options)
            #expect(try await client.connect().userID == "alice-\(host)")
            _ = try await client.servers.create(name: "over TLS")
            client.close()
        }
        let (status, out) = try Binary.run(["client", "--server", "localhost:\(server.port)", "--tls", "--ca-file", certs.ca,
                                            "--token", server.token("bob"), "--json"], input: #"{"cmd": "servers"}"# + "\n")
        #expect(status == 0 && out.contains("bob"), "\(out)")
        // The operator's commands reach the admin endpoint over https, and the health check both listeners.
        let admin = try Binary.run(["admin", "status", "--admin", "localhost:\(server.adminPort)", "--tls", "--ca-file", certs.ca, "--token", "op-secret"])
        #expect(admin.0 == 0 && admin.1.contains("readyz: 200"), "\(admin)")
        for target in [["--admin", "localhost:\(server.adminPort)"], ["--server", "localhost:\(server.port)"]] {
            let health = try Binary.run(["health"] + target + ["--tls", "--ca-file", certs.ca])
            #expect(health.0 == 0 && health.1.hasPrefix("healthy"), "\(target): \(health)")
        }
        #expect(try Binary.run(["health", "--admin", "localhost:\(server.adminPort)"]).0 != 0, "plain HTTP to a TLS endpoint is not healthy")
    }

    /// The SDK refuses a certificate that has expired or names another host, and says which.
    @Test(arguments: [("expired", "certificate has expired"), ("other-host", "hostname mismatch")])
    func theSDKRefusesACertificateThatDoesNotFit(_ which: String, _ says: String) async throws {
        let chain = certs.folder + "/\(which)-sdk-chain.pem"
        _ = try TestCertificates.shell("cat '\(which == "expired" ? certs.expired : certs.otherHost)' '\(certs.ca)' > '\(chain)'")
        let server = try server { $0.tlsCertFile = chain }
        defer { server.stop() }
        var options = ClientOptions(token: server.token("alice"))
        options.tls = ClientTLS(caFile: certs.ca)
        options.autoReconnect = false
        let client = GuildhallClient(host: "localhost", port: server.port, options: options)
        do {
            _ = try await client.connect()
            Issue.record("a certificate that does not fit was accepted")
        } catch {
            #expect("\(error)".contains(says), "\(error)")
        }
        client.close()
    }
}
