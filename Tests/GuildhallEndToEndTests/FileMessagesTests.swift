// Messages that carry files (docs/files.md "Sending files", "Downloading"):
// uploaded through the SDK and curl, sent, seen by another member live and
// in history with links made for them, downloaded by curl (whole, and a
// range), and refused when the file is not the sender's to send; a recalled
// message's links stop working; a direct message's files likewise.

import Crypto
import Foundation
import GuildhallClient
import GuildhallServer
import GuildhallWire
import Testing

@Suite struct FileMessagesTests {
    /// alice owns a small server with bob; files are served by the WebSocket listener.
    func setUp(_ tweak: @escaping (inout Settings) -> Void = { _ in }) async throws
        -> (TestServer, GuildhallClient, GuildhallClient, Recorder, GHChannelInfo) {
        let server = try TestServer {
            $0.wsListen = "127.0.0.1:0"
            tweak(&$0)
        }
        server.update { $0.filesURL = "http://127.0.0.1:\(server.webSocketPort)" }
        let (alice, _) = try await server.client("alice")
        let (bob, heard) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        return (server, alice, bob, heard, c)
    }

    /// A PNG's first bytes (its IHDR says 640 × 480), then filler.
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        + [0, 0, 2, 128, 0, 0, 1, 224, 8, 6, 0, 0, 0] + (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    /// Asks for an upload to `destination` and PUTs `bytes` there; the file id.
    func upload(_ bytes: [UInt8], as name: String, type: String, by client: GuildhallClient, to destination: UploadDestination) async throws -> UInt64 {
        let u = try await client.files.createUpload(name, size: UInt64(bytes.count), contentType: type, to: destination)
        let (status, body) = try Curl.put(u.url, bytes, type: type)
        #expect(status == 201, "\(String(decoding: body, as: UTF8.self))")
        return u.fileID
    }

    /// GETs `url`: the status, the body, and the response's headers (lower-cased names).
    func download(_ url: String, _ extra: [String] = []) throws -> (Int, [UInt8], [String: String]) {
        let headers = NSTemporaryDirectory() + "guildhall-head-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: headers) }
        let (status, body) = try Curl.run(["-D", headers] + extra + [url])
        var fields: [String: String] = [:]
        for line in ((try? String(contentsOfFile: headers, encoding: .utf8)) ?? "").split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, body, fields)
    }

    @Test func aMessageCarriesItsFilesAndEachReaderGetsLinksOfTheirOwn() async throws {
        let (server, alice, bob, heard, c) = try await setUp()
        defer { server.stop() }
        let id = try await upload(Self.png, as: "harbour at dusk.png", type: "image/png", by: alice, to: .channel(c.channelID))
        let sent = try await alice.messages.send("", to: c.channelID, attachments: [id])
        #expect(sent.body.text.isEmpty, "a message with files may have no text")
        let mine = try #require(sent.attachments.first)
        #expect(sent.attachments.count == 1 && mine.fileID == id && mine.filename == "harbour at dusk.png" && mine.contentType == "image/png")
        #expect(mine.size == UInt64(Self.png.count) && mine.width == 640 && mine.height == 480)
        #expect(mine.url.hasPrefix("http://127.0.0.1:\(server.webSocketPort)/files/\(id)/harbour%20at%20dusk.png?u=alice&"))
        #expect(mine.urlExpiresAt >= server.clock.now() + 3_600_000 && mine.urlExpiresAt <= server.clock.now() + 7_200_000)

        // bob's copy, live and in history: the same file, his own link.
        let live = try await waitFor("bob hears it") { heard.messages.first { $0.uid == sent.uid } }
        #expect(live.attachments.map(\.fileID) == [id] && live.attachments[0].width == 640)
        #expect(live.attachments[0].url.contains("?u=bob&"))
        let history = try await bob.messages.history(of: c.channelID).messages
        #expect(history.map { $0.attachments.map(\.fileID) } == [[id]] && history[0].attachments[0].url.contains("?u=bob&"))
        #expect(try await bob.messages.get([sent.uid])[0].attachments[0].url == history[0].attachments[0].url, "one reader, one link within a period")

        let (status, body, headers) = try download(live.attachments[0].url)
        #expect(status == 200 && body == Self.png)
        #expect(headers["content-type"] == "image/png" && headers["content-disposition"] == "inline" && headers["x-content-type-options"] == "nosniff")
        #expect(headers["accept-ranges"] == "bytes" && headers["content-length"] == String(Self.png.count))
        let (partial, piece, partHeaders) = try download(live.attachments[0].url, ["-H", "Range: bytes=100-299"])
        #expect(partial == 206 && piece == Array(Self.png[100..<300]) && partHeaders["content-range"] == "bytes 100-299/\(Self.png.count)")
        #expect(try download(live.attachments[0].url, ["-H", "Range: bytes=-10"]).1 == Array(Self.png.suffix(10)))
        #expect(try download(live.attachments[0].url, ["-H", "Range: bytes=\(Self.png.count)-"]).0 == 416)
        #expect(try download(live.attachments[0].url, ["-I"]).0 == 200, "HEAD")

        // A link is checked: a changed reader or file, or one past its expiry, is refused.
        let link = live.attachments[0].url
        #expect(try download(link.replacingOccurrences(of: "u=bob", with: "u=bo")).0 == 403)
        #expect(try download(link.replacingOccurrences(of: "/files/\(id)/", with: "/files/\(id + 1)/")).0 == 403)
        server.clock.advance(ms: live.attachments[0].urlExpiresAt - server.clock.now() + 1)
        let (expired, why, _) = try download(link)
        #expect(expired == 403 && String(decoding: why, as: UTF8.self).contains("expired"))
    }

    @Test func aRemovedMessagesLinksStopWorkingAndItsFilesStopCounting() async throws {
        let (server, alice, bob, heard, c) = try await setUp { $0.fileQuotaBytes = 1_000_000 }
        defer { server.stop() }
        let text = Array("minutes of the meeting".utf8)
        let id = try await upload(text, as: "minutes.txt", type: "text/plain", by: alice, to: .channel(c.channelID))
        let sent = try await alice.messages.send("the minutes", to: c.channelID, attachments: [id])
        let link = try await waitFor("bob hears it") { heard.messages.first { $0.uid == sent.uid } }.attachments[0].url
        let (ok, body, headers) = try download(link)
        #expect(ok == 200 && body == text && headers["content-disposition"] == "attachment", "text is downloaded, never shown in the origin")
        #expect(headers["content-security-policy"]?.contains("sandbox") == true)
        // The quota counts the file until its message goes.
        await expectError(.limitReached) { _ = try await alice.files.createUpload("big", size: 1_000_000, to: .channel(c.channelID)) }

        let recalled = try await alice.messages.recall(sent.uid, in: c.channelID)
        #expect(recalled.attachments.isEmpty)
        _ = try await heard.update(.recalledMessage, of: sent.uid)
        _ = try await waitFor("the link stops working") { try self.download(link).0 == 404 ? true : nil }
        #expect(try await bob.messages.history(of: c.channelID).messages[0].attachments.isEmpty)
        _ = try await alice.files.createUpload("big", size: 1_000_000, to: .channel(c.channelID))
    }

    @Test func onlyTheSendersFinishedUploadsForThisPlaceMayBeSentOnce() async throws {
        let (server, alice, bob, _, c) = try await setUp { $0.filesPerMessage = 2 }
        defer { server.stop() }
        let other = try await alice.channels.create(in: c.serverID, name: "other")
        let bytes = Array("hello".utf8)
        let hers = try await upload(bytes, as: "a.txt", type: "text/plain", by: alice, to: .channel(c.channelID))
        let elsewhere = try await upload(bytes, as: "b.txt", type: "text/plain", by: alice, to: .channel(other.channelID))
        let unfinished = try await alice.files.createUpload("c.txt", size: 5, to: .channel(c.channelID)).fileID

        // bob may not send alice's file, nor anyone a file asked for another channel, nor one that names nothing: alike.
        for (client, id) in [(bob, hers), (alice, elsewhere), (alice, hers + 12345)] {
            do {
                _ = try await client.messages.send("look", to: c.channelID, attachments: [id])
                Issue.record("sent a file that was not theirs to send here")
            } catch let e as GuildhallError {
                #expect(e.code == .notFound && e.message == "file \(id) not found: attach files you asked to upload here")
            }
        }
        await expectError(.badRequest) { _ = try await alice.messages.send("look", to: c.channelID, attachments: [unfinished]) }
        await expectError(.badRequest) { _ = try await alice.messages.send("look", to: c.channelID, attachments: [hers, hers]) }
        await expectError(.tooLarge) { _ = try await alice.messages.send("look", to: c.channelID, attachments: [1, 2, 3]) }
        await expectError(.badRequest) { _ = try await alice.messages.send("", to: c.channelID) }
        #expect(try await bob.messages.history(of: c.channelID).messages.isEmpty, "nothing refused was stored")

        _ = try await alice.messages.send("once", to: c.channelID, attachments: [hers])
        await expectError(.conflict) { _ = try await alice.messages.send("twice", to: c.channelID, attachments: [hers]) }

        // ATTACH_FILES: denied in the channel, files may not be sent there (text still may).
        let more = try await upload(bytes, as: "d.txt", type: "text/plain", by: bob, to: .channel(c.channelID))
        _ = try await alice.roles.setOverride(in: c.serverID, channel: c.channelID, role: 0, GHPermissionBits(deny: [.attachFiles]))
        await expectError(.forbidden) { _ = try await bob.messages.send("mine", to: c.channelID, attachments: [more]) }
        _ = try await bob.messages.send("text alone", to: c.channelID)
    }

    @Test func aDirectMessagesFilesReachThePeerAndTheSendersOtherDevices() async throws {
        let server = try TestServer { $0.wsListen = "127.0.0.1:0" }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (_, laptop) = try await server.client("alice", device: "laptop")
        let (bob, heard) = try await server.client("bob")
        let bytes = Array("a note for bob".utf8)
        let id = try await upload(bytes, as: "note.txt", type: "text/plain", by: alice, to: .conversation(with: "bob"))
        let dm = try await alice.directs.send("see the note", to: "bob", attachments: [id])
        #expect(dm.attachments.map(\.fileID) == [id] && dm.attachments[0].url.contains("?u=alice&"))
        let received = try await waitFor("bob hears it") { heard.messages.first { $0.uid == dm.uid } }
        #expect(received.attachments[0].url.contains("?u=bob&"))
        #expect(try download(received.attachments[0].url).1 == bytes)
        let other = try await waitFor("alice's laptop hears it") { laptop.messages.first { $0.uid == dm.uid } }
        #expect(other.attachments[0].url.contains("?u=alice&"))
        #expect(try await bob.messages.history(of: dm.channelID).messages[0].attachments[0].url.contains("?u=bob&"))

        // An edit keeps the files: the update carries them, with the reader's links.
        _ = try await alice.messages.edit(dm.uid, in: dm.channelID, text: "see the note!")
        let edited = try await heard.update(.editedMessage, of: dm.uid).update.message
        #expect(edited.attachments.map(\.fileID) == [id] && edited.attachments[0].url.contains("?u=bob&"))
        // A file asked for this conversation may not go to a channel.
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let again = try await upload(bytes, as: "note.txt", type: "text/plain", by: alice, to: .conversation(with: "bob"))
        await expectError(.notFound) { _ = try await alice.messages.send("here", to: c.channelID, attachments: [again]) }
    }

    @Test func anEditedChannelMessageKeepsItsFilesInTheUpdate() async throws {
        let (server, alice, _, heard, c) = try await setUp()
        defer { server.stop() }
        let id = try await upload(Self.png, as: "a.png", type: "image/png", by: alice, to: .channel(c.channelID))
        let sent = try await alice.messages.send("a picture", to: c.channelID, attachments: [id])
        let edited = try await alice.messages.edit(sent.uid, in: c.channelID, text: "the picture")
        #expect(edited.attachments.map(\.fileID) == [id] && edited.attachments[0].url.contains("?u=alice&"))
        let update = try await heard.update(.editedMessage, of: sent.uid).update.message
        #expect(update.attachments.map(\.fileID) == [id] && update.attachments[0].url.contains("?u=bob&") && update.attachments[0].height == 480)
    }

    @Test func theSweepRemovesUnsentUploadsRemovedFilesAndBytesNothingNames() async throws {
        let (server, alice, _, heard, c) = try await setUp {
            $0.fileGraceSeconds = 60
            $0.fileSweepSeconds = 1
            $0.fileQuotaBytes = 100
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "op-secret"
        }
        defer { server.stop() }
        let uploads = server.folder + "/files/uploads/"
        let shared = Array("the same bytes".utf8), other = Array("other bytes".utf8)
        let unsent = try await upload(shared, as: "a.txt", type: "text/plain", by: alice, to: .channel(c.channelID))
        let kept = try await upload(shared, as: "b.txt", type: "text/plain", by: alice, to: .channel(c.channelID))
        let recalled = try await upload(other, as: "c.txt", type: "text/plain", by: alice, to: .channel(c.channelID))
        let sent = try await alice.messages.send("kept", to: c.channelID, attachments: [kept])
        let gone = try await alice.messages.send("recalled", to: c.channelID, attachments: [recalled])
        _ = try await alice.messages.recall(gone.uid, in: c.channelID)
        let link = try await waitFor("bob hears it") { heard.messages.first { $0.uid == sent.uid } }.attachments[0].url
        await expectError(.limitReached) { _ = try await alice.files.createUpload("d", size: 100 - UInt64(2 * shared.count) + 1, to: .channel(c.channelID)) }

        // Past the grace: the unsent upload and the removed message's file go, rows and all; the sent one stays.
        server.clock.advance(ms: 61_000)
        func metric(_ name: String) throws -> Double {
            AdminEndpointTests.metric(try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret").body, name)
        }
        func swept(_ what: String) throws -> Double { try metric("guildhall_files_swept_total{what=\"\(what)\"}") }
        #expect(try metric("guildhall_file_uploads_total") == 3 && metric("guildhall_file_uploaded_bytes_total") == Double(2 * shared.count + other.count))
        _ = try await waitFor("the sweep") { try swept("unsent") == 1 && swept("removed") == 1 ? true : nil }
        let served = try metric("guildhall_file_downloaded_bytes_total")
        #expect(try metric("guildhall_files_stored") == 1 && metric("guildhall_files_stored_bytes") == Double(shared.count), "the file a message carries")
        #expect(try download(link.replacingOccurrences(of: "u=bob", with: "u=eve")).0 == 403)
        #expect(try metric(#"guildhall_file_refusals_total{status="403"}"#) == 1)
        #expect(!FileManager.default.fileExists(atPath: uploads + String(unsent)) && FileManager.default.fileExists(atPath: uploads + String(kept)))
        #expect(try download(link).1 == shared)
        #expect(try metric("guildhall_file_downloaded_bytes_total") == served + Double(shared.count) && metric("guildhall_file_downloads_total") >= 1)
        // Their rows are gone too: the quota counts only the file sent.
        _ = try await alice.files.createUpload("d", size: 100 - UInt64(shared.count), to: .channel(c.channelID))
        await expectError(.notFound) { _ = try await alice.messages.send("late", to: c.channelID, attachments: [unsent]) }

        // Bytes no file names go once old enough; the bytes a sent file names stay, though an unsent one named them too.
        let blobs = server.folder + "/files/blobs/"
        var all: [String] = []
        for shard in try FileManager.default.contentsOfDirectory(atPath: blobs) {
            for blob in try FileManager.default.contentsOfDirectory(atPath: blobs + shard) { all.append(blobs + shard + "/" + blob) }
        }
        #expect(all.count == 2)
        for path in all { try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: path) }
        _ = try await waitFor("the bytes' sweep") { try swept("blob") == 1 ? true : nil }
        #expect(all.filter { FileManager.default.fileExists(atPath: $0) }.count == 1)
        #expect(try download(link).1 == shared)
    }

    @Test func searchFindsFilesByNameAndCanAskForMessagesWithFiles() async throws {
        let (server, alice, bob, _, c) = try await setUp()
        defer { server.stop() }
        let id = try await upload(Array("q3".utf8), as: "quarterly-budget.xlsx", type: "application/octet-stream", by: alice, to: .channel(c.channelID))
        let withFile = try await alice.messages.send("the numbers", to: c.channelID, attachments: [id])
        let plain = try await alice.messages.send("the budget meeting is at noon", to: c.channelID)
        let scope = SearchScope.server(c.serverID)
        #expect(try await bob.messages.search("budget", in: scope).hits.map(\.message.uid) == [plain.uid, withFile.uid], "a file's name is searched as words")
        #expect(try await bob.messages.search("budget", in: scope, filters: SearchFilters(withAttachments: true)).hits.map(\.message.uid) == [withFile.uid])
        let hit = try #require(try await bob.messages.search("quarterly", in: scope).hits.first)
        #expect(hit.message.attachments.map(\.fileID) == [id] && hit.message.attachments[0].url.contains("?u=bob&"), "a hit shows its files with the reader's links")
        // An edit keeps the file's name searchable; a recall takes everything out.
        _ = try await alice.messages.edit(withFile.uid, in: c.channelID, text: "the figures")
        #expect(try await bob.messages.search("xlsx figures", in: scope).hits.map(\.message.uid) == [withFile.uid])
        _ = try await alice.messages.recall(withFile.uid, in: c.channelID)
        #expect(try await bob.messages.search("quarterly", in: scope).hits.isEmpty)
    }
}
