// AuditDiff (AuditLog.swift): only fields whose values differ become
// changes, every value is JSON text a client can parse, and a reason is
// bounded in characters, not bytes.

import Foundation
import Testing
@testable import GuildhallCore

@Suite struct AuditDiffTests {
    @Test func onlyDifferingFieldsAreChanges() {
        let before = ServerRecord(id: 1, name: "g", icon: "", custom: "", owner: "alice", openJoin: true, createdAt: 0)
        var after = before
        #expect(AuditDiff.server(before, after).isEmpty)
        after.name = "h"
        after.openJoin = false
        #expect(AuditDiff.server(before, after) == [AuditChange(key: "name", before: "\"g\"", after: "\"h\""),
                                                    AuditChange(key: "openJoin", before: "true", after: "false")])
    }

    @Test func aCreationHasOnlyAfterAndADeletionOnlyBefore() {
        let c = ChannelRecord(id: 5, serverID: 1, name: "general", topic: "", custom: "", createdAt: 0, slowModeSeconds: 3)
        let made = AuditDiff.channel(nil, c)
        #expect(made.allSatisfy { $0.before == "" && !$0.after.isEmpty } && made.map(\.key).contains("slowModeSeconds"))
        #expect(AuditDiff.channel(c, nil).allSatisfy { $0.after == "" && !$0.before.isEmpty })
    }

    @Test func everyValueParsesAsJSON() throws {
        var d = AuditDiff()
        d.field("text", "a\"b\\c\nd\u{1}é✓", nil)
        d.ids("roles", [3, 1], [1 << 62])
        d.field("count", UInt32(0), UInt32(7))
        for c in d.changes {
            for v in [c.before, c.after] where !v.isEmpty {
                _ = try JSONSerialization.jsonObject(with: Data(v.utf8), options: .fragmentsAllowed)
            }
        }
        #expect(try JSONSerialization.jsonObject(with: Data(d.changes[0].before.utf8), options: .fragmentsAllowed) as? String == "a\"b\\c\nd\u{1}é✓")
        #expect(d.changes[1] == AuditChange(key: "roles", before: "[\"1\",\"3\"]", after: "[\"\(UInt64(1) << 62)\"]"))
    }

    @Test func aReasonIsBoundedInCharacters() throws {
        #expect(try AuditEntry.validReason(String(repeating: "✓", count: 512)).count == 512)
        #expect(throws: Failure.self) { try AuditEntry.validReason(String(repeating: "a", count: 513)) }
    }
}
