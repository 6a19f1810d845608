// Files in an S3-compatible store (docs/files.md "The S3 store"), against
// SeaweedFS: the upload URL is the bucket's, presigned with the upload's
// terms (the store refuses a second upload, other bytes than the hash asked
// for, another length); a message carries a file once the store has it;
// links redirect to the object; removing the message, or the sweep, deletes it.

import Crypto
import Foundation
@testable import GuildhallFiles
import GuildhallClient
import GuildhallServer
import GuildhallWire
import Testing

@Suite struct FileS3Tests {
    /// The bucket's store, a server keeping files there, and alice's server with bob.
    func setUp(_ weed: SeaweedFS, _ tweak: @escaping (inout Settings) -> Void = { _ in })
        async throws -> (TestServer, S3Client, GuildhallClient, Recorder, GHChannelInfo) {
        let s3 = try weed.bucket("guildhall-files")
        let keys = NSTemporaryDirectory() + "guildhall-s3-secret-\(UUID().uuidString)"
        try Data((weed.secretKey + "\n").utf8).write(to: URL(fileURLWithPath: keys))
        let server = try TestServer {
            $0.wsListen = "127.0.0.1:0"
            $0.filesStore = "s3"
            $0.s3Endpoint = weed.endpoint
            $0.s3Bucket = "guildhall-files"
            $0.s3AccessKey = weed.accessKey
            // A container secret's file, as an operator would give it.
            $0.s3SecretKeyFile = keys
            tweak(&$0)
        }
        server.update { $0.filesURL = "http://127.0.0.1:\(server.webSocketPort)" }
        let (alice, _) = try await server.client("alice")
        let (bob, heard) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        return (server, s3, alice, heard, c)
    }

    func sha(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    /// PUTs `bytes` to an upload's URL with the headers it lists (curl sends the length itself).
    func put(_ u: GHUpload, _ bytes: [UInt8]) throws -> Int {
        let headers = u.headers.filter { $0.name != "Content-Length" }.flatMap { ["-H", "\($0.name): \($0.value)"] }
        let file = NSTemporaryDirectory() + "guildhall-put-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return try Curl.run(["-X", "PUT"] + headers + ["--data-binary", "@\(file)", u.url]).status
    }

    @Test func filesGoToTheBucketAndLinksLeadThere() async throws {
        let weed = try SeaweedFS()
        defer { weed.stop() }
        let (server, s3, alice, heard, c) = try await setUp(weed)
        defer { server.stop() }
        let png = FileMessagesTests.png
        let u = try await alice.files.createUpload("chart.png", size: UInt64(png.count), contentType: "image/png", sha256: sha(png), to: .channel(c.channelID))
        #expect(u.url.hasPrefix("\(weed.endpoint)/guildhall-files/files/\(u.fileID)?"))
        #expect(Set(u.headers.map(\.name)) == ["Content-Length", "Content-Type", "If-None-Match", "x-amz-checksum-sha256"])
        var wrong = png
        wrong[1000] ^= 1
        let wrongPut = try put(u, wrong)
        #expect(wrongPut == 400, "other bytes than the hash asked for")
        #expect(try s3.head("files/\(u.fileID)").status == 404)
        await expectError(.badRequest) { _ = try await alice.messages.send("", to: c.channelID, attachments: [u.fileID]) }
        let (firstPut, secondPut) = (try put(u, png), try put(u, png))
        #expect(firstPut == 200)
        #expect(secondPut == 412, "the URL works once")

        let sent = try await alice.messages.send("the chart", to: c.channelID, attachments: [u.fileID])
        #expect(sent.attachments.map(\.width) == [640] && sent.attachments[0].height == 480 && sent.attachments[0].size == UInt64(png.count))
        let link = try await waitFor("bob hears it") { heard.messages.first { $0.uid == sent.uid } }.attachments[0].url
        #expect(link.hasPrefix("http://127.0.0.1:\(server.webSocketPort)/files/\(u.fileID)/chart.png?u=bob&"))
        // The link sends the client to the bucket, where the bytes are.
        let (redirect, _) = try Curl.run([link])
        #expect(redirect == 302)
        let (status, body) = try Curl.run(["-L", link])
        #expect(status == 200 && body == png)

        _ = try await alice.messages.recall(sent.uid, in: c.channelID)
        _ = try await waitFor("the object is deleted") { try s3.head("files/\(u.fileID)").status == 404 ? true : nil }
        #expect(try Curl.run(["-L", link]).status == 404)
    }

    @Test func theSweepDeletesUnsentUploadsFromTheBucket() async throws {
        let weed = try SeaweedFS()
        defer { weed.stop() }
        let (server, s3, alice, _, c) = try await setUp(weed) {
            $0.fileGraceSeconds = 60
            $0.fileSweepSeconds = 1
        }
        defer { server.stop() }
        let bytes = Array("never sent".utf8)
        let u = try await alice.files.createUpload("draft.txt", size: UInt64(bytes.count), contentType: "text/plain", to: .channel(c.channelID))
        #expect(try put(u, bytes) == 200)
        #expect(try s3.get("files/\(u.fileID)").body == bytes)
        server.clock.advance(ms: 61_000)
        _ = try await waitFor("the sweep deletes it") { try s3.head("files/\(u.fileID)").status == 404 ? true : nil }
        await expectError(.notFound) { _ = try await alice.messages.send("late", to: c.channelID, attachments: [u.fileID]) }
    }

    @Test func aServerWithoutTheBucketsSettingsDoesNotStart() throws {
        do {
            _ = try TestServer { $0.filesStore = "s3"; $0.s3Endpoint = "http://127.0.0.1:9" }
            Issue.record("started without a bucket")
        } catch let e as SettingsError {
            #expect(e.description == "files-store = s3 needs s3-bucket")
        }
    }
}
