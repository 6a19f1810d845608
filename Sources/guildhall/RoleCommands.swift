// The client command's commands on roles and permissions. Permissions are
// named as in Proto/ (`view_channel`, `send-messages` or `SendMessages`,
// any case and separator), comma-separated.

import ArgumentParser
import GuildhallClient
import GuildhallWire
import SwiftProtobuf

extension CommandTable {

    static func roleCommands(_ c: GuildhallClient,
                             _ spec: @escaping ([String], [String], Bool, String, @escaping (Args) async throws -> (any SwiftProtobuf.Message)?) -> CommandSpec)
        -> [(String, CommandSpec)] {
        [
            ("roles", spec(["server"], [], false, "list a server's roles and overrides") { a in try await c.roles.list(of: a.id("server")) }),
            ("create-role", spec(["server", "position", "name"], ["allow", "deny"], true,
                                 "create a role (allow=/deny= permission lists)") { a in
                guard let position = UInt32(try a.string("position")) else { throw ValidationError("position must be a number") }
                return try await c.roles.create(in: a.id("server"), name: a.string("name"), position: position, permissions: bits(a))
            }),
            ("update-role", spec(["server", "role"], ["name", "position", "allow", "deny"], false,
                                 "change a role (give allow= and/or deny= to replace its bits)") { a in
                let changesBits = a.optional("allow") != nil || a.optional("deny") != nil
                return try await c.roles.update(a.id("role"), in: a.id("server"), name: a.optional("name"),
                                                position: a.optional("position").flatMap(UInt32.init), permissions: changesBits ? bits(a) : nil)
            }),
            ("delete-role", spec(["server", "role"], [], false, "delete a role") { a in
                try await c.roles.delete(a.id("role"), in: a.id("server")); return nil
            }),
            ("grant-role", spec(["server", "user", "role"], [], false, "give a member a role") { a in
                try await c.roles.grant(a.id("role"), to: a.string("user"), in: a.id("server"))
            }),
            ("take-back-role", spec(["server", "user", "role"], [], false, "take a role back from a member") { a in
                try await c.roles.takeBack(a.id("role"), from: a.string("user"), in: a.id("server"))
            }),
            ("override", spec(["server"], ["channel", "role", "user", "allow", "deny"], false,
                              "set a channel's override for role= or user=, or (no channel=) a member's on the server") { a in
                try await c.roles.setOverride(in: a.id("server"), channel: a.optional("channel").flatMap(UInt64.init) ?? 0,
                                              role: a.optional("role").flatMap(UInt64.init), user: a.optional("user"), bits(a))
            }),
            ("permissions", spec(["server"], ["channel", "user"], false, "what a member (you by default) may do") { a in
                try await c.roles.permissions(in: a.id("server"), channel: a.optional("channel").flatMap(UInt64.init) ?? 0,
                                              of: a.optional("user") ?? "")
            }),
        ]
    }

    private static func bits(_ a: Args) throws -> GHPermissionBits {
        GHPermissionBits(allow: try a.list("allow").map(permission), deny: try a.list("deny").map(permission))
    }

    static func permission(_ text: String) throws -> GHPermission {
        let key = text.lowercased().filter { $0.isLetter }
        guard let p = GHPermission.allCases.first(where: { String(describing: $0).lowercased() == key }), p != .allowNothing else {
            let known = GHPermission.allCases.filter { $0 != .allowNothing }.map { String(describing: $0) }
            throw ValidationError("unknown permission \(text); one of \(known.joined(separator: ", "))")
        }
        return p
    }
}
