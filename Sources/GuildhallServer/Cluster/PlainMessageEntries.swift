// A log entry of plain new messages written by hand: a single node's journal
// record for a quiet loop's sends (GuildhallStore's LocalJournal) is almost
// always one, and the generated encoder's generic visitors and storage were
// most of a lone send's journal append (perf at shape F). The bytes are the
// generated encoder's for the same values (`LogEntriesTests` compares
// them), so the generated decoder reads them back. Pure.

import GuildhallCore
import GuildhallStore
import GuildhallWire

enum PlainMessageEntries {
    /// A node-0, non-epoch entry of `writes`, if each is a new message with no
    /// reply, files, changes or webhook author; nil otherwise (use the generated encoder).
    static func entry(_ writes: [StoreWrite]) -> [UInt8]? {
        var w = ProtoWriter(capacity: 48 + 192 * writes.count)
        for write in writes {
            guard case .message(let m) = write, m.reply == nil, m.attachments.isEmpty, m.webhook == nil,
                  m.changes == MessageChanges() else { return nil }
            w.message(3) { w in          // Entry.writes
                w.message(1) { w in      // Write.message
                    message(m, into: &w)
                }
            }
        }
        return w.bytes
    }

    /// Log.proto's Message, fields in number order, proto3 defaults left out
    /// (but a oneof's member and a repeated string are written even when empty).
    private static func message(_ m: MessageRecord, into w: inout ProtoWriter) {
        w.uint(1, m.uid)
        w.uint(2, m.serverID)
        w.uint(3, m.channelID)
        w.uint(4, m.seq)
        w.string(5, m.sender)
        w.uint(6, m.sentTime)
        switch m.content {
        case .text(var t): t.withUTF8 { w.lengthDelimited(7, UnsafeRawBufferPointer($0)) }
        case .custom(let type, let data):
            w.message(8) { w in
                w.string(1, type)
                w.bytesField(2, data)
            }
        }
        for var mention in m.mentions { mention.withUTF8 { w.lengthDelimited(9, UnsafeRawBufferPointer($0)) } }
        w.bool(10, m.mentionAll)
        w.bool(11, m.needReceipt)
        w.string(12, m.clientID)
        w.uint(14, m.threadRoot)
        w.bool(17, m.withheld)
    }
}
