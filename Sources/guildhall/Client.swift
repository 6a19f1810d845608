// `guildhall client`: a terminal client. Interactive by default (one command
// a line, events printed as they come); with --json, one JSON command a line
// on stdin and one JSON object a line on stdout, for scripts and tests.

import ArgumentParser
import Foundation
import GuildhallClient
import GuildhallServer
import GuildhallWire

struct Client: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to a Guildhall server and run commands.",
        discussion: """
        Log in with --token, or with --user (and --device), minting a token from the server's \
        secret found through the usual settings (--data, --config). Type `help` for commands.

        JSON mode: each input line is an object such as {"cmd":"send","channel":123,"text":"hi"}; \
        each output line is {"cmd":...,"ok":true,"result":...}, {"cmd":...,"ok":false,"error":{"code":...,"message":...}} \
        or {"event":"message"|"message_update"|"notification"|"unread"|"unread_status"|"typing"|"presence"|"member_list"|"closed"|"status","data":...}.
        """)

    @OptionGroup var settingsOptions: SettingsOptions

    @Option(name: .long, help: "Server address, HOST:PORT.")
    var server = "127.0.0.1:7400"

    @Option(name: .long, help: "Login token (from `guildhall token`).")
    var token: String?

    @Option(name: .long, help: "User id, to mint a token locally instead of --token.")
    var user: String?

    @Option(name: .long, help: "Device id when minting a token.")
    var device = "cli"

    @Flag(name: .long, help: "Read JSON commands, write JSON lines.")
    var json = false

    @Flag(name: .long, help: "Speak TLS; the server's certificate must verify (see --ca-file).")
    var tls = false

    @Option(name: .customLong("ca-file"), help: "PEM file of the CAs a TLS server's certificate must chain to (default: the system's).")
    var caFile: String?

    @Flag(name: .long, help: "Log in with auto-subscribe mode on.")
    var auto = false

    func run() async throws {
        guard let colon = server.lastIndex(of: ":"), let port = Int(server[server.index(after: colon)...]) else {
            throw ValidationError("--server must be HOST:PORT")
        }
        let host = String(server[..<colon])
        let loginToken: String
        if let token {
            loginToken = token
        } else if let user {
            loginToken = try Token.mint(user: user, device: device, ttl: 86_400, settings: settingsOptions.resolve())
        } else {
            throw ValidationError("give --token or --user")
        }
        let output = Output(json: json)
        var options = ClientOptions(token: loginToken)
        if tls || caFile != nil { options.tls = ClientTLS(caFile: caFile) }
        options.autoSubscribe = auto
        let client = GuildhallClient(host: host, port: port, options: options)
        client.addListener(EventPrinter(output: output))
        do {
            let login = try await client.connect()
            output.status("logged in as \(login.userID) on \(login.deviceID) (session \(login.sessionID)); server \(login.serverVersion)", login)
        } catch {
            output.failure(cmd: "login", error)
            throw ExitCode(1)
        }
        let commands = CommandTable(client: client)
        if !json { output.line("type `help` for commands") }
        while let line = readLine() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let parsed: ParsedCommand
            do {
                parsed = try json ? ParsedCommand(json: trimmed) : ParsedCommand(words: trimmed, table: commands)
            } catch {
                output.failure(cmd: "parse", error)
                continue
            }
            if parsed.name == "quit" || parsed.name == "exit" { break }
            if parsed.name == "help" {
                output.line(commands.help)
                continue
            }
            do {
                let result = try await commands.run(parsed)
                output.success(cmd: parsed.name, result)
            } catch {
                output.failure(cmd: parsed.name, error)
            }
        }
        client.close()
    }
}

/// Prints events as they arrive.
final class EventPrinter: GuildhallListener {
    let output: Output
    init(output: Output) { self.output = output }

    func onMessage(_ message: GHChannelMessage, left: Int, offline: Bool, hasPackage: Bool) {
        output.event(offline ? "offline_message" : "message", message)
    }
    func onOfflineMessageSyncCompleted() { output.event("sync_completed", GHSyncCompleted()) }
    func onResumed(replayed: Int) {
        var r = GHResumed()
        r.replayed = UInt32(replayed)
        output.event("resumed", r)
    }
    func onReceivedStatusChanged(_ statuses: [GHReceivedStatus]) {
        var l = GHReceivedStatusList()
        l.statuses = statuses
        output.event("received_status", l)
    }
    func onMessageReceiptRequest(conversationType: GHConversationType, targetID: UInt64, messageUID: UInt64) {
        var r = GHReceiptRequest()
        r.conversationType = conversationType
        r.channelID = targetID
        r.messageUid = messageUID
        output.event("receipt_request", r)
    }
    func onGroupMessageRead(_ response: GHReceiptResponse) { output.event("receipt_response", response) }
    func onMessagesDelivered(_ messageUIDs: [UInt64], conversationID: UInt64, by peer: String) {
        output.event("delivered", Self.direct(.delivered, conversationID, peer, uids: messageUIDs))
    }
    func onMessagesRead(_ messageUIDs: [UInt64], conversationID: UInt64, by peer: String) {
        output.event("read", Self.direct(.read, conversationID, peer, uids: messageUIDs))
    }
    func onReadReceiptReceived(conversationType: GHConversationType, targetID: String, readerID: String, readTime: UInt64) {
        var d = Self.direct(.read, 0, readerID)
        d.readTime = readTime
        output.event("read_receipt", d)
    }
    func onConversationRead(from peer: String, conversationID: UInt64) {
        var d = Self.direct(.read, conversationID, peer)
        d.conversationRead = true
        output.event("conversation_read", d)
    }
    private static func direct(_ status: GHSentStatus, _ conversation: UInt64, _ reader: String, uids: [UInt64] = []) -> GHDirectReceipt {
        var d = GHDirectReceipt()
        d.conversationType = .direct
        d.conversationID = conversation
        d.readerID = reader
        d.status = status
        d.messageUids = uids
        return d
    }
    func onUnreadChanged(_ info: GHUnreadInfo) { output.event("unread", info) }
    func onUnreadStatus(_ status: GHUnreadStatus) { output.event("unread_status", status) }
    func onTyping(_ typing: GHTypingEvent) { output.event("typing", typing) }
    func onMemberListUpdate(_ update: GHMemberListUpdate) { output.event("member_list", update) }
    func onPresence(_ presences: [GHPresence]) {
        var e = GHPresenceEvent()
        e.presences = presences
        output.event("presence", e)
    }
    func onSystemNotification(_ notification: GHSystemNotification) { output.event("notification", notification) }
    func onMessageUpdated(_ update: GHMessageUpdate, unread: GHUnreadInfo?) { output.event("message_update", update) }
    func onSessionClosed(_ reason: GHCloseReason, message: String) {
        var closed = GHSessionClosed()
        closed.reason = reason
        closed.message = message
        output.event("closed", closed)
    }
}
