// Guildhall's own calls to an S3-compatible store (docs/files.md "S3"):
// HEAD to check an upload is there, DELETE for what is no longer
// referenced, PUT and GET (tests, and moving files between stores), and the
// presigned URLs clients use to upload and download without Guildhall in
// between. Each call is libcurl, blocking the thread that makes it: worker
// threads only, never a loop (FileWorkers.swift hands the answers back).

import CCurl
import Crypto
import Foundation

/// Where the store is and who signs for it.
public struct S3Location: Sendable, Equatable {
    /// "http://127.0.0.1:8333" or "https://s3.eu-west-1.amazonaws.com": a scheme, a host and maybe a port.
    public var endpoint: String
    public var bucket: String
    public var credentials: SigningCredentials
    /// endpoint/bucket/key, which every S3-compatible store takes; false: bucket.host/key (AWS's virtual hosts).
    public var pathStyle: Bool

    public init(endpoint: String, bucket: String, credentials: SigningCredentials, pathStyle: Bool = true) {
        self.endpoint = endpoint; self.bucket = bucket; self.credentials = credentials; self.pathStyle = pathStyle
    }
}

/// An answer from the store.
public struct StoreAnswer: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.0.lowercased() == lower }?.1
    }
}

/// A call that got no answer (the store unreachable, a timeout).
public struct S3CallError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

public final class S3Client: Sendable {
    public let location: S3Location
    /// Most time one call may take.
    public let timeoutMs: Int
    private let scheme: String, authority: String

    public init(_ location: S3Location, timeoutMs: Int = 30_000) throws(S3CallError) {
        guard let split = location.endpoint.range(of: "://") else {
            throw S3CallError(description: "an S3 endpoint is scheme://host[:port], not \(location.endpoint)")
        }
        scheme = String(location.endpoint[..<split.lowerBound]).lowercased()
        authority = String(location.endpoint[split.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard scheme == "http" || scheme == "https", !authority.isEmpty else {
            throw S3CallError(description: "an S3 endpoint is http:// or https:// and a host, not \(location.endpoint)")
        }
        self.location = location
        self.timeoutMs = timeoutMs
        Self.initializeCurl
    }

    /// libcurl's global state, set up once before any thread uses it.
    private static let initializeCurl: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// The host a request names and the path of `key` (nil: the bucket itself).
    func place(_ key: String?) -> (host: String, path: String) {
        let object = key.map { "/" + $0 } ?? ""
        if location.pathStyle { return (authority, SignatureV4.encodedPath("/\(location.bucket)\(object)")) }
        return ("\(location.bucket).\(authority)", SignatureV4.encodedPath(object.isEmpty ? "/" : object))
    }

    /// A URL that lets its holder make `method` on `key` with `headers` (sent as they are) until `expires` seconds from `date`.
    /// `query`: parameters signed with it (such as S3's `response-content-disposition`).
    public func presignedURL(_ method: String, _ key: String, query extra: [(String, String)] = [], headers: [(String, String)] = [],
                             expires: Int, at date: Date = Date()) -> String {
        let (host, path) = place(key)
        let query = SignatureV4.presignedQuery(SignedRequest(method: method, host: host, path: path, query: extra, headers: headers),
                                               expires: expires, credentials: location.credentials, at: date)
        return "\(scheme)://\(host)\(path)?\(query)"
    }

    public func head(_ key: String) throws(S3CallError) -> StoreAnswer { try call("HEAD", key) }
    public func get(_ key: String) throws(S3CallError) -> StoreAnswer { try call("GET", key) }
    public func delete(_ key: String) throws(S3CallError) -> StoreAnswer { try call("DELETE", key) }
    public func put(_ key: String, _ bytes: [UInt8], contentType: String) throws(S3CallError) -> StoreAnswer {
        try call("PUT", key, headers: [("Content-Type", contentType)], body: bytes)
    }
    /// Creates the bucket (tests and first runs; 409 when it is there).
    public func createBucket() throws(S3CallError) -> StoreAnswer { try call("PUT", nil) }

    /// One signed call, on this thread.
    func call(_ method: String, _ key: String?, headers: [(String, String)] = [], body: [UInt8] = []) throws(S3CallError) -> StoreAnswer {
        let (host, path) = place(key)
        let payload = SignatureV4.hex(SHA256.hash(data: body))
        let signed = SignatureV4.signedHeaders(SignedRequest(method: method, host: host, path: path, headers: headers),
                                               payloadHash: payload, credentials: location.credentials, at: Date())
        return try perform(method, url: "\(scheme)://\(host)\(path)", headers: signed, body: body)
    }

    private func perform(_ method: String, url: String, headers: [(String, String)], body: [UInt8]) throws(S3CallError) -> StoreAnswer {
        guard let curl = curl_easy_init() else { throw S3CallError(description: "libcurl could not start a call") }
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
            throw S3CallError(description: "\(method) \(url.prefix { $0 != "?" }): \(String(cString: curl_easy_strerror(code)))")
        }
        return StoreAnswer(status: gh_curl_status(curl), headers: collected.headers, body: collected.body)
    }
}

/// What one call's callbacks gather, on the calling thread only.
private final class Collected {
    var body: [UInt8] = []
    var headers: [(String, String)] = []
}
