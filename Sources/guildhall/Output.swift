// Where the client command writes: human lines, or one JSON object a line.
// Called from the command loop and from the connection thread, so each
// write is one locked call.

import Foundation
import GuildhallClient
import GuildhallWire
import Synchronization
import SwiftProtobuf

final class Output: Sendable {
    let json: Bool
    private let lock = Mutex(())

    init(json: Bool) { self.json = json }

    func line(_ text: String) {
        lock.withLock { _ in FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    }

    func success(cmd: String, _ result: (any SwiftProtobuf.Message)?) {
        if json {
            line("{\"cmd\":\(quote(cmd)),\"ok\":true,\"result\":\(result.flatMap { try? $0.jsonString() } ?? "{}")}")
        } else {
            let text = result.map { $0.textFormatString() } ?? ""
            line(text.isEmpty ? "ok" : text.trimmingCharacters(in: .newlines))
        }
    }

    func failure(cmd: String, _ error: any Error) {
        let (code, message): (Int, String) = switch error {
        case let e as GuildhallError: (e.code.rawValue, e.message)
        case let e as ClientError: (0, e.description)
        default: (400, String(describing: error))
        }
        if json {
            line("{\"cmd\":\(quote(cmd)),\"ok\":false,\"error\":{\"code\":\(code),\"message\":\(quote(message))}}")
        } else {
            line("error \(code): \(message)")
        }
    }

    func event(_ kind: String, _ data: any SwiftProtobuf.Message) {
        if json {
            line("{\"event\":\(quote(kind)),\"data\":\((try? data.jsonString()) ?? "{}")}")
            return
        }
        switch data {
        case let m as GHChannelMessage:
            let text: String = switch m.body.content {
            case .text(let t)?: t
            case .custom(let c)?: "<\(c.type): \(c.data.count) bytes>"
            case nil: ""
            }
            line("[channel \(m.channelID) #\(m.seq)] \(m.senderID): \(text)")
        case let n as GHSystemNotification:
            var detail = "server \(n.serverID)"
            if n.channelID != 0 { detail += " channel \(n.channelID) \(n.channel.name)" }
            if !n.member.userID.isEmpty { detail += " member \(n.member.userID)" }
            line("* \(n.kind) by \(n.actorID): \(detail)")
        case let c as GHSessionClosed:
            line("* session closed (\(c.reason)): \(c.message)")
        case let u as GHUnreadInfo:
            line("* unread channel \(u.channelID): \(u.unreadCount) (\(u.mentionedCount) mentions)")
        case let u as GHUnreadStatus:
            line("* channel \(u.channelID) \(u.unread ? "has unread messages" : "is read")")
        case let t as GHTypingEvent:
            line("* typing in channel \(t.channelID): \(t.typers.map(\.userID).joined(separator: ", "))")
        default:
            line("* \(kind): \(data.textFormatString())")
        }
    }

    func status(_ text: String, _ data: any SwiftProtobuf.Message) {
        if json { event("status", data) } else { line(text) }
    }

    private func quote(_ s: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [s], options: [.fragmentsAllowed])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
