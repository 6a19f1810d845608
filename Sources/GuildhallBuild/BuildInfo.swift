// What this binary is: its version and the commit it was built from, stamped
// at build time by the BuildStamp plugin (scripts/build-stamp). A module of
// its own so that a new commit recompiles only this file.

public enum BuildInfo {
    /// The version, from the VERSION file (semantic versioning; docs/protocol.md, "Compatibility").
    public static var version: String { Stamp.version }
    /// The git commit built, "-dirty" when the tree had changes, "unknown" outside a git checkout.
    public static var commit: String { Stamp.commit }
    /// "0.15.0 (commit 1a2b3c4d5e6f)".
    public static var description: String { "\(version) (commit \(commit))" }
}
