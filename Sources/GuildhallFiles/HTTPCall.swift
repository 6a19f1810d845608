// One HTTP call with libcurl, blocking the thread that makes it: Guildhall's
// own calls (the S3 store, S3Client.swift; the push gateway,
// PushGateway.swift) go through here, on worker threads only, never a loop.

import CCurl
import Foundation

/// An answer: its status, headers and body.
public struct HTTPAnswer: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.0.lowercased() == lower }?.1
    }
}

/// A call that got no answer (the peer unreachable, a timeout).
public struct HTTPCallError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

public enum HTTPCall {
    private static let initializeCurl: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// `method` to `url` with `headers` and `body` (sent for PUT and POST), within `timeoutMs`.
    public static func perform(_ method: String, url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int) throws(HTTPCallError) -> HTTPAnswer {
        initializeCurl
        guard let curl = curl_easy_init() else { throw HTTPCallError(description: "libcurl could not start a call") }
        defer { curl_easy_cleanup(curl) }
        let collected = Collected()
        var list: UnsafeMutablePointer<curl_slist>?
        // No "Expect: 100-continue" round trip before a body.
        for line in headers.map({ "\($0.0): \($0.1)" }) + ["Expect:"] { list = curl_slist_append(list, line) }
        defer { curl_slist_free_all(list) }
        _ = gh_curl_set_string(curl, CURLOPT_URL, url)
        _ = gh_curl_set_headers(curl, list)
        _ = gh_curl_set_long(curl, CURLOPT_NOSIGNAL, 1)
        _ = gh_curl_set_long(curl, CURLOPT_TIMEOUT_MS, timeoutMs)
        _ = gh_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutMs, 10_000))
        switch method {
        case "HEAD": _ = gh_curl_set_long(curl, CURLOPT_NOBODY, 1)
        case "GET": break
        default: _ = gh_curl_set_string(curl, CURLOPT_CUSTOMREQUEST, method)
        }
        let box = Unmanaged.passRetained(collected)
        defer { box.release() }
        _ = gh_curl_set_pointer(curl, CURLOPT_WRITEDATA, box.toOpaque())
        _ = gh_curl_set_write(curl) { data, size, count, context in
            let c = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
            c.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        _ = gh_curl_set_pointer(curl, CURLOPT_HEADERDATA, box.toOpaque())
        _ = gh_curl_set_header_callback(curl) { data, size, count, context in
            let c = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
            let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
            if let colon = line.firstIndex(of: ":") {
                c.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)))
            }
            return size * count
        }
        let code: CURLcode = body.withUnsafeBytes { bytes in
            if method == "PUT" || method == "POST" {
                _ = gh_curl_set_offset(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
                _ = gh_curl_set_pointer(curl, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
            return curl_easy_perform(curl)
        }
        guard code == CURLE_OK else {
            throw HTTPCallError(description: "\(method) \(url.prefix { $0 != "?" }): \(String(cString: curl_easy_strerror(code)))")
        }
        return HTTPAnswer(status: gh_curl_status(curl), headers: collected.headers, body: collected.body)
    }
}

/// What one call's callbacks gather, on the calling thread only.
private final class Collected {
    var body: [UInt8] = []
    var headers: [(String, String)] = []
}
