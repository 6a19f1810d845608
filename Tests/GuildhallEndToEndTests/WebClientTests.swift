// The web client's files: the copy embedded in the binary is web/ as it is
// (`make web` refreshes it), and the WebSocket listener serves it over HTTP
// at / while `web-client` is on (with an ETag, 304 for a version held, gzip
// when accepted), and not when it is off.

import Foundation
import Testing
@testable import GuildhallServer

@Suite struct WebClientTests {
    static let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("web")

    @Test func theEmbeddedFilesAreWebAsItIs() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.web.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(WebClientFiles.files.keys.sorted() == names.map { "/" + $0 }, "run `make web`")
        for name in names {
            let text = try String(contentsOf: Self.web.appendingPathComponent(name), encoding: .utf8)
            #expect(WebClientFiles.files["/" + name]?.text == text, "web/\(name) differs from its embedded copy: run `make web`")
        }
    }

    /// The names of a oneof's fields in a message of Proto/guildhall.proto, as proto3's JSON mapping names them.
    static func oneofNames(of message: String) throws -> Set<String> {
        let proto = try String(contentsOf: web.deletingLastPathComponent().appendingPathComponent("Proto/guildhall.proto"), encoding: .utf8)
        guard let start = proto.range(of: "\nmessage \(message) {\n"), let oneof = proto[start.upperBound...].range(of: "  oneof "),
              let end = proto[oneof.upperBound...].range(of: "\n  }\n") else { return [] }
        var names = Set<String>()
        for line in proto[oneof.upperBound..<end.lowerBound].split(separator: "\n") {
            let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard words.count == 4, words[2] == "=" else { continue }
            let parts = words[1].split(separator: "_")
            names.insert(String(parts[0]) + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined())
        }
        return names
    }

    /// The quoted names of a union type in web/guildhall.d.ts.
    static func unionNames(_ type: String) throws -> Set<String> {
        let dts = try String(contentsOf: web.appendingPathComponent("guildhall.d.ts"), encoding: .utf8)
        guard let start = dts.range(of: "export type \(type) =\n"), let end = dts[start.upperBound...].range(of: ";") else { return [] }
        return Set(dts[start.upperBound..<end.lowerBound].split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
    }

    /// The JavaScript SDK's types name every request and event kind the protocol has, and none it has not.
    @Test func theSDKsTypesNameEveryRequestAndEventOfTheProtocol() throws {
        let requests = try Self.oneofNames(of: "Request"), events = try Self.oneofNames(of: "Event")
        #expect(requests.count > 90 && requests.contains("createGroup") && events.contains("directReceipt"))
        #expect(try Self.unionNames("RequestName") == requests, "web/guildhall.d.ts's RequestName differs from Proto/guildhall.proto's Request")
        #expect(try Self.unionNames("EventName") == events, "web/guildhall.d.ts's EventName differs from Proto/guildhall.proto's Event")
    }

    /// The response head and body to `GET path` on the listener, with `headers` ("Name: value\r\n" each).
    static func get(_ path: String, port: Int, headers: String = "") throws -> (String, String) {
        let raw = try RawConnection(port: port)
        raw.send(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(headers)\r\n".utf8))
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let chunk = raw.receive(timeout: 0.2)
            bytes += chunk
            if let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if bytes.count >= end.upperBound + length {
                    return (head, String(decoding: bytes[end.upperBound..<(end.upperBound + length)], as: UTF8.self))
                }
            }
        }
        return (String(decoding: bytes, as: UTF8.self), "")
    }

    @Test func theListenerServesThePageWhileTheSettingIsOn() throws {
        let server = try TestServer { $0.wsListen = "127.0.0.1:0" }
        defer { server.stop() }
        let (head, body) = try Self.get("/", port: server.webSocketPort)
        #expect(head.hasPrefix("HTTP/1.1 200 ") && head.contains("Content-Type: text/html"), "\(head)")
        #expect(body == WebClientFiles.files["/index.html"]?.text)
        let (script, _) = try Self.get("/app.js", port: server.webSocketPort)
        #expect(script.contains("Content-Type: text/javascript") && script.contains("Referrer-Policy: no-referrer"))
        let (missing, _) = try Self.get("/secrets.txt", port: server.webSocketPort)
        #expect(missing.hasPrefix("HTTP/1.1 404 "))

        // Each file carries its ETag; a browser holding that version gets 304 and no body.
        let etag = try #require(head.split(separator: "\r\n").first { $0.hasPrefix("ETag: ") }.map { String($0.dropFirst(6)) })
        #expect(head.contains("Cache-Control: no-cache") && head.contains("Vary: Accept-Encoding") && !head.contains("Content-Encoding"))
        let (again, empty) = try Self.get("/", port: server.webSocketPort, headers: "If-None-Match: \"old\", \(etag)\r\n")
        #expect(again.hasPrefix("HTTP/1.1 304 ") && empty.isEmpty && again.contains("ETag: \(etag)"), "\(again)")
        let (stale, _) = try Self.get("/", port: server.webSocketPort, headers: "If-None-Match: \"old\"\r\n")
        #expect(stale.hasPrefix("HTTP/1.1 200 "))
        // Compressed for a browser that takes gzip (curl undoes it), and not for one that refuses it.
        let (packed, _) = try Self.get("/app.js", port: server.webSocketPort, headers: "Accept-Encoding: br, gzip\r\n")
        #expect(packed.contains("Content-Encoding: gzip"), "\(packed)")
        let length = packed.split(separator: "\r\n").first { $0.hasPrefix("Content-Length: ") }.flatMap { Int($0.dropFirst(16)) } ?? 0
        #expect(length > 0 && length < WebClientFiles.files["/app.js"]!.text.utf8.count / 2, "\(length) bytes")
        let viaCurl = try Curl.run(["--compressed", "http://127.0.0.1:\(server.webSocketPort)/app.js"])
        #expect(viaCurl.status == 200 && String(decoding: viaCurl.body, as: UTF8.self) == WebClientFiles.files["/app.js"]?.text)
        let (refused, _) = try Self.get("/app.js", port: server.webSocketPort, headers: "Accept-Encoding: gzip;q=0\r\n")
        #expect(!refused.contains("Content-Encoding"))

        let off = try TestServer { $0.wsListen = "127.0.0.1:0"; $0.webClient = "off" }
        defer { off.stop() }
        let (none, _) = try Self.get("/", port: off.webSocketPort)
        #expect(none.hasPrefix("HTTP/1.1 404 "), "\(none)")
    }
}
