// Upload tickets: the terms come back only from the one text this key
// signed; any other key, any changed character, and any other spelling of
// the same bytes is no ticket.

import Crypto
import Testing
@testable import GuildhallCore

@Suite struct UploadTicketTests {
    let ticket = UploadTicket(fileID: 384_761_959_385_399_296, size: 12, sha256: String(repeating: "ab", count: 32),
                              contentType: "text/plain", uploader: "alice", expiresAt: 1_800_000_000_000)

    @Test func aSignedTicketReadsBackWithItsKeyAndNoOther() {
        let text = ticket.signed(with: UploadTicket.key(secret: "node secret"))
        #expect(UploadTicket.verify(Substring(text), with: UploadTicket.key(secret: "node secret")) == ticket)
        #expect(UploadTicket.verify(Substring(text), with: UploadTicket.key(secret: "another secret")) == nil)
    }

    @Test func everyChangedCharacterAndEveryOtherSpellingIsRefused() {
        let key = UploadTicket.key(secret: "node secret")
        let text = Array(ticket.signed(with: key))
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for i in text.indices where text[i] != "." {
            for c in alphabet where c != text[i] {
                var changed = text
                changed[i] = c
                #expect(UploadTicket.verify(Substring(String(changed)), with: key) == nil, "character \(i) as \(c)")
            }
        }
        for bad in ["", ".", String(text) + "=", String(text) + ".", "." + String(text)] {
            #expect(UploadTicket.verify(Substring(bad), with: key) == nil, "\(bad)")
        }
    }
}
