// Group read receipts in the SDK (`client.receipts`, docs/features.md):
// asking for one, responding, and who has read a message.

import GuildhallWire

extension GuildhallClient.Receipts {
    private func receipts(_ body: GHRequest.OneOf_Body) async throws -> [GHReceiptInfo] {
        let result = try await client.call(body)
        guard case .receipts(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.receipts
    }

    /// Asks the channel's members for read receipts on my message.
    @discardableResult
    public func request(_ messageUID: UInt64) async throws -> GHReceiptInfo {
        var r = GHRequestReceipt()
        r.messageUid = messageUID
        return try await receipts(.requestReceipt(r))[0]
    }

    /// Says I read these messages of one channel; returns their receipt info.
    @discardableResult
    public func respond(channel: UInt64, _ messageUIDs: [UInt64]) async throws -> [GHReceiptInfo] {
        var r = GHRespondReceipts()
        r.channelID = channel
        r.messageUids = messageUIDs
        return try await receipts(.respondReceipts(r))
    }

    /// A page of a message's readers, newest first (requester only); pass `next_cursor` for the next page.
    public func readers(of messageUID: UInt64, cursor: UInt64 = 0, limit: UInt32 = 100) async throws -> GHReceiptReaders {
        var r = GHGetReceiptReaders()
        r.messageUid = messageUID
        r.cursor = cursor
        r.limit = limit
        let result = try await client.call(.getReceiptReaders(r))
        guard case .readers(let page) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return page
    }

    /// Receipt info of messages as I see them, in the order asked.
    public func info(_ messageUIDs: [UInt64]) async throws -> [GHReceiptInfo] {
        var r = GHGetReceiptInfo()
        r.messageUids = messageUIDs
        return try await receipts(.getReceiptInfo(r))
    }
}
