// Download links in what a reader is shown (docs/files.md "Downloading"):
// each file a message carries, with a URL made for that reader. Answers and
// offline items are made per reader anyway. A live event is encoded once for
// all its recipients without its files, and each recipient's copy has them
// appended: protobuf merges a message field met twice, and appends to a
// repeated one, so `Frame{event{message{attachments}}}` after the shared
// bytes adds the files to the message already read. A message without files
// costs nothing more. Pure but for reading the settings it is made from.

import Crypto
import GuildhallCore
import GuildhallLoop
import GuildhallWire

struct AttachmentLinks {
    private let key: SymmetricKey
    private let base: String
    private let seconds: Int

    init(_ settings: Settings) {
        key = DownloadLink.key(secret: settings.secret)
        base = settings.filesBaseURL
        seconds = settings.downloadURLSeconds
    }

    /// A link to an avatar that lasts (until the file goes): anyone who sees the profile may fetch it.
    func lasting(_ f: FileAttachment) -> String {
        DownloadLink(fileID: f.fileID, reader: "avatar", expiresAt: Self.lastingExpiry).url(base: base, filename: f.filename, key: key)
    }

    /// 2100-01-01: a link that does not expire in practice.
    static let lastingExpiry: UInt64 = 4_102_444_800_000

    /// `files` as `reader` is shown them at `now`.
    func shown(_ files: [FileAttachment], to reader: UserID, now: UInt64) -> [GHAttachment] {
        let expiry = DownloadLink.expiry(now: now, seconds: seconds)
        return files.map { f in
            GHAttachment.with {
                $0.fileID = f.fileID; $0.filename = f.filename; $0.contentType = f.contentType; $0.size = f.size
                $0.width = f.width; $0.height = f.height
                $0.url = DownloadLink(fileID: f.fileID, reader: reader, expiresAt: expiry).url(base: base, filename: f.filename, key: key)
                $0.urlExpiresAt = expiry
            }
        }
    }

    /// A shared event payload (a Frame) with `files` added for `reader`: to
    /// its message, or to its update's message when `inUpdate`.
    func payload(_ shared: SharedBytes, adding files: [FileAttachment], inUpdate: Bool, for reader: UserID, now: UInt64) -> SharedBytes {
        var frame = GHFrame()
        if inUpdate {
            frame.event.messageUpdate.message.attachments = shown(files, to: reader, now: now)
        } else {
            frame.event.message.attachments = shown(files, to: reader, now: now)
        }
        let suffix: [UInt8] = (try? frame.serializedBytes()) ?? []
        var bytes = [UInt8](UnsafeRawBufferPointer(start: shared.base, count: shared.count))
        bytes += suffix
        return SharedBytes(bytes)
    }
}

extension GHLogAttachment {
    init(_ a: FileAttachment) {
        self.init()
        fileID = a.fileID; filename = a.filename; contentType = a.contentType; size = a.size
        width = a.width; height = a.height; sha256 = a.sha256
    }

    var value: FileAttachment {
        FileAttachment(fileID: fileID, filename: filename, contentType: contentType, size: size, width: width, height: height, sha256: sha256)
    }
}

extension HomeServices {
    /// `m`'s files as `user` is shown them now.
    func filesShown(_ m: MessageRecord, to user: UserID) -> [GHAttachment] {
        m.attachments.isEmpty ? [] : AttachmentLinks(settings).shown(m.attachments, to: user, now: now())
    }

    /// `m` as `user` is shown it in an event or answer made for them alone.
    func withFiles(_ g: GHChannelMessage, _ m: MessageRecord, to user: UserID) -> GHChannelMessage {
        guard !m.attachments.isEmpty else { return g }
        var shown = g
        shown.attachments = filesShown(m, to: user)
        return shown
    }
}
