// curl as a test's HTTP client (uploads, presigned URLs): what any client
// outside Guildhall would send. The status and the body it got.

import Foundation

enum Curl {
    static func run(_ arguments: [String]) throws -> (status: Int, body: [UInt8]) {
        let out = NSTemporaryDirectory() + "guildhall-curl-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let child = try Child("/usr/bin/curl", ["-s", "-o", out, "-w", "%{http_code}"] + arguments, environment: [:])
        child.closeInput()
        let status = Int(child.readAll().trimmingCharacters(in: .whitespaces)) ?? 0
        _ = child.wait()
        return (status, (try? Array(Data(contentsOf: URL(fileURLWithPath: out)))) ?? [])
    }

    /// PUTs `bytes` to `url` as `type`, as a client uploading a file would (curl asks to continue before a body over 1 KiB).
    static func put(_ url: String, _ bytes: [UInt8], type: String, extra: [String] = []) throws -> (status: Int, body: [UInt8]) {
        let file = NSTemporaryDirectory() + "guildhall-put-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return try run(["-X", "PUT", "-H", "Content-Type: \(type)", "--expect100-timeout", "30", "--data-binary", "@\(file)"] + extra + [url])
    }
}
