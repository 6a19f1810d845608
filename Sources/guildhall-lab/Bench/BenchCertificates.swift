// A CA and a server certificate for one TLS benchmark run (`bench fanout
// --transport tls`), made with the openssl command in a temporary folder,
// removed when the run ends.

import Foundation

final class BenchCertificates {
    let folder = NSTemporaryDirectory() + "guildhall-bench-tls-\(UUID().uuidString)"
    var ca: String { folder + "/ca.pem" }
    var chain: String { folder + "/chain.pem" }
    var key: String { folder + "/server.key" }

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let p256 = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
        let script = """
        set -e; cd '\(folder)'
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\n' > ext.cnf
        openssl req -x509 \(p256) -keyout ca.key -out ca.pem -days 2 -subj '/CN=Guildhall bench CA'
        openssl req \(p256) -keyout server.key -out server.csr -subj /CN=localhost
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 1 -extfile ext.cnf
        cat server.pem ca.pem > chain.pem
        """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw BenchError("cannot make the TLS certificates (is openssl installed?)") }
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }
}
