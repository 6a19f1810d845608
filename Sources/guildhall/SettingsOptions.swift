// The options every subcommand shares to find its settings (and so the
// token secret): defaults, then the config file, then GUILDHALL_* variables,
// then flags.

import ArgumentParser
import Foundation
import GuildhallServer

struct SettingsOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (key = value lines).")
    var config: String?

    @Option(name: .long, help: "Data folder (default ./data).")
    var data: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("Any setting, as KEY=VALUE; repeatable.", valueName: "KEY=VALUE"))
    var overrides: [String] = []

    /// Resolves settings; `listen` is the subcommand's own flag, if any.
    func resolve(listen: String? = nil) throws -> Settings {
        var settings = Settings()
        if let config {
            guard let data = FileManager.default.contents(atPath: config) else {
                throw ValidationError("cannot read config file \(config)")
            }
            try settings.apply(configFile: String(decoding: data, as: UTF8.self))
        }
        try settings.apply(environment: ProcessInfo.processInfo.environment)
        for item in overrides {
            guard let eq = item.firstIndex(of: "=") else { throw ValidationError("--set expects KEY=VALUE, not \(item)") }
            try settings.set(String(item[..<eq]), String(item[item.index(after: eq)...]))
            settings.sources[String(item[..<eq])] = "flag"
        }
        if let data { try settings.set("data", data); settings.sources["data"] = "flag" }
        if let listen { try settings.set("listen", listen); settings.sources["listen"] = "flag" }
        return settings
    }
}

extension SettingsError: LocalizedError {
    public var errorDescription: String? { description }
}
