// Message search (docs/features.md "Search") through the SDK: words,
// phrases and prefixes in English and Chinese, edits and removals reflected
// at once, pages, filters, direct conversations, and what a caller may not
// read: never found, never counted, answered as what does not exist.

import Foundation
import GuildhallClient
import GuildhallServer
import GuildhallWire
import Testing

@Suite struct SearchTests {
    private func texts(_ r: GHSearchResults) -> [String] { r.hits.map(\.message.body.text) }

    @Test func wordsPhrasesAndPrefixesFindEnglishAndChineseNewestFirst() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        for text in ["The quick brown fox", "a quick fix for Café opening hours", "我们明天在北京见面", "你好世界", "北京烤鸭很好吃", "brown bread"] {
            _ = try await alice.messages.send(text, to: c.channelID)
        }
        let scope = SearchScope.server(g.serverID)
        #expect(texts(try await bob.messages.search("quick", in: scope)) == ["a quick fix for Café opening hours", "The quick brown fox"])
        #expect(texts(try await bob.messages.search("QUICK brown", in: scope)) == ["The quick brown fox"], "every word, any case")
        #expect(texts(try await bob.messages.search("\"brown fox\"", in: scope)) == ["The quick brown fox"])
        #expect(texts(try await bob.messages.search("\"fox brown\"", in: scope)).isEmpty, "a phrase keeps its order")
        #expect(texts(try await bob.messages.search("bro*", in: scope)) == ["brown bread", "The quick brown fox"])
        #expect(texts(try await bob.messages.search("cafe", in: scope)) == ["a quick fix for Café opening hours"], "accents do not matter")
        // Chinese: any run of characters is found where it occurs, two characters or one.
        #expect(texts(try await bob.messages.search("北京", in: scope)) == ["北京烤鸭很好吃", "我们明天在北京见面"])
        #expect(texts(try await bob.messages.search("世界", in: scope)) == ["你好世界"])
        #expect(texts(try await bob.messages.search("好", in: scope)) == ["北京烤鸭很好吃", "你好世界"])
        #expect(texts(try await bob.messages.search("京见", in: scope)) == ["我们明天在北京见面"])
        #expect(texts(try await bob.messages.search("北京 烤鸭", in: scope)) == ["北京烤鸭很好吃"])
        #expect(texts(try await bob.messages.search("京北", in: scope)).isEmpty, "characters in order only")

        let hit = try await bob.messages.search("北京烤鸭", in: scope).hits[0]
        #expect(hit.snippet.filter(\.match).map(\.text).joined() == "北京烤鸭")
        #expect(hit.snippet.map(\.text).joined() == "北京烤鸭很好吃", "the snippet is the text as sent")
        #expect(hit.message.channelID == c.channelID && hit.message.senderID == "alice" && hit.message.seq == 5)
        let fox = try await bob.messages.search("fox", in: scope).hits[0].snippet
        #expect(fox.map(\.text).joined() == "The quick brown fox" && fox.filter(\.match).map(\.text) == ["fox"])
    }

    @Test func editsReplaceTheWordsAndRemovedMessagesLeaveTheIndex() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        let scope = SearchScope.server(g.serverID)
        let typo = try await alice.messages.send("meet at the librray", to: c.channelID)
        let recalled = try await alice.messages.send("secret plan alpha", to: c.channelID)
        let deleted = try await alice.messages.send("secret plan beta", to: c.channelID)
        _ = try await alice.messages.edit(typo.uid, in: c.channelID, text: "meet at the library")
        #expect(texts(try await alice.messages.search("librray", in: scope)).isEmpty)
        #expect(texts(try await alice.messages.search("library", in: scope)) == ["meet at the library"])
        #expect(try await alice.messages.search("library", in: scope).hits[0].message.editCount == 1)
        #expect(texts(try await alice.messages.search("secret", in: scope)) == ["secret plan beta", "secret plan alpha"])
        _ = try await alice.messages.recall(recalled.uid, in: c.channelID)
        _ = try await alice.messages.delete(deleted.uid, in: c.channelID)
        #expect(try await alice.messages.search("secret", in: scope).hits.isEmpty)
        // Custom content is opaque to the server: nothing of it is searched.
        var body = GHMessageBody()
        body.custom.type = "card"
        body.custom.data = Data("library".utf8)
        _ = try await alice.messages.send(body, to: c.channelID)
        #expect(texts(try await alice.messages.search("library", in: scope)) == ["meet at the library"])
    }

    @Test func pagesFollowTheCursorAndFiltersNarrow() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let other = try await alice.channels.create(in: g.serverID, name: "other")
        var sent: [GHChannelMessage] = []
        for i in 1...7 {
            let who = i % 2 == 0 ? bob : alice
            sent.append(try await who.messages.send("report number \(i)", to: i <= 5 ? c.channelID : other.channelID))
            server.clock.advance(ms: 1000)
        }
        let scope = SearchScope.server(g.serverID)
        var seen: [String] = [], cursor: UInt64 = 0, pages = 0
        repeat {
            let page = try await alice.messages.search("report", in: scope, cursor: cursor, limit: 3)
            seen += texts(page)
            cursor = page.nextCursor
            pages += 1
        } while cursor != 0 && pages < 10
        #expect(pages == 3 && seen == (1...7).reversed().map { "report number \($0)" })
        #expect(texts(try await alice.messages.search("report", in: .server(g.serverID, channel: other.channelID))) == ["report number 7", "report number 6"])
        #expect(texts(try await alice.messages.search("report", in: scope, filters: SearchFilters(fromUser: "bob"))) == ["report number 6", "report number 4", "report number 2"])
        let window = SearchFilters(afterTime: sent[2].sentTime, beforeTime: sent[4].sentTime)
        #expect(texts(try await alice.messages.search("report", in: scope, filters: window)) == ["report number 4", "report number 3"])
        await expectError(.limitReached) { _ = try await alice.messages.search("report", in: scope, limit: 101) }
    }

    @Test func aDirectConversationIsSearchedByItsTwoUsersOnly() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        _ = try await alice.directs.send("the parcel arrives on 星期五", to: "bob")
        _ = try await bob.directs.send("thanks for the parcel", to: "alice")
        let conversation = try await alice.directs.open(with: "bob").conversationID
        let found = try await bob.messages.search("parcel", in: .conversation(conversation))
        #expect(texts(found) == ["thanks for the parcel", "the parcel arrives on 星期五"])
        #expect(found.hits[1].message.recipientID == "bob")
        #expect(texts(try await alice.messages.search("星期", in: .conversation(conversation))) == ["the parcel arrives on 星期五"])
        await expectError(.notFound) { _ = try await carol.messages.search("parcel", in: .conversation(conversation)) }
    }

    /// What one may not read is never found, and asking where one may not look is answered as asking where nothing is.
    @Test func hiddenChannelsAndOtherServersStayHidden() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let staff = try await alice.channels.create(in: g.serverID, name: "staff")
        _ = try await alice.roles.setOverride(in: g.serverID, channel: staff.channelID, role: 0, GHPermissionBits(deny: [.viewChannel]))
        _ = try await alice.messages.send("launch date is friday", to: staff.channelID)
        _ = try await alice.messages.send("launch party", to: c.channelID)
        #expect(texts(try await alice.messages.search("launch", in: .server(g.serverID))) == ["launch party", "launch date is friday"])
        #expect(texts(try await bob.messages.search("launch", in: .server(g.serverID))) == ["launch party"])
        #expect(try await bob.messages.search("friday", in: .server(g.serverID)).hits.isEmpty)

        // The hidden channel, a made-up channel, a server one is not in and a made-up one: the same 404.
        let hidden = await failure { _ = try await bob.messages.search("launch", in: .server(g.serverID, channel: staff.channelID)) }
        let madeUpChannel = await failure { _ = try await bob.messages.search("launch", in: .server(g.serverID, channel: staff.channelID + 7)) }
        #expect(hidden?.code == .notFound && madeUpChannel?.code == .notFound)
        #expect(hidden?.message.replacingOccurrences(of: "\(staff.channelID)", with: "ID")
                == madeUpChannel?.message.replacingOccurrences(of: "\(staff.channelID + 7)", with: "ID"))
        let notMine = await failure { _ = try await carol.messages.search("launch", in: .server(g.serverID)) }
        let madeUp = await failure { _ = try await carol.messages.search("launch", in: .server(g.serverID + 7)) }
        #expect(notMine?.code == .notFound && madeUp?.code == .notFound)
        #expect(notMine?.message.replacingOccurrences(of: "\(g.serverID)", with: "ID")
                == madeUp?.message.replacingOccurrences(of: "\(g.serverID + 7)", with: "ID"))

        // A member who loses sight of a channel loses its matches at once.
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, user: "bob", GHPermissionBits(deny: [.viewChannel]))
        #expect(try await bob.messages.search("launch", in: .server(g.serverID)).hits.isEmpty)
    }

    /// Whatever a user types is searched for as words: nothing is read as an operator, nothing breaks SQLite.
    @Test func anyQueryIsWordsOrAClearError() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        _ = try await alice.messages.send("cats AND dogs (together) NEAR the \"barn\"", to: c.channelID)
        _ = try await alice.messages.send("cats only", to: c.channelID)
        let scope = SearchScope.server(g.serverID)
        for odd in ["AND", "cats OR", "NEAR(cats dogs)", "(together", "body:cats", "^cats", "cats -dogs", "\"unclosed cats",
                    "\"\"\"", "*cats", "ca\"ts", "cats NOT", "{cats}", "'cats'", "c*a*t*s"] {
            do {
                _ = try await alice.messages.search(odd, in: scope)
            } catch let e as GuildhallError {
                #expect(e.code == .badRequest, "\(odd): \(e)")
            }
        }
        #expect(texts(try await alice.messages.search("AND", in: scope)) == ["cats AND dogs (together) NEAR the \"barn\""], "AND is a word")
        #expect(texts(try await alice.messages.search("\"cats only", in: scope)) == ["cats only"], "an unclosed quote runs to the end")
        #expect(texts(try await alice.messages.search("(together", in: scope)) == ["cats AND dogs (together) NEAR the \"barn\""])
        await expectError(.badRequest) { _ = try await alice.messages.search("", in: scope) }
        await expectError(.badRequest) { _ = try await alice.messages.search("  !!! ?? ", in: scope) }
        await expectError(.badRequest) { _ = try await alice.messages.search(String(repeating: "a", count: 257), in: scope) }
        await expectError(.badRequest) { _ = try await alice.messages.search((1...17).map { "w\($0)" }.joined(separator: " "), in: scope) }
        await expectError(.badRequest) { _ = try await alice.call(.searchMessages(GHSearchMessages.with { $0.query = "cats" })) }
        await expectError(.badRequest) {
                     _ = try await alice.call(.searchMessages(GHSearchMessages.with { $0.query = "cats"; $0.serverID = g.serverID; $0.conversationID = 1 }))
        }
    }

    /// The index is stored with the messages: a restart finds what was sent before it.
    @Test func theIndexHoldsAcrossARestart() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        _ = try await alice.messages.send("remember the harbour", to: c.channelID)
        alice.close()
        try server.restart()
        let (again, _) = try await server.client("alice")
        #expect(texts(try await again.messages.search("harbour", in: .server(g.serverID))) == ["remember the harbour"])
    }

    /// With search-index off nothing is indexed and searches are 503; on again, the index is rebuilt from what is stored.
    @Test func theIndexTurnedOffAndOnAgainHoldsWhatChangedMeanwhile() async throws {
        let server = try TestServer()
        defer { server.stop() }
        var (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        let first = try await alice.messages.send("alpha release", to: c.channelID)
        alice.close()
        try server.restart { $0.searchIndex = "off" }
        (alice, _) = try await server.client("alice")
        await expectError(.unavailable) { _ = try await alice.messages.search("alpha", in: .server(g.serverID)) }
        _ = try await alice.messages.edit(first.uid, in: c.channelID, text: "gamma release")
        _ = try await alice.messages.send("beta release", to: c.channelID)
        alice.close()
        try server.restart { $0.searchIndex = "on" }
        (alice, _) = try await server.client("alice")
        #expect(texts(try await alice.messages.search("release", in: .server(g.serverID))) == ["beta release", "gamma release"])
        #expect(try await alice.messages.search("alpha", in: .server(g.serverID)).hits.isEmpty)
    }

    private func failure(_ body: () async throws -> Void) async -> GuildhallError? {
        do { try await body() } catch let e as GuildhallError { return e } catch {}
        return nil
    }
}

/// The server directory (docs/features.md "Search"): servers their owners
/// listed, found by anyone by name, most members first, in pages.
@Suite struct ServerDirectoryTests {
    @Test func listedServersAreFoundByNameMostMembersFirst() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let learners = try await alice.servers.create(name: "Rust Learners", discoverable: true)
        let beijing = try await bob.servers.create(name: "北京 Rust 爱好者", discoverable: true)
        _ = try await alice.servers.create(name: "Rust Secret Club")
        let cafe = try await bob.servers.create(name: "Café Chat", discoverable: true)
        _ = try await carol.servers.join(beijing.serverID)

        // Carol is in none of alice's: the directory is for anyone logged in.
        let rust = try await carol.servers.search("rust")
        #expect(rust.servers.map(\.serverID) == [beijing.serverID, learners.serverID], "two members before one; the unlisted one never")
        #expect(rust.servers.first?.memberCount == 2 && rust.servers.allSatisfy(\.discoverable))
        #expect(try await carol.servers.search("北京").servers.map(\.serverID) == [beijing.serverID])
        #expect(try await carol.servers.search("CAFE chat").servers.map(\.serverID) == [cafe.serverID], "any case, no accents")
        #expect(try await carol.servers.search("secret").servers.isEmpty)
        #expect(Set(try await carol.servers.search("").servers.map(\.serverID)) == [learners.serverID, beijing.serverID, cafe.serverID])

        // Pages follow the cursor.
        var seen: [UInt64] = [], cursor: UInt64 = 0, pages = 0
        repeat {
                     let page = try await carol.servers.search("", cursor: cursor, limit: 2)
                     seen += page.servers.map(\.serverID)
                     cursor = page.nextCursor
                     pages += 1
        } while cursor != 0 && pages < 5
        #expect(pages == 2 && seen.count == 3 && Set(seen).count == 3 && seen.first == beijing.serverID)

        // Unlisting takes it out; only one who may manage the server may.
        await expectError(.forbidden) { _ = try await carol.servers.update(beijing.serverID, discoverable: false) }
        #expect(try await bob.servers.update(beijing.serverID, discoverable: false).discoverable == false)
        #expect(try await carol.servers.search("rust").servers.map(\.serverID) == [learners.serverID])
        await expectError(.badRequest) { _ = try await carol.servers.search(String(repeating: "x", count: 101)) }
        await expectError(.limitReached) { _ = try await carol.servers.search("", limit: 101) }
    }

    @Test func aListingSurvivesARestart() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let listed = try await alice.servers.create(name: "Night Owls", discoverable: true)
        alice.close()
        try server.restart()
        let (bob, _) = try await server.client("bob")
        #expect(try await bob.servers.search("owls").servers.map(\.serverID) == [listed.serverID])
    }
}
