import ArgumentParser
struct MatrixBench: ParsableCommand { static let configuration = CommandConfiguration(commandName: "matrix"); func run() throws {} }
