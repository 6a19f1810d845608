// One command line, parsed from words ("send 42 hello there", with optional
// key=value words) or from a JSON object ({"cmd":"send","channel":42,"text":"hello there"}).

import ArgumentParser
import Foundation

struct ParsedCommand {
    var name: String
    var args: [String: String] = [:]

    init(json line: String) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let cmd = object["cmd"] as? String else {
            throw ValidationError("expected a JSON object with a \"cmd\" string")
        }
        name = cmd
        for (key, value) in object where key != "cmd" {
            switch value {
            case let list as [Any]: args[key] = list.map { "\($0)" }.joined(separator: ",")
            default: args[key] = "\(value)"
            }
        }
    }

    init(words line: String, table: CommandTable) throws {
        var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        name = words.removeFirst()
        guard let spec = table.specs[name] else {
            if name == "help" || name == "quit" || name == "exit" { return }
            throw ValidationError("unknown command \(name); type help")
        }
        var positional: [String] = []
        for word in words {
            if let eq = word.firstIndex(of: "="), spec.options.contains(String(word[..<eq])) {
                args[String(word[..<eq])] = String(word[word.index(after: eq)...])
            } else {
                positional.append(word)
            }
        }
        for (index, param) in spec.params.enumerated() where index < positional.count {
            let isLast = index == spec.params.count - 1
            args[param] = isLast && spec.restIsText ? positional[index...].joined(separator: " ") : positional[index]
        }
        if spec.restIsText == false, positional.count > spec.params.count, let last = spec.params.last {
            args[last] = positional[(spec.params.count - 1)...].joined(separator: ",")
        }
    }
}
