// Guildhall's S3 client against SeaweedFS, a real S3-compatible store:
// signed calls (PUT, HEAD, GET, DELETE) and the presigned URLs a client
// uploads and downloads with, sent by libcurl's command line as a client would.

import Foundation
import GuildhallFiles
import Testing

@Suite struct S3ClientTests {
    @Test func signedCallsStoreReadAndRemoveAnObject() throws {
        let weed = try SeaweedFS()
        defer { weed.stop() }
        let s3 = try weed.bucket("guildhall")
        let bytes = Array("hello, 世界".utf8)
        #expect(try s3.put("files/a b/1", bytes, contentType: "text/plain").status == 200)
        let head = try s3.head("files/a b/1")
        #expect(head.status == 200 && head.header("Content-Length") == String(bytes.count))
        #expect(try s3.get("files/a b/1").body == bytes)
        #expect(try s3.delete("files/a b/1").status == 204)
        #expect(try s3.head("files/a b/1").status == 404)

        // A wrong secret is refused: the store checks the signature.
        var forged = weed.location(bucket: "guildhall")
        forged.credentials.secretKey = "not-the-secret"
        #expect(try S3Client(forged).put("files/x", bytes, contentType: "text/plain").status == 403)
        #expect(try s3.head("files/x").status == 404)
    }

    /// weed's own Unix sockets in /tmp go with it: the suite starts it dozens of times.
    @Test func aStoppedStoreLeavesNoSocketsBehind() throws {
        let weed = try SeaweedFS()
        _ = try weed.bucket("guildhall")
        let sockets = weed.sockets
        #expect(SeaweedFS.present(sockets).count >= 3, "weed made none of \(sockets)")
        weed.stop()
        #expect(SeaweedFS.present(sockets).isEmpty)
    }

    @Test func presignedURLsUploadAndDownloadWithoutTheSecret() throws {
        let weed = try SeaweedFS()
        defer { weed.stop() }
        let s3 = try weed.bucket("guildhall")
        let file = NSTemporaryDirectory() + "guildhall-upload-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let put = s3.presignedURL("PUT", "files/2", headers: [("Content-Type", "application/octet-stream")], expires: 60)
        #expect(try curl(["-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "@\(file)", put]).status == 200)
        #expect(try s3.get("files/2").body == bytes)
        let get = s3.presignedURL("GET", "files/2", expires: 60)
        let fetched = try curl([get])
        #expect(fetched.status == 200 && fetched.body == bytes)

        // The signed header is part of the signature; an expired URL is refused.
        #expect(try curl(["-X", "PUT", "-H", "Content-Type: text/html", "--data-binary", "@\(file)", put]).status == 403)
        let old = s3.presignedURL("GET", "files/2", expires: 1, at: Date().addingTimeInterval(-3600))
        #expect(try curl([old]).status == 403)
    }

    @Test func anUnreachableStoreIsAnErrorNotAHang() throws {
        let port = try NATSServer.freePort()
        let s3 = try S3Client(S3Location(endpoint: "http://127.0.0.1:\(port)", bucket: "b",
                                         credentials: SigningCredentials(accessKey: "a", secretKey: "s", region: "us-east-1")), timeoutMs: 2000)
        #expect(throws: S3CallError.self) { _ = try s3.head("x") }
        #expect(throws: S3CallError.self) { _ = try S3Client(S3Location(endpoint: "127.0.0.1:9", bucket: "b",
                                                                        credentials: SigningCredentials(accessKey: "a", secretKey: "s", region: "r"))) }
    }

    private func curl(_ arguments: [String]) throws -> (status: Int, body: [UInt8]) { try Curl.run(arguments) }
}
