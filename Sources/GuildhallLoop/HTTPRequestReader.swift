// HTTP/1.1 requests read from a byte stream, sans I/O: bytes in as they
// arrive, whole requests out. The parsing is Debian's http_parser (the one
// nginx's and Node's came from), driven through its callbacks; this type
// only gathers what they report and enforces the limits a server must have
// before trusting a peer: request size, header count. Used by the admin
// endpoint (and later the WebSocket handshake). Any thread, one reader per
// connection.

import Foundation
import CHTTPParser

/// One request, as the peer sent it.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    /// The request target as sent ("/settings?x=1").
    public var target: String
    /// Header names as sent; look them up with `header(_:)`.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method; self.target = target; self.headers = headers; self.body = body
    }

    /// The path without the query.
    public var path: String { String(target.prefix { $0 != "?" }) }

    /// The first value of a query parameter (`?name=value&…`), percent-decoded; nil when absent.
    public func query(_ name: String) -> String? {
        guard let q = target.firstIndex(of: "?") else { return nil }
        for pair in target[target.index(after: q)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first.map(String.init) == name else { continue }
            let raw = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
            return raw.removingPercentEncoding ?? raw
        }
        return nil
    }

    /// The first header of that name, case-insensitively.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }

    public static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.body == b.body
            && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
    }
}

/// Why a stream stopped being read: the answer's status says it.
public enum HTTPReadError: Error, Sendable, Equatable {
    /// Not HTTP/1.x as http_parser reads it (its error name).
    case malformed(String)
    /// More bytes than the request limit before a request completed.
    case tooLarge(limit: Int)
    case tooManyHeaders(limit: Int)

    /// The status to answer with before closing.
    public var status: Int {
        switch self {
        case .malformed: 400
        case .tooLarge: 413
        case .tooManyHeaders: 431
        }
    }
}

public final class HTTPRequestReader {
    public let maxRequestBytes: Int
    public let maxHeaders: Int
    private var parser = http_parser()
    private var settings = http_parser_settings()
    private var failure: HTTPReadError?
    /// What the callbacks gathered of the request under way.
    private var method = ""
    private var target: [UInt8] = []
    private var headers: [(name: [UInt8], value: [UInt8])] = []
    private var lastWasValue = false
    private var body: [UInt8] = []
    /// Bytes of the request under way, for the size limit.
    private var bytesInRequest = 0
    private var complete: [HTTPRequest] = []
    /// Asked once a request's head is read: true hands its body to
    /// `onBodyPiece` as it arrives instead of keeping it (an upload; the size
    /// limit then covers the head only), and the request completes with an empty body.
    public var streamsBody: ((HTTPRequest) -> Bool)?
    public var onBodyPiece: ((UnsafeRawBufferPointer) -> Void)?
    /// The request under way streams its body.
    private var streaming = false

    public init(maxRequestBytes: Int, maxHeaders: Int) {
        self.maxRequestBytes = maxRequestBytes
        self.maxHeaders = maxHeaders
        http_parser_init(&parser, HTTP_REQUEST)
        settings.on_url = { p, at, n in HTTPRequestReader.reader(p).appending(at, n) { $0.target += $1 } }
        settings.on_header_field = { p, at, n in
            HTTPRequestReader.reader(p).appending(at, n) { r, bytes in
                if r.lastWasValue || r.headers.isEmpty {
                    r.headers.append((bytes, []))
                    r.lastWasValue = false
                } else {
                    r.headers[r.headers.count - 1].name += bytes
                }
                if r.headers.count > r.maxHeaders { r.failure = .tooManyHeaders(limit: r.maxHeaders) }
            }
        }
        settings.on_header_value = { p, at, n in
            HTTPRequestReader.reader(p).appending(at, n) { r, bytes in
                r.headers[r.headers.count - 1].value += bytes
                r.lastWasValue = true
            }
        }
        settings.on_headers_complete = { p in
            guard let p else { return 1 }
            let r = HTTPRequestReader.reader(p)
            r.streaming = r.streamsBody?(r.request(method: gh_http_method(p))) ?? false
            return 0
        }
        settings.on_body = { p, at, n in
            let r = HTTPRequestReader.reader(p)
            if r.streaming, let at {
                r.onBodyPiece?(UnsafeRawBufferPointer(start: at, count: n))
                return 0
            }
            return r.appending(at, n) { $0.body += $1 }
        }
        settings.on_message_complete = { p in
            guard let p else { return 1 }
            HTTPRequestReader.reader(p).finishRequest(method: gh_http_method(p))
            return 0
        }
    }

    /// Feeds bytes; returns the requests they completed, in order.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(HTTPReadError) -> [HTTPRequest] {
        if let failure { throw failure }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return [] }
        bytesInRequest += bytes.count
        parser.data = Unmanaged.passUnretained(self).toOpaque()
        let used = http_parser_execute(&parser, &settings, base.assumingMemoryBound(to: CChar.self), bytes.count)
        parser.data = nil
        if let failure { throw failure }
        let errno = gh_http_errno(&parser)
        if errno != HPE_OK.rawValue || used != bytes.count && gh_http_upgrade(&parser) == 0 {
            let name = http_errno_name(http_errno(rawValue: errno)).map { String(cString: $0) } ?? "HPE_UNKNOWN"
            failure = .malformed(name)
            throw .malformed(name)
        }
        if bytesInRequest > maxRequestBytes && !streaming && complete.isEmpty {
            failure = .tooLarge(limit: maxRequestBytes)
            throw .tooLarge(limit: maxRequestBytes)
        }
        defer { complete.removeAll() }
        return complete
    }

    public func feed(_ bytes: [UInt8]) throws(HTTPReadError) -> [HTTPRequest] {
        var result: Result<[HTTPRequest], HTTPReadError> = .success([])
        bytes.withUnsafeBytes { b in
            do throws(HTTPReadError) { result = .success(try feed(b)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    // MARK: Callbacks

    private static func reader(_ p: UnsafeMutablePointer<http_parser>?) -> HTTPRequestReader {
        Unmanaged<HTTPRequestReader>.fromOpaque(p!.pointee.data).takeUnretainedValue()
    }

    /// Adds a callback's bytes; nonzero (stop) once a limit failed.
    private func appending(_ at: UnsafePointer<CChar>?, _ n: Int, _ add: (HTTPRequestReader, [UInt8]) -> Void) -> Int32 {
        guard failure == nil else { return 1 }
        if let at, n > 0 { add(self, Array(UnsafeRawBufferPointer(start: at, count: n))) }
        return failure == nil ? 0 : 1
    }

    private func request(method code: UInt32) -> HTTPRequest {
        let name = http_method_str(http_method(rawValue: code)).map { String(cString: $0) } ?? "?"
        return HTTPRequest(method: name, target: String(decoding: target, as: UTF8.self),
                           headers: headers.map { (String(decoding: $0.name, as: UTF8.self), String(decoding: $0.value, as: UTF8.self)) },
                           body: body)
    }

    private func finishRequest(method code: UInt32) {
        complete.append(request(method: code))
        streaming = false
        target = []
        headers = []
        body = []
        lastWasValue = false
        bytesInRequest = 0
    }
}
