// What a message keeps of each file it carries, and the links readers get
// to download them (docs/files.md "Downloading"). A link names the file, the
// reader and an expiry, signed with a key derived from the node's secret
// apart from the upload key, so any node's listener checks it without asking
// a home; what makes a link stop working before its expiry is the file's
// record going (its message was recalled or deleted). Pure.

import Crypto
import Foundation

/// One file a message carries, as the message keeps it.
public struct FileAttachment: Sendable, Equatable, Codable {
    public var fileID: UInt64
    public var filename: String
    public var contentType: String
    public var size: UInt64
    public var width: UInt32 = 0, height: UInt32 = 0
    public var sha256: String

    public init(fileID: UInt64, filename: String, contentType: String, size: UInt64, width: UInt32 = 0, height: UInt32 = 0, sha256: String) {
        self.fileID = fileID; self.filename = filename; self.contentType = contentType; self.size = size
        self.width = width; self.height = height; self.sha256 = sha256
    }
}

/// A download link's signed terms.
public struct DownloadLink: Sendable, Equatable {
    public static let pathPrefix = "/files/"

    public var fileID: UInt64
    public var reader: UserID
    /// ms since the epoch.
    public var expiresAt: UInt64

    public init(fileID: UInt64, reader: UserID, expiresAt: UInt64) {
        self.fileID = fileID; self.reader = reader; self.expiresAt = expiresAt
    }

    /// A link made at `now` lasts until the end of the next whole period of
    /// `seconds`: between one and two periods. Within a period one reader
    /// gets the same link every time, so a browser's cache keeps the file.
    public static func expiry(now: UInt64, seconds: Int) -> UInt64 {
        let period = UInt64(max(seconds, 1)) * 1000
        return (now / period + 2) * period
    }

    /// The link's URL under `base` (no trailing slash); the file's name is
    /// its last path segment, so a saved download keeps it.
    public func url(base: String, filename: String, key: SymmetricKey) -> String {
        base + Self.pathPrefix + String(fileID) + "/" + Self.escaped(filename)
            + "?u=" + Self.escaped(reader) + "&e=" + String(expiresAt) + "&s=" + signature(key)
    }

    /// The link a request target (`/files/<id>/<name>?u=&e=&s=`) carries, if this key signed it (expiry not checked).
    public static func verify(target: String, key: SymmetricKey) -> DownloadLink? {
        guard target.hasPrefix(pathPrefix), let question = target.firstIndex(of: "?") else { return nil }
        let path = target[target.index(target.startIndex, offsetBy: pathPrefix.count)..<question]
        guard let idText = path.split(separator: "/", maxSplits: 1).first, let id = UInt64(idText) else { return nil }
        var query: [String: String] = [:]
        for pair in target[target.index(after: question)...].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, let value = String(kv[1]).removingPercentEncoding, query.updateValue(value, forKey: String(kv[0])) == nil else { return nil }
        }
        guard let reader = query["u"], let e = query["e"], let expiry = UInt64(e), let s = query["s"] else { return nil }
        let link = DownloadLink(fileID: id, reader: reader, expiresAt: expiry)
        guard let mac = UploadTicket.unbase64url(Substring(s)),
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: link.terms, using: key) else { return nil }
        return link
    }

    /// The key links are signed with, from the node's secret (apart from its other uses).
    public static func key(secret: String) -> SymmetricKey {
        SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array("guildhall downloads".utf8), using: SymmetricKey(data: Array(secret.utf8)))))
    }

    private var terms: [UInt8] { Array("\(fileID)\n\(reader)\n\(expiresAt)".utf8) }

    private func signature(_ key: SymmetricKey) -> String {
        UploadTicket.base64url(Array(HMAC<SHA256>.authenticationCode(for: terms, using: key)))
    }

    /// Percent-encoded but for RFC 3986's unreserved characters.
    static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
