// A test CA and certificates made with the openssl command (Debian's
// openssl; `make test` installs it) in a temporary folder: a server
// certificate for localhost and 127.0.0.1, another one signed by the same
// CA (for a reload), one already expired, and one for another host.

import Foundation

final class TestCertificates {
    let folder = NSTemporaryDirectory() + "guildhall-tls-\(UUID().uuidString)"
    var ca: String { folder + "/ca.pem" }
    var key: String { folder + "/server.key" }
    /// Chains (leaf, then the CA) for the key.
    var chain: String { folder + "/chain.pem" }
    var renewed: String { folder + "/renewed.pem" }
    var expired: String { folder + "/expired.pem" }
    var otherHost: String { folder + "/other-host.pem" }

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(toFile: folder + "/ext.cnf", atomically: true, encoding: .utf8)
        try "subjectAltName=DNS:elsewhere.example\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(toFile: folder + "/other.cnf", atomically: true, encoding: .utf8)
        let p256 = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
        try run("openssl req -x509 \(p256) -keyout ca.key -out ca.pem -days 2 -subj '/CN=Guildhall Test CA'")
        try run("openssl req \(p256) -keyout server.key -out server.csr -subj /CN=localhost")
        for (name, days, ext) in [("server", 1, "ext.cnf"), ("renewed", 1, "ext.cnf"), ("expired", 0, "ext.cnf"), ("other-host", 1, "other.cnf")] {
            try run("openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out \(name).pem -days \(days) -extfile \(ext)")
        }
        try run("cat server.pem ca.pem > chain.pem")
        // The expired one ends the second it starts (-days 0): wait, with a deadline, until it has.
        let deadline = Date().addingTimeInterval(5)
        while try Self.shell("openssl x509 -checkend 0 -noout -in '\(expired)'").0 == 0 {
            guard Date() < deadline else { throw WaitTimeout(what: "the expired certificate's end") }
            usleep(50_000)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    private func run(_ command: String) throws {
        let child = try Child("/bin/sh", ["-c", "cd '\(folder)' && \(command) 2>&1"], environment: ProcessInfo.processInfo.environment)
        child.closeInput()
        let out = child.readAll()
        guard child.wait() == 0 else { throw WaitTimeout(what: "\(command): \(out)") }
    }

    /// Runs `command` in a shell; its status and its output (stderr too).
    static func shell(_ command: String, input: String = "") throws -> (Int32, String) {
        let child = try Child("/bin/sh", ["-c", command + " 2>&1"], environment: ProcessInfo.processInfo.environment)
        child.write(input)
        child.closeInput()
        let out = child.readAll()
        return (child.wait(), out)
    }
}
