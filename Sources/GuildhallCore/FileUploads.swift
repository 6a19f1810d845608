// Files (docs/files.md): what an upload asked for, the rules its fields
// follow, and the ticket its URL carries. A ticket is the upload's terms
// signed with the node's key (HMAC-SHA256), so whichever listener receives
// the bytes can check them without asking a home; it names one file id,
// and the store takes one upload per id, which makes the URL single-use. Pure.

import Crypto
import Foundation

/// One upload, as CreateUpload asked for it.
public struct FileRecord: Sendable, Equatable, Codable {
    public var id: UInt64
    public var uploader: UserID
    /// The server and channel it goes to; server 0 and the conversation's id for a direct conversation.
    public var serverID: ServerID
    public var channelID: ChannelID
    public var filename: String
    public var contentType: String
    public var size: UInt64
    /// Hex, or "" when the client gave none.
    public var sha256: String
    public var createdAt: UInt64
    /// The message that carries it (0: none yet), and whether that message was removed since.
    public var messageUID: MessageUID = 0
    public var removed = false

    public init(id: UInt64, uploader: UserID, serverID: ServerID, channelID: ChannelID, filename: String, contentType: String,
                size: UInt64, sha256: String, createdAt: UInt64) {
        self.id = id; self.uploader = uploader; self.serverID = serverID; self.channelID = channelID; self.filename = filename
        self.contentType = contentType; self.size = size; self.sha256 = sha256; self.createdAt = createdAt
    }
}

public enum FileRules {
    public static let maxFilename = 255, maxContentType = 127
    public static let defaultContentType = "application/octet-stream"
    /// What an avatar may be.
    public static let avatarTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp"]

    /// Checks a CreateUpload's fields; the content type as it will be kept.
    public static func check(filename: String, contentType: String, size: UInt64, sha256: String, maxBytes: Int) throws(Failure) -> String {
        guard !filename.isEmpty, filename.utf8.count <= maxFilename else {
            throw Failure.badRequest("filename must be 1 to \(maxFilename) bytes")
        }
        guard !filename.unicodeScalars.contains(where: { $0 == "/" || $0 == "\\" || $0.properties.generalCategory == .control }),
              filename != ".", filename != ".." else {
            throw Failure.badRequest("filename may not hold '/', '\\\\' or control characters")
        }
        let type = contentType.isEmpty ? defaultContentType : contentType.lowercased()
        let parts = type.split(separator: "/", omittingEmptySubsequences: false)
        guard type.count <= maxContentType, parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isTokenCharacter) }) else {
            throw Failure.badRequest("content_type must be a media type such as image/png, at most \(maxContentType) characters")
        }
        guard size >= 1 else { throw Failure.badRequest("size must be at least 1 byte") }
        guard size <= UInt64(maxBytes) else { throw Failure(.tooLarge, "size \(size) is over max-file-bytes (\(maxBytes))") }
        guard sha256.isEmpty || sha256.count == 64 && sha256.allSatisfy(\.isHexDigit) else {
            throw Failure.badRequest("sha256 must be 64 hex characters, or empty")
        }
        return type
    }

    /// RFC 7230's token characters.
    private static func isTokenCharacter(_ c: Character) -> Bool {
        guard c.isASCII, let a = c.asciiValue else { return false }
        return c.isLetter || c.isNumber || "!#$%&'*+-.^_`|~".utf8.contains(a)
    }
}

/// The signed terms of one upload URL.
public struct UploadTicket: Sendable, Equatable {
    public var fileID: UInt64
    public var size: UInt64
    public var sha256: String
    public var contentType: String
    public var uploader: UserID
    /// ms since the epoch.
    public var expiresAt: UInt64

    public init(fileID: UInt64, size: UInt64, sha256: String, contentType: String, uploader: UserID, expiresAt: UInt64) {
        self.fileID = fileID; self.size = size; self.sha256 = sha256; self.contentType = contentType; self.uploader = uploader; self.expiresAt = expiresAt
    }

    /// The ticket as a URL path segment: its terms and their signature, base64url.
    public func signed(with key: SymmetricKey) -> String {
        let terms = Array(Self.encode([String(fileID), String(size), sha256, contentType, uploader, String(expiresAt)]).utf8)
        return Self.base64url(terms) + "." + Self.base64url(Array(HMAC<SHA256>.authenticationCode(for: terms, using: key)))
    }

    /// The ticket a URL segment holds, if it is one this key signed (expiry not checked).
    public static func verify(_ text: Substring, with key: SymmetricKey) -> UploadTicket? {
        let halves = text.split(separator: ".", omittingEmptySubsequences: false)
        guard halves.count == 2, let terms = unbase64url(halves[0]), let mac = unbase64url(halves[1]),
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: terms, using: key) else { return nil }
        let fields = String(decoding: terms, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 6, let id = UInt64(fields[0]), let size = UInt64(fields[1]), let expiry = UInt64(fields[5]) else { return nil }
        return UploadTicket(fileID: id, size: size, sha256: fields[2], contentType: fields[3], uploader: fields[4], expiresAt: expiry)
    }

    /// The key tickets are signed with, from the node's secret (kept apart from the secret's other uses).
    public static func key(secret: String) -> SymmetricKey {
        SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array("guildhall files".utf8), using: SymmetricKey(data: Array(secret.utf8)))))
    }

    /// Newline-joined: no field may hold a newline (user ids and media types cannot).
    private static func encode(_ fields: [String]) -> String { fields.joined(separator: "\n") }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Only the one spelling `base64url` writes: a decoder ignores a last character's spare bits, and a
    /// ticket that several URLs could carry would not be single-use by its text.
    static func unbase64url(_ text: Substring) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        guard let bytes = Data(base64Encoded: s).map(Array.init), base64url(bytes) == text else { return nil }
        return bytes
    }
}
