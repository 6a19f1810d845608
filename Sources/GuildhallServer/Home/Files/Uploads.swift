// Asking to upload a file (docs/files.md), at the home of where it will be
// sent: a channel's guild home (the request table checked SEND_MESSAGES and
// ATTACH_FILES there) or the conversation's home; an avatar (an image, server
// and channel 0) at its user's home, where SetProfile names it (Profiles.swift);
// a server's icon (an image, channel 0) at its guild home, where UpdateServer names it. The home checks the
// fields and the user's quota, stores the file's row, and answers with a URL:
// with the local store, one whose ticket carries the upload's terms, signed,
// so that the listener receiving the bytes needs no home; with the S3 store,
// the bucket's, presigned with the same terms. Part of `Attachments`. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension Attachments {
    func createUpload(_ r: GHCreateUpload, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            guard let storage = work?.storage else { throw Failure(.unavailable, "this server keeps no files (files-store = off)") }
            let direct = r.conversationID != 0 || !r.peerID.isEmpty
            guard [r.channelID != 0, direct, r.avatar, r.serverIcon != 0].filter({ $0 }).count == 1 else {
                throw Failure.badRequest("name exactly one of channel_id, peer_id, conversation_id, avatar and server_icon")
            }
            let type = try FileRules.check(filename: r.filename, contentType: r.contentType, size: r.size, sha256: r.sha256.lowercased(),
                                           maxBytes: settings.maxFileBytes)
            if r.avatar || r.serverIcon != 0, !FileRules.avatarTypes.contains(type) {
                throw Failure.badRequest("\(r.avatar ? "an avatar" : "an icon") is an image: \(FileRules.avatarTypes.sorted().joined(separator: ", "))")
            }
            let now = now()
            var writes: [StoreWrite] = [], opened: DirectConversation?
            var file = FileRecord(id: services.ids.next(nowMillis: now), uploader: s.user, serverID: 0, channelID: 0, filename: r.filename, contentType: type,
                                  size: r.size, sha256: r.sha256.lowercased(), createdAt: now)
            if r.avatar {
                // The user's own: server and channel 0.
            } else if r.serverIcon != 0 {
                // The server's (the request table checked MANAGE_SERVER there): channel 0.
                file.serverID = r.serverIcon
            } else if !direct {
                let c = try services.readableChannel(r.channelID, for: s)
                (file.serverID, file.channelID) = (c.serverID, c.id)
            } else {
                let (c, write) = try userHome.conversation(id: r.conversationID, peer: r.peerID, from: s, now: now)
                file.channelID = c.id
                if let write { writes.append(write); opened = c }
            }
            writes.append(.fileCreated(file))
            read(.fileBytes(user: s.user)) { used in
                guard used.error == nil else { return s.fail(id, Failure(.unavailable, "storage is unavailable; retry later")) }
                let quota = UInt64(self.settings.fileQuotaBytes)
                guard used.count + file.size <= quota else {
                    return s.fail(id, Failure(.limitReached, "this upload would take \(s.user)'s files past file-quota-bytes (\(quota) bytes; \(used.count) used)"))
                }
                let upload = self.upload(for: file, to: storage, now: now)
                var e = Effects(writes: writes, reply: .result(.upload(upload)))
                if let opened { e.changes = [.conversationStored(opened.id)] }
                self.runner.carryOut(e, answering: id, to: s)
            }
        }
    }

    /// The URL and headers to upload `file` with, until upload-url-seconds from now.
    private func upload(for file: FileRecord, to storage: FileStorage, now: UInt64) -> GHUpload {
        var u = GHUpload()
        u.fileID = file.id
        u.expiresAt = now + UInt64(settings.uploadURLSeconds) * 1000
        var headers = [("Content-Type", file.contentType)]
        switch storage {
        case .local:
            let ticket = UploadTicket(fileID: file.id, size: file.size, sha256: file.sha256, contentType: file.contentType, uploader: file.uploader,
                                      expiresAt: u.expiresAt)
            u.url = settings.filesBaseURL + "/files/upload/" + ticket.signed(with: UploadTicket.key(secret: settings.secret))
        case .s3(let s3):
            // Signed as of the wall clock, which the store's is near.
            (u.url, headers) = s3.uploadURL(file.id, size: file.size, contentType: file.contentType, sha256: file.sha256,
                                            seconds: settings.uploadURLSeconds)
        }
        u.headers = headers.map { h in GHHTTPHeader.with { $0.name = h.0; $0.value = h.1 } }
        return u
    }
}
