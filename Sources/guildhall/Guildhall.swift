// The `guildhall` executable: one binary, one subcommand per job.

import ArgumentParser
import GuildhallBuild

@main
struct Guildhall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "guildhall",
        abstract: "Guildhall: guild/channel messaging server, token minting and a client.",
        version: BuildInfo.description,
        subcommands: [Serve.self, Token.self, Client.self, Health.self, Admin.self, Restore.self])
}
