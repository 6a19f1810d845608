// The SDK's files (docs/files.md): asking to upload, then sending the bytes
// to the URL the answer gives.

import Foundation
import GuildhallWire

/// Where an upload will be sent.
public enum UploadDestination: Sendable, Equatable {
    case channel(UInt64)
    /// The direct conversation with this user.
    case conversation(with: String)
    /// A direct conversation one is in, by its id (a group's, or a pair's).
    case conversationID(UInt64)
    /// One's own avatar (an image), which `setProfile(avatarFileID:)` then names.
    case avatar
    /// A server's icon (an image; MANAGE_SERVER there), which `updateServer(_:iconFileID:)` then names.
    case serverIcon(UInt64)
}

extension GuildhallClient.Files {
    /// Asks to upload a file of `size` bytes; the answer's URL takes its bytes once, until it expires.
    public func createUpload(_ filename: String, size: UInt64, contentType: String = "", sha256: String = "",
                             to destination: UploadDestination) async throws -> GHUpload {
        var r = GHCreateUpload()
        switch destination {
        case .channel(let id): r.channelID = id
        case .conversation(let peer): r.peerID = peer
        case .conversationID(let id): r.conversationID = id
        case .avatar: r.avatar = true
        case .serverIcon(let id): r.serverIcon = id
        }
        r.filename = filename
        r.size = size
        r.contentType = contentType
        r.sha256 = sha256
        return try await client.expect(.createUpload(r)) { if case .upload(let u) = $0 { u } else { nil } }
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension GuildhallClient.Files {
    /// Uploads the file at `path` for `destination` (asks for an upload, then
    /// PUTs its bytes to the URL with the headers the answer lists); returns
    /// the file id a message then carries (`send(_:to:attachments:)`).
    /// `contentType` empty: guessed from the name's extension.
    public func upload(contentsOf path: String, as name: String? = nil, contentType: String = "",
                       to destination: UploadDestination) async throws -> UInt64 {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw GuildhallError(code: .badRequest, message: "cannot read \(path): \(error.localizedDescription)")
        }
        return try await upload(data, as: name ?? URL(fileURLWithPath: path).lastPathComponent, contentType: contentType, to: destination)
    }

    /// Uploads `data` as a file named `filename` for `destination`, as `upload(contentsOf:…)` does; the file id.
    public func upload(_ data: Data, as filename: String, contentType: String = "", to destination: UploadDestination) async throws -> UInt64 {
        let type = contentType.isEmpty ? GuildhallClient.mediaType(of: filename) : contentType
        let u = try await createUpload(filename, size: UInt64(data.count), contentType: type, to: destination)
        guard let url = URL(string: u.url) else { throw GuildhallError(code: .internal, message: "the upload URL \(u.url) is not a URL") }
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        // The length is the body's: URLSession sends it.
        for h in u.headers where h.name.lowercased() != "content-length" { request.setValue(h.value, forHTTPHeaderField: h.name) }
        let (body, response) = try await URLSession.shared.upload(for: request, from: data)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw GuildhallError(code: status == 503 ? .unavailable : .badRequest,
                                 message: "the upload was refused (HTTP \(status)): \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
        return u.fileID
    }
}

extension GuildhallClient {
    /// A media type for a file name's extension (application/octet-stream when unknown).
    static func mediaType(of filename: String) -> String {
        let ext = filename.split(separator: ".").count > 1 ? filename.split(separator: ".").last!.lowercased() : ""
        return [
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "avif": "image/avif",
            "svg": "image/svg+xml", "pdf": "application/pdf", "txt": "text/plain", "md": "text/markdown", "csv": "text/csv",
            "json": "application/json", "zip": "application/zip", "mp3": "audio/mpeg", "ogg": "audio/ogg", "wav": "audio/wav",
            "mp4": "video/mp4", "webm": "video/webm", "mov": "video/quicktime",
        ][ext] ?? "application/octet-stream"
    }
}
