// AWS Signature Version 4 (docs/files.md "S3"), the signature every
// S3-compatible store checks: for Guildhall's own calls (an Authorization
// header) and for the URLs it hands clients (a presigned query string), so
// that bytes go between the client and the store without passing through
// Guildhall. Tested against the examples AWS publishes for S3. Pure.
//
// The algorithm: a canonical request (method, path, sorted query, sorted
// lower-case headers, the names signed, the payload's hash) is hashed into
// a string to sign with the time and the scope (date/region/service); the
// key is the secret HMAC-chained through the scope's parts; the signature
// is the HMAC of the string with that key, in hex.

import Crypto
import Foundation

/// Who signs, and where.
public struct SigningCredentials: Sendable, Equatable {
    public var accessKey: String
    public var secretKey: String
    public var region: String
    public var service: String

    public init(accessKey: String, secretKey: String, region: String, service: String = "s3") {
        self.accessKey = accessKey; self.secretKey = secretKey; self.region = region; self.service = service
    }
}

/// One request as it will be sent: the path as it goes on the wire (each segment percent-encoded).
public struct SignedRequest: Sendable {
    public var method: String
    public var host: String
    public var path: String
    public var query: [(String, String)]
    /// Headers besides host (and x-amz-date, which signing adds).
    public var headers: [(String, String)]

    public init(method: String, host: String, path: String, query: [(String, String)] = [], headers: [(String, String)] = []) {
        self.method = method; self.host = host; self.path = path; self.query = query; self.headers = headers
    }
}

public enum SignatureV4 {
    public static let algorithm = "AWS4-HMAC-SHA256"
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The hash of an empty body.
    public static let emptyPayload = hex(SHA256.hash(data: [UInt8]()))

    /// The headers to send with `request` (its own, plus x-amz-date,
    /// x-amz-content-sha256 and Authorization), for a body whose SHA-256 in hex is `payloadHash`.
    public static func signedHeaders(_ request: SignedRequest, payloadHash: String, credentials: SigningCredentials, at date: Date) -> [(String, String)] {
        let time = AmzTime(date)
        var headers = request.headers + [("x-amz-content-sha256", payloadHash), ("x-amz-date", time.stamp)]
        let canonical = canonicalHeaders([("host", request.host)] + headers)
        let creq = [request.method, request.path, canonicalQuery(request.query), canonical.lines, canonical.names, payloadHash].joined(separator: "\n")
        let scope = time.scope(credentials)
        let signature = sign(creq, scope: scope, time: time, credentials: credentials)
        headers.append(("Authorization", "\(algorithm) Credential=\(credentials.accessKey)/\(scope),SignedHeaders=\(canonical.names),Signature=\(signature)"))
        return headers
    }

    /// The query string of a URL that lets whoever holds it make `request`
    /// until `expires` seconds after `date`; the request's headers are
    /// signed too, so the holder must send them as they are.
    public static func presignedQuery(_ request: SignedRequest, expires: Int, credentials: SigningCredentials, at date: Date) -> String {
        let time = AmzTime(date)
        let scope = time.scope(credentials)
        let canonical = canonicalHeaders([("host", request.host)] + request.headers)
        let query = request.query + [("X-Amz-Algorithm", algorithm), ("X-Amz-Credential", "\(credentials.accessKey)/\(scope)"),
                                     ("X-Amz-Date", time.stamp), ("X-Amz-Expires", String(expires)), ("X-Amz-SignedHeaders", canonical.names)]
        let creq = [request.method, request.path, canonicalQuery(query), canonical.lines, canonical.names, unsignedPayload].joined(separator: "\n")
        return canonicalQuery(query) + "&X-Amz-Signature=" + sign(creq, scope: scope, time: time, credentials: credentials)
    }

    /// Each segment of `path` percent-encoded as S3 expects ("/a b/c" → "/a%20b/c").
    public static func encodedPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { uriEncode(String($0)) }.joined(separator: "/")
    }

    /// RFC 3986 unreserved characters kept, everything else %XX (upper case), byte by byte of UTF-8.
    static func uriEncode(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }

    static func canonicalQuery(_ query: [(String, String)]) -> String {
        query.map { (uriEncode($0.0), uriEncode($0.1)) }.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// "name:value\n" per header, lower-case names, values trimmed with inner runs of spaces made one, sorted; and the names.
    static func canonicalHeaders(_ headers: [(String, String)]) -> (lines: String, names: String) {
        let sorted = headers.map { (name: $0.0.lowercased(), value: $0.1.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")) }
            .sorted { $0.name < $1.name }
        return (sorted.map { "\($0.name):\($0.value)\n" }.joined(), sorted.map(\.name).joined(separator: ";"))
    }

    static func sign(_ canonicalRequest: String, scope: String, time: AmzTime, credentials: SigningCredentials) -> String {
        let toSign = [algorithm, time.stamp, scope, hex(SHA256.hash(data: Array(canonicalRequest.utf8)))].joined(separator: "\n")
        var key = SymmetricKey(data: Array("AWS4\(credentials.secretKey)".utf8))
        for part in [time.day, credentials.region, credentials.service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return hex(HMAC<SHA256>.authenticationCode(for: Array(toSign.utf8), using: key))
    }

    static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        bytes.map { String($0, radix: 16).leftPadded(2) }.joined()
    }
}

/// A time as SigV4 writes it: 20130524T000000Z, and its day 20130524 (UTC).
struct AmzTime {
    let stamp: String
    var day: String { String(stamp.prefix(8)) }

    init(_ date: Date) {
        var t = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&t, &parts)
        stamp = String(format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                       Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    func scope(_ c: SigningCredentials) -> String { "\(day)/\(c.region)/\(c.service)/aws4_request" }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
