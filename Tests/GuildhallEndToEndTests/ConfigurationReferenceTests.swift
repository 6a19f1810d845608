// docs/configuration.md is what the settings' table generates (`make docs`),
// and the binary prints the same: a setting added, renamed or re-documented
// without regenerating the file fails here.

import Foundation
import Testing
@testable import GuildhallServer

@Suite struct ConfigurationReferenceTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/configuration.md").path

    @Test func theConfigurationDocIsTheTableOfSettings() throws {
        let file = try String(contentsOfFile: Self.path, encoding: .utf8)
        #expect(file == Settings.reference(), "docs/configuration.md is stale: run `make docs`")
        for spec in Settings.specs { #expect(file.contains("| `\(spec.key)` | `\(spec.environmentName)` |"), "\(spec.key)") }
        let (status, printed) = try Binary.run(["serve", "--print-config-reference"])
        #expect(status == 0 && printed == file)
    }
}
