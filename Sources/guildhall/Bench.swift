// `guildhall bench`: benchmarks that print their parameters and figures
// (and JSON with --json). They start their own server in-process on
// 127.0.0.1:0 with a temporary data folder, and remove it afterwards.

import ArgumentParser

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a benchmark and print its figures.",
        subcommands: [FanoutBench.self])
}
