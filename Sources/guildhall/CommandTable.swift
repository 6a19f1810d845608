// The client command's commands: name, parameters, help, and the SDK call
// each one makes. Interactive and JSON modes share this table.

import ArgumentParser
import GuildhallClient
import GuildhallWire
import SwiftProtobuf

struct CommandSpec {
    /// Positional parameters, in order.
    let params: [String]
    /// Optional named parameters (key=value in words mode).
    let options: [String]
    /// Whether the last positional parameter takes the rest of the line.
    let restIsText: Bool
    let help: String
    let run: (Args) async throws -> (any SwiftProtobuf.Message)?
}

struct Args {
    let values: [String: String]

    func string(_ name: String) throws -> String {
        guard let v = values[name], !v.isEmpty else { throw ValidationError("missing \(name)") }
        return v
    }
    func optional(_ name: String) -> String? { values[name] }
    func id(_ name: String) throws -> UInt64 {
        guard let v = UInt64(try string(name)) else { throw ValidationError("\(name) must be a number") }
        return v
    }
    func bool(_ name: String) -> Bool? { values[name].map { ["true", "1", "yes"].contains($0.lowercased()) } }
    func list(_ name: String) -> [String] {
        (values[name] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

struct CommandTable {
    let specs: [String: CommandSpec]
    let help: String

    init(client c: GuildhallClient) {
        func spec(_ params: [String], opts options: [String] = [], text: Bool = false, _ help: String,
                  _ run: @escaping (Args) async throws -> (any SwiftProtobuf.Message)?) -> CommandSpec {
            CommandSpec(params: params, options: options, restIsText: text, help: help, run: run)
        }
        let table: [(String, CommandSpec)] = [
            ("create-server", spec(["name"], opts: ["icon", "custom", "open_join"], text: true, "create a server you own") { a in
                try await c.createServer(name: a.string("name"), icon: a.optional("icon") ?? "", custom: a.optional("custom") ?? "",
                                         openJoin: a.bool("open_join") ?? true)
            }),
            ("update-server", spec(["server"], opts: ["name", "icon", "custom", "open_join"], "change a server") { a in
                try await c.updateServer(a.id("server"), name: a.optional("name"), icon: a.optional("icon"),
                                         custom: a.optional("custom"), openJoin: a.bool("open_join"))
            }),
            ("delete-server", spec(["server"], "delete a server you own") { a in try await c.deleteServer(a.id("server")); return nil }),
            ("servers", spec([], "list your servers") { _ in
                var l = GHServerList(); l.servers = try await c.myServers(); return l
            }),
            ("server", spec(["servers"], "get servers by id (comma separated)") { a in
                var l = GHServerList(); l.servers = try await c.servers(a.list("servers").compactMap(UInt64.init)); return l
            }),
            ("join", spec(["server"], "join an open server") { a in try await c.joinServer(a.id("server")) }),
            ("invite", spec(["server", "user"], "invite a user") { a in
                try await c.invite(a.string("user"), to: a.id("server")); return nil
            }),
            ("accept", spec(["server"], "accept an invitation") { a in try await c.acceptInvite(a.id("server")) }),
            ("leave", spec(["server"], "leave a server") { a in try await c.leaveServer(a.id("server")); return nil }),
            ("kick", spec(["server", "user"], "remove a member") { a in
                try await c.kick(a.string("user"), from: a.id("server")); return nil
            }),
            ("role", spec(["server", "user", "role"], "set a member's role: admin or member") { a in
                let role: GHRole = try a.string("role").lowercased() == "admin" ? .admin : .member
                return try await c.setRole(role, of: a.string("user"), in: a.id("server"))
            }),
            ("members", spec(["server"], "list members") { a in
                var l = GHMemberList(); l.members = try await c.members(of: a.id("server")); return l
            }),
            ("create-channel", spec(["server", "name"], opts: ["topic", "custom"], text: true, "create a channel") { a in
                try await c.createChannel(in: a.id("server"), name: a.string("name"), topic: a.optional("topic") ?? "",
                                          custom: a.optional("custom") ?? "")
            }),
            ("update-channel", spec(["channel"], opts: ["name", "topic", "custom"], "change a channel") { a in
                try await c.updateChannel(a.id("channel"), name: a.optional("name"), topic: a.optional("topic"), custom: a.optional("custom"))
            }),
            ("delete-channel", spec(["channel"], "delete a channel") { a in try await c.deleteChannel(a.id("channel")); return nil }),
            ("channels", spec(["server"], "list a server's channels") { a in
                var l = GHChannelList(); l.channels = try await c.channels(of: a.id("server")); return l
            }),
            ("send", spec(["channel", "text"], opts: ["mentions", "mention_all", "client_id", "need_receipt"], text: true, "send a text message") { a in
                try await c.send(a.string("text"), to: a.id("channel"), mentions: a.list("mentions"), mentionAll: a.bool("mention_all") ?? false,
                                 needReceipt: a.bool("need_receipt") ?? false, clientID: a.optional("client_id") ?? "")
            }),
            ("history", spec(["channel"], opts: ["before", "after", "limit"], "page through history (before=SEQ or after=SEQ, limit=N)") { a in
                let limit = UInt32(a.optional("limit") ?? "") ?? 50
                if let after = a.optional("after").flatMap(UInt64.init) {
                    return try await c.history(of: a.id("channel"), after: after, limit: limit)
                }
                return try await c.history(of: a.id("channel"), before: a.optional("before").flatMap(UInt64.init) ?? 0, limit: limit)
            }),
            ("get", spec(["uids"], "get messages by UID (comma or space separated)") { a in
                var p = GHMessagePage(); p.messages = try await c.messages(a.list("uids").compactMap(UInt64.init)); return p
            }),
            ("ping", spec([], "heartbeat; shows the server's clock") { _ in
                var p = GHPong(); p.serverTime = try await c.heartbeat(); return p
            }),
        ]
        specs = Dictionary(uniqueKeysWithValues: table)
        help = (table.map { name, s in
            let params = s.params.map { "<\($0)>" } + s.options.map { "[\($0)=…]" }
            return "  \(name) \(params.joined(separator: " "))\n      \(s.help)"
        } + ["  help", "  quit"]).joined(separator: "\n")
    }

    func run(_ command: ParsedCommand) async throws -> (any SwiftProtobuf.Message)? {
        guard let spec = specs[command.name] else { throw ValidationError("unknown command \(command.name); type help") }
        return try await spec.run(Args(values: command.args))
    }
}
