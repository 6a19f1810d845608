// The reads an answer names (`AnswerRead`), made once its change is applied:
// one row per kind, each read from the part that owns the state. Loop thread only.

import GuildhallCore
import GuildhallWire

enum Answers {
    static func read(_ what: AnswerRead, at home: Home) -> GHResponse.OneOf_Result {
        switch what {
        case .server(let record): .server(home.directoryRequests.info(record))
        case .member(let user, let server): .member(home.moderation.member(user, server))
        case .channel(let record): .channel(GHChannelInfo(home.directory.channel(record.id) ?? record))
        case .presence(let user): .presence(GHPresence(home.presences.book.presence(of: user)))
        case .unread(let user, let channel, let now): .unread(GHUnreadInfo(home.services.unread(user, channel, now: now)))
        case .conversation(let c, let user): .conversation(home.userHome.conversationInfo(home.userHome.directs[c.id] ?? c, for: user))
        case .inviteCode(let code): .inviteCode(home.inviteLinks.info(code))
        case .receipts(let uids, let user): home.groupReceipts.receipts(uids, for: user)
        }
    }
}
