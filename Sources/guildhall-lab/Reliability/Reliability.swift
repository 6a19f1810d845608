// `guildhall-lab reliability`: the docs/reliability.md tests against this binary as a
// server on loopback (docs/reliability.md). Each test prints its figures and PASS or
// FAIL against the criterion written there; the last line counts them. The
// quick profile scales counts and durations down (it runs in `make test`);
// the full profile is docs/reliability.md's own numbers (`make reliability`).
// Everything targets 127.0.0.1, is bounded in count and time, and stops only
// the processes it started, by their PID.

import ArgumentParser
import Foundation

struct Reliability: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the reliability tests (docs/reliability.md) against this binary on loopback.")

    @Option(help: "quick (scaled down, for make test) or full (docs/reliability.md's numbers).") var profile = "quick"
    @Option(help: "Only these tests, comma separated (R4,S4,D5,L1).") var only = ""
    @Option(help: "Random seed (logged; a failure repeats with it).") var seed: UInt64?
    @Option(help: "R2's and R3's message rates as a percentage of docs/reliability.md's (to find what a machine sustains).") var ratePercent = 100

    func run() throws {
        guard let p = ReliabilityProfile(rawValue: profile) else { throw ValidationError("--profile takes quick or full") }
        let seed = seed ?? UInt64.random(in: 1...UInt64.max)
        guard (1...1000).contains(ratePercent) else { throw ValidationError("--rate-percent takes 1 to 1000") }
        LoadChecks.ratePercent = ratePercent
        let wanted = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() })
        // Writes to connections the server has cut must fail with EPIPE, not kill the runner.
        signal(SIGPIPE, SIG_IGN)
        print("reliability: profile \(p.rawValue), seed \(seed)")
        var passed = 0, failed = 0
        for check in ReliabilityChecks.all where wanted.isEmpty || wanted.contains(check.id) {
            let started = Date()
            var outcome: CheckOutcome
            do { outcome = try check.run(p, seed) } catch { outcome = CheckOutcome(passed: false, figures: "error: \(error)") }
            // Each test ends with the leak check of the servers it started.
            let leaks = ReliabilityServer.finishAll()
            outcome = CheckOutcome(passed: outcome.passed && leaks.isEmpty,
                                   figures: outcome.figures + (leaks.isEmpty ? "; no leak" : "; LEAK: " + leaks.joined(separator: ", ")))
            let seconds = Date().timeIntervalSince(started)
            print(String(format: "%@ %@: %@ (%.1f s) %@", check.id, check.title, outcome.figures, seconds, outcome.passed ? "PASS" : "FAIL"))
            fflush(nil)
            if outcome.passed { passed += 1 } else { failed += 1 }
        }
        print("\(passed) passed, \(failed) failed")
        if failed > 0 { throw ExitCode(1) }
    }
}

enum ReliabilityProfile: String, Sendable {
    case quick, full
}

struct CheckOutcome {
    let passed: Bool
    let figures: String

    /// One run of a check whose latency bound is judged apart from the rest.
    struct Run {
        let restPassed: Bool
        let latencyPassed: Bool
        let figures: String
        /// The latency figures alone, for the note of a run that missed only them.
        let latency: String
    }

    /// `run` again, up to twice, while it misses only its latency bound; the last run decides. A
    /// defect misses every time; a scheduler's hiccup on two cores shared by the server, the load
    /// and the probes does not (a lone p99 here has swung from 2 to 385 ms between minutes).
    static func rerunningLatencyMisses(_ run: () throws -> Run) rethrows -> CheckOutcome {
        var missed: [String] = []
        while true {
            let r = try run()
            if r.restPassed && !r.latencyPassed && missed.count < 2 { missed.append(r.latency); continue }
            let note = missed.map { " (a run missed only its latency, \($0); run again)" }.joined()
            return CheckOutcome(passed: r.restPassed && r.latencyPassed, figures: r.figures + note)
        }
    }
}

struct ReliabilityCheck: Sendable {
    let id: String
    let title: String
    let run: @Sendable (ReliabilityProfile, UInt64) throws -> CheckOutcome
}

enum ReliabilityChecks {
    static let all: [ReliabilityCheck] = [
        ReliabilityCheck(id: "R1", title: "idle connections held with heartbeats", run: LoadChecks.idleConnections),
        ReliabilityCheck(id: "R2", title: "throughput into many channels", run: LoadChecks.throughput),
        ReliabilityCheck(id: "R3", title: "soak at half of R2", run: LoadChecks.soak),
        ReliabilityCheck(id: "R4", title: "server full", run: ResourceChecks.serverFull),
        ReliabilityCheck(id: "R5", title: "open-file limit", run: ResourceChecks.fileLimit),
        ReliabilityCheck(id: "S1", title: "one slow subscriber beside healthy ones", run: SlowConsumerChecks.oneSlowSubscriber),
        ReliabilityCheck(id: "S2", title: "hovering under the soft cap", run: SlowConsumerChecks.hoverUnderSoftCap),
        ReliabilityCheck(id: "S3", title: "a thousand slow consumers at once", run: ManySlowConsumers.check),
        ReliabilityCheck(id: "S4", title: "frozen subscriber", run: BackpressureChecks.frozenSubscriber),
        ReliabilityCheck(id: "D1", title: "kill -9 while sends stream in", run: CrashChecks.killDuringSends),
        ReliabilityCheck(id: "D2", title: "resend after kill -9 with the same client ids", run: CrashChecks.resendAfterCrash),
        ReliabilityCheck(id: "D4", title: "disk full, and A7 what the client sees of it", run: StorageChecks.diskFull),
        ReliabilityCheck(id: "D5", title: "SIGTERM with clients writing", run: ShutdownChecks.sigtermWhileWriting),
        ReliabilityCheck(id: "B2", title: "malformed frames from thousands of connections", run: BadInputChecks.malformedFrames),
        ReliabilityCheck(id: "B3", title: "oversize frames and slowloris", run: BadInputChecks.oversizeAndSlowloris),
        ReliabilityCheck(id: "A1", title: "requests before login, and A2 login deadline, bad token, second login", run: AuthChecks.beforeAndAroundLogin),
        ReliabilityCheck(id: "A3", title: "guest and read-only member cannot send", run: AccessChecks.cannotSend),
        ReliabilityCheck(id: "A4", title: "foreign ids answered as missing ones, every request kind", run: AccessChecks.foreignIDs),
        ReliabilityCheck(id: "A5", title: "kick, ban and role change mid-session", run: AccessChecks.removal),
        ReliabilityCheck(id: "A6", title: "guessing at one account", run: AuthChecks.bruteForce),
        ReliabilityCheck(id: "L1", title: "silent client", run: LivenessChecks.silentClient),
        ReliabilityCheck(id: "L2", title: "resume", run: LivenessChecks.resume),
        ReliabilityCheck(id: "L3", title: "reconnect storm", run: LivenessChecks.reconnectStorm),
    ]
}
