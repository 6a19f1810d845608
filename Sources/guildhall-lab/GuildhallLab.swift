// `guildhall-lab`: the benchmarks and the reliability runner, kept out of the
// product binary (docs/performance.md, docs/reliability.md). `make bench`,
// `make reliability` and `make test` use it; the image does not ship it.

import ArgumentParser
import GuildhallBuild

@main
struct GuildhallLab: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "guildhall-lab",
        abstract: "Guildhall's benchmarks and reliability tests (not part of the server's image).",
        version: BuildInfo.description,
        subcommands: [Bench.self, Reliability.self])
}
