// Message search's text rules (docs/features.md "Search"), shared by the
// index and the queries so both cut text the same way. Pure.
//
// The index is SQLite FTS5 with the `unicode61` tokenizer: words are runs of
// letters and digits, matched without case or accents. That splits English
// and most scripts well, but Chinese and Japanese are written without
// spaces, so a whole sentence would be one "word" and 你好 would never find
// 你好世界. So before text is indexed, every CJK character is set apart by
// zero-width spaces (a separator to unicode61, invisible when shown): each
// becomes its own token, and a query's CJK run becomes a phrase of its
// characters in order, which matches exactly where the run occurs: a
// substring search, of any length, one character included. (FTS5's trigram
// tokenizer would find substrings too, but none shorter than three
// characters, and most Chinese words are two.)
//
// A query is what a user types: words, "quoted phrases", prefix*. Each
// becomes an FTS5 string literal, so nothing a user types (AND, NEAR,
// parentheses, column filters, stray quotes) is read as an operator, and no
// query can fail to parse or ask for more than a word list.

public enum SearchText {
    /// The separator set around CJK characters in indexed text.
    static let separator: Character = "\u{200B}"
    /// The snippet's markers around a match: private-use characters, removed from indexed text.
    public static let matchOpen = "\u{E000}", matchClose = "\u{E001}"

    /// The text as the index takes it.
    public static func indexed(_ text: String) -> String {
        // Most text holds nothing to change: every scalar this changes is
        // U+1100 or above, three or four bytes in UTF-8, led by 0xE1 or more.
        if !text.utf8.contains(where: { $0 >= 0xE1 }) { return text }
        var out = String.UnicodeScalarView()
        out.reserveCapacity(text.unicodeScalars.count)
        for u in text.unicodeScalars {
            if u == "\u{E000}" || u == "\u{E001}" { continue }
            if isCJK(u) {
                if let last = out.last, last != "\u{200B}" { out.append("\u{200B}") }
                out.append(u)
                out.append("\u{200B}")
            } else {
                out.append(u)
            }
        }
        return String(out)
    }

    /// A snippet of indexed text as runs: the separators gone, the matches marked.
    public static func snippetParts(_ snippet: String) -> [(text: String, match: Bool)] {
        var parts: [(text: String, match: Bool)] = []
        var current = "", inMatch = false
        func close() {
            if !current.isEmpty { parts.append((current, inMatch)) }
            current = ""
        }
        for u in snippet.unicodeScalars {
            switch u {
            case "\u{200B}": continue
            case "\u{E000}": close(); inMatch = true
            case "\u{E001}": close(); inMatch = false
            default: current.unicodeScalars.append(u)
            }
        }
        close()
        return parts
    }

    /// Han ideographs, kana, Hangul syllables and jamo.
    static func isCJK(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x3040...0x30FF, 0x31F0...0x31FF,   // hiragana, katakana
             0x3400...0x4DBF, 0x4E00...0x9FFF,   // Han extension A, unified
             0xF900...0xFAFF,                    // compatibility ideographs
             0x1100...0x11FF, 0xAC00...0xD7AF,   // Hangul jamo, syllables
             0x20000...0x3134F:                  // Han extensions B to G
            true
        default:
            false
        }
    }
}

/// A user's query, checked and made into an FTS5 match expression.
public struct SearchQuery: Sendable {
    public static let maxCharacters = 256, maxTerms = 16
    /// The fewest characters a prefix needs (CJK excepted): a shorter one
    /// begins so many words that merging them all is slow, so it is searched as the word itself.
    public static let minPrefix = 3

    /// The terms as the user gave them: a word or phrase, and whether it is a prefix.
    public let terms: [(text: String, prefix: Bool)]

    public init(_ input: String) throws(Failure) {
        guard input.count <= Self.maxCharacters else {
            throw Failure.badRequest("query is \(input.count) characters; at most \(Self.maxCharacters)")
        }
        var terms: [(text: String, prefix: Bool)] = []
        var rest = Substring(input)
        while let start = rest.firstIndex(where: { !$0.isWhitespace }) {
            rest = rest[start...]
            var term: Substring, prefix = false
            if rest.first == "\"" {
                // A phrase runs to the next quote, or to the end when there is none.
                let body = rest.dropFirst()
                let end = body.firstIndex(of: "\"") ?? body.endIndex
                term = body[..<end]
                rest = end == body.endIndex ? body[end...] : body[body.index(after: end)...]
            } else {
                let end = rest.firstIndex(where: \.isWhitespace) ?? rest.endIndex
                term = rest[..<end]
                rest = rest[end...]
            }
            if term.last == "*" {
                prefix = true
                term = term.dropLast()
                while term.last == "*" { term = term.dropLast() }
            }
            // Only what holds a letter or digit can match: the tokenizer drops the rest.
            guard term.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil }) else { continue }
            if prefix, term.count < Self.minPrefix, !term.unicodeScalars.contains(where: SearchText.isCJK) { prefix = false }
            terms.append((String(term), prefix))
        }
        guard !terms.isEmpty else { throw Failure.badRequest("query has no words to search for") }
        guard terms.count <= Self.maxTerms else { throw Failure.badRequest("query has \(terms.count) words; at most \(Self.maxTerms)") }
        self.terms = terms
    }

    /// The FTS5 expression: every term a string literal (quotes doubled), all required.
    public var expression: String {
        terms.map { term in
            let literal = "\"" + SearchText.indexed(term.text).replacingOccurrences(of: "\"", with: "\"\"") + "\""
            return term.prefix ? literal + "*" : literal
        }.joined(separator: " ")
    }
}
