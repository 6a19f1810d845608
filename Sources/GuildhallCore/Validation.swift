// Input checks shared by every operation. Each returns a sentence naming the
// field and the limit, or nil when the input is fine.

import Foundation

public enum Validation {
    public static func userIDProblem(_ id: String) -> String? {
        if id.isEmpty { return "user and device ids must not be empty" }
        if id.utf8.count > Limits.maxUserIDLength { return "ids are at most \(Limits.maxUserIDLength) bytes" }
        if id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "ids must not contain control characters"
        }
        return nil
    }

    public static func name(_ value: String, field: String) throws(Failure) {
        if value.trimmingCharacters(in: .whitespaces).isEmpty { throw .badRequest("\(field) must not be empty") }
        if value.count > Limits.maxNameLength { throw Failure(.tooLarge, "\(field) is at most \(Limits.maxNameLength) characters") }
    }

    /// A name as `name` checks it, and with no control characters (a group's, a webhook's).
    public static func plainName(_ value: String, field: String) throws(Failure) {
        try name(value, field: field)
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .badRequest("\(field) must not contain control characters")
        }
    }

    public static func text(_ value: String, field: String, maxCharacters: Int) throws(Failure) {
        if value.count > maxCharacters { throw Failure(.tooLarge, "\(field) is at most \(maxCharacters) characters") }
    }

    public static func custom(_ value: String, field: String) throws(Failure) {
        if value.utf8.count > Limits.maxCustomBytes { throw Failure(.tooLarge, "\(field) is at most \(Limits.maxCustomBytes) bytes") }
    }
}


extension Validation {
    /// Checks a message before it takes a seq: body size, mentions and client id.
    /// `files`: the ids of the files it carries, at most `maxFiles`; with some, the text may be empty.
    public static func message(content: MessageContent, mentions: [UserID], clientID: String,
                               maxBodyBytes: Int, maxMentions: Int, files: [UInt64] = [], maxFiles: Int = 0) throws(Failure) {
        if case .text(let t) = content, t.isEmpty, files.isEmpty { throw .badRequest("message text must not be empty") }
        if files.count > maxFiles { throw Failure(.tooLarge, "\(files.count) files; the limit is \(maxFiles) (files-per-message)") }
        if files.count > 1, Set(files).count != files.count { throw .badRequest("a message names each file once") }
        if case .custom(let type, _) = content {
            if type.isEmpty { throw .badRequest("custom body type must not be empty") }
            if type.utf8.count > Limits.maxCustomTypeLength {
                throw Failure(.tooLarge, "custom body type is at most \(Limits.maxCustomTypeLength) bytes")
            }
        }
        if content.size > maxBodyBytes {
            throw Failure(.tooLarge, "message body is \(content.size) bytes; the limit is \(maxBodyBytes)")
        }
        if mentions.count > maxMentions {
            throw Failure(.tooLarge, "\(mentions.count) mentions; the limit is \(maxMentions)")
        }
        for m in mentions {
            if let problem = userIDProblem(m) { throw .badRequest("mention \"\(m)\": \(problem)") }
        }
        if clientID.utf8.count > Limits.maxClientIDLength {
            throw Failure(.tooLarge, "client id is at most \(Limits.maxClientIDLength) bytes")
        }
    }
}
