// Stamps the build with the version (the VERSION file) and the git commit it
// was built from (scripts/build-stamp), before every build of the target that
// uses it. Touches nothing but its own work folder.

import Foundation
import PackagePlugin

@main struct BuildStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let out = context.pluginWorkDirectoryURL.appending(path: "Stamp")
        let root = context.package.directoryURL
        // A container build has no .git: its commit comes in GUILDHALL_COMMIT (docker/Dockerfile).
        let commit = ProcessInfo.processInfo.environment["GUILDHALL_COMMIT"] ?? ""
        return [.prebuildCommand(displayName: "Stamping the build with its version and commit",
                                 executable: URL(filePath: "/bin/sh"),
                                 arguments: [root.appending(path: "scripts/build-stamp").path, root.path, out.path],
                                 environment: ["GUILDHALL_COMMIT": commit],
                                 outputFilesDirectory: out)]
    }
}
