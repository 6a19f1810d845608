// Uploads into the local store (docs/files.md): CreateUpload through the
// SDK, then the bytes PUT to the URL it answers with, by curl as any HTTP
// client would. Each rule of the URL: once, before it expires, the length
// and type asked for, the hash when given, a deadline; and of the request:
// the permission, the size limit, the quota, what one may not see.

import Crypto
import Foundation
import GuildhallClient
import GuildhallServer
import GuildhallWire
import Testing

@Suite struct FileUploadTests {
    /// alice owns a server with a channel; bob is a member. Uploads go to the WebSocket listener.
    func setUp(_ tweak: @escaping (inout Settings) -> Void = { _ in }) async throws -> (TestServer, GuildhallClient, GuildhallClient, GHServerInfo, GHChannelInfo) {
        let server = try TestServer {
            $0.wsListen = "127.0.0.1:0"
            tweak(&$0)
        }
        // The listener's port is known once it listens: links point there.
        server.update { $0.filesURL = "http://127.0.0.1:\(server.webSocketPort)" }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        return (server, alice, bob, g, c)
    }

    private func sha(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    /// PUTs `bytes` to `url` as `type`; the status and the answer's JSON.
    private func put(_ url: String, _ bytes: [UInt8], type: String = "application/octet-stream", extra: [String] = []) throws -> (Int, [String: Any]) {
        // curl asks to continue (Expect: 100-continue) before a body over 1 KiB, and the door says so.
        let (status, body) = try Curl.put(url, bytes, type: type, extra: extra)
        return (status, (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:])
    }

    @Test func aFileIsUploadedOnceToTheURLItsRequestAnswers() async throws {
        let (server, alice, _, _, c) = try await setUp()
        defer { server.stop() }
        let bytes = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let asked = server.clock.now()
        let upload = try await alice.files.createUpload("photo of the harbour.bin", size: UInt64(bytes.count), sha256: sha(bytes), to: .channel(c.channelID))
        #expect(upload.url.hasPrefix("http://127.0.0.1:\(server.webSocketPort)/files/upload/"))
        #expect(upload.headers.map { [$0.name, $0.value] } == [["Content-Type", "application/octet-stream"]])
        #expect((asked + 600_000...server.clock.now() + 600_000).contains(upload.expiresAt), "upload-url-seconds (600) from when it was asked")
        let (status, answer) = try put(upload.url, bytes)
        #expect(status == 201, "\(answer)")
        #expect(answer["file_id"] as? String == String(upload.fileID) && answer["sha256"] as? String == sha(bytes) && answer["size"] as? Int == bytes.count)
        // Once: the same URL again is refused, and the first upload stays.
        let (again, refusal) = try put(upload.url, bytes)
        #expect(again == 409 && (refusal["error"] as? String ?? "").contains("uploaded already"))
        #expect(FileManager.default.fileExists(atPath: "\(server.folder)/files/uploads/\(upload.fileID)"))
    }

    @Test func whatTheURLDidNotAskForIsRefusedAndNothingIsStored() async throws {
        let (server, alice, _, _, c) = try await setUp()
        defer { server.stop() }
        let bytes = Array("twelve bytes".utf8)
        let upload = try await alice.files.createUpload("a.txt", size: 12, contentType: "text/plain", sha256: sha(bytes), to: .channel(c.channelID))
        #expect(try put(upload.url, bytes, type: "image/png").0 == 400, "another type than asked")
        #expect(try put(upload.url, bytes + [1]).0 == 413, "more bytes than asked: refused at the head")
        #expect(try put(upload.url, Array(bytes.prefix(11)), type: "text/plain").0 == 400, "fewer bytes than asked")
        #expect(try put(upload.url, Array("twelve bytez".utf8), type: "text/plain").0 == 400, "another hash than asked")
        #expect(try put(upload.url, bytes, type: "text/plain", extra: ["-H", "Content-Length: 999999999999"]).0 == 413)
        // A character inside the signature: every bit of it counts (the last one's spare bits are UploadTicketTests').
        var forged = Array(upload.url)
        forged[forged.count - 10] = forged[forged.count - 10] == "A" ? "B" : "A"
        let forgedURL = String(forged)
        #expect(try put(forgedURL, bytes, type: "text/plain").0 == 403, "a ticket this server did not sign")
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: "\(server.folder)/files/uploads")) ?? []
        #expect(listed.isEmpty, "nothing stored: \(listed)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: "\(server.folder)/files/incoming")) ?? []).isEmpty)
        // Nothing was stored, so the URL still takes the right bytes once.
        #expect(try put(upload.url, bytes, type: "text/plain").0 == 201)

        let late = try await alice.files.createUpload("b.txt", size: 12, contentType: "text/plain", to: .channel(c.channelID))
        server.clock.advance(ms: 601_000)
        let (status, answer) = try put(late.url, bytes, type: "text/plain")
        #expect(status == 403 && (answer["error"] as? String ?? "").contains("expired"))
    }

    @Test func theRequestChecksPermissionSizeQuotaAndWhatOneMaySee() async throws {
        let (server, alice, bob, g, c) = try await setUp { $0.maxFileBytes = 1000; $0.fileQuotaBytes = 1500 }
        defer { server.stop() }
        await expectError(.tooLarge) { _ = try await bob.files.createUpload("big", size: 1001, to: .channel(c.channelID)) }
        _ = try await bob.files.createUpload("one", size: 1000, to: .channel(c.channelID))
        await expectError(.limitReached) { _ = try await bob.files.createUpload("two", size: 600, to: .channel(c.channelID)) }
        _ = try await alice.files.createUpload("hers", size: 600, to: .channel(c.channelID))

        for bad in ["", "a/b", "..", "tab\there", String(repeating: "x", count: 256)] {
            await expectError(.badRequest) { _ = try await alice.files.createUpload(bad, size: 1, to: .channel(c.channelID)) }
        }
        await expectError(.badRequest) { _ = try await alice.files.createUpload("x", size: 1, contentType: "not a type", to: .channel(c.channelID)) }
        await expectError(.badRequest) { _ = try await alice.files.createUpload("x", size: 0, to: .channel(c.channelID)) }
        await expectError(.badRequest) { _ = try await alice.files.createUpload("x", size: 1, sha256: "abc", to: .channel(c.channelID)) }

        // ATTACH_FILES taken from the everyone role in the channel: 403; a channel one may not see: as one that does not exist.
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, role: 0, GHPermissionBits(deny: [.attachFiles]))
        await expectError(.forbidden) { _ = try await bob.files.createUpload("x", size: 1, to: .channel(c.channelID)) }
        let staff = try await alice.channels.create(in: g.serverID, name: "staff")
        _ = try await alice.roles.setOverride(in: g.serverID, channel: staff.channelID, role: 0, GHPermissionBits(deny: [.viewChannel]))
        await expectError(.notFound) { _ = try await bob.files.createUpload("x", size: 1, to: .channel(staff.channelID)) }
        await expectError(.notFound) { _ = try await bob.files.createUpload("x", size: 1, to: .channel(staff.channelID + 99)) }

        // A direct conversation takes uploads without a server.
        let direct = try await alice.files.createUpload("note.txt", size: 5, contentType: "text/plain", to: .conversation(with: "carol"))
        #expect(try put(direct.url, Array("hello".utf8), type: "text/plain").0 == 201)
    }

    /// An upload that stalls is cut at upload-deadline-seconds, and what arrived is dropped.
    @Test func aSlowUploadIsCutAtItsDeadline() async throws {
        let (server, alice, _, _, c) = try await setUp { $0.uploadDeadlineSeconds = 1 }
        defer { server.stop() }
        let upload = try await alice.files.createUpload("slow.bin", size: 1000, to: .channel(c.channelID))
        let path = String(upload.url.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })
        let raw = try RawConnection(port: server.webSocketPort)
        raw.send(Array("PUT \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\n".utf8) + [UInt8](repeating: 1, count: 100))
        let answer = raw.readAllUntilClosed(timeout: 10)
        #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
        #expect(!FileManager.default.fileExists(atPath: "\(server.folder)/files/uploads/\(upload.fileID)"))
        // Dropped by the upload's worker once it is cut (the answer does not wait for it), and the id may take an upload again.
        _ = try await waitFor("what arrived is dropped") {
            ((try? FileManager.default.contentsOfDirectory(atPath: "\(server.folder)/files/incoming")) ?? []).isEmpty
                && !FileManager.default.fileExists(atPath: "\(server.folder)/files/uploads/\(upload.fileID).part") ? true : nil
        }
    }
}
