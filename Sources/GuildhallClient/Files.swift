// The SDK's files (docs/files.md): asking to upload, then sending the bytes
// to the URL the answer gives.

import Foundation
import GuildhallWire

/// Where an upload will be sent.
public enum UploadDestination: Sendable, Equatable {
    case channel(UInt64)
    /// The direct conversation with this user.
    case conversation(with: String)
}

extension GuildhallClient {
    /// Asks to upload a file of `size` bytes; the answer's URL takes its bytes once, until it expires.
    public func createUpload(_ filename: String, size: UInt64, contentType: String = "", sha256: String = "",
                             to destination: UploadDestination) async throws -> GHUpload {
        var r = GHCreateUpload()
        switch destination {
        case .channel(let id): r.channelID = id
        case .conversation(let peer): r.peerID = peer
        }
        r.filename = filename
        r.size = size
        r.contentType = contentType
        r.sha256 = sha256
        return try await expect(.createUpload(r)) { if case .upload(let u) = $0 { u } else { nil } }
    }
}
