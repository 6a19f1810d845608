// Guildhall's own calls to an S3-compatible store (docs/files.md "S3"):
// HEAD to check an upload is there, DELETE for what is no longer
// referenced, PUT and GET (tests, and moving files between stores), and the
// presigned URLs clients use to upload and download without Guildhall in
// between. Each call is libcurl, blocking the thread that makes it: worker
// threads only, never a loop (FileWorkers.swift hands the answers back).

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
public typealias StoreAnswer = HTTPAnswer

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
    }

    /// libcurl's global state, set up once before any thread uses it.

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
        do throws(HTTPCallError) { return try HTTPCall.perform(method, url: url, headers: headers, body: body, timeoutMs: timeoutMs) } catch {
            throw S3CallError(description: error.description)
        }
    }
}
