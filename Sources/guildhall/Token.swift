// `guildhall token`: mint a login token with the server's secret.

import ArgumentParser
import Foundation
import GuildhallCore
import GuildhallServer

struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mint a signed login token.",
        discussion: "Uses the same secret as `guildhall serve` with the same settings (the secret setting, or <data>/secret).")

    @OptionGroup var settingsOptions: SettingsOptions

    @Option(name: .long, help: "User id.")
    var user: String

    @Option(name: .long, help: "Device id (default: \"default\").")
    var device = "default"

    @Option(name: .long, help: "Seconds until the token expires (default 86400).")
    var ttl: UInt64 = 86_400

    func run() throws {
        print(try Self.mint(user: user, device: device, ttl: ttl, settings: settingsOptions.resolve()))
    }

    static func mint(user: String, device: String, ttl: UInt64, settings: Settings) throws -> String {
        if let problem = Validation.userIDProblem(user) ?? Validation.userIDProblem(device) {
            throw ValidationError(problem)
        }
        let secret = try ServerSecret.resolve(settings)
        let expiry = systemClock() / 1000 + ttl
        return AccessToken(user: user, device: device, expiry: expiry).signed(with: secret)
    }
}
