// docs/configuration.md, generated from the one table of settings
// (`Settings.specs`) by `guildhall serve --print-config-reference` (`make
// docs`); ConfigurationReferenceTests fails when the file and the table differ.
// Pure.

extension Settings {
    /// Every setting as a Markdown reference: key, environment variable, default, whether live, meaning.
    public static func reference() -> String {
        let defaults = Settings()
        var out = """
        # Configuration

        <!-- Generated from Settings.specs by `guildhall serve --print-config-reference` (`make docs`). Do not edit: a test fails when it is stale. -->

        Settings come from, in order, each beating the one before:
        1. the defaults below;
        2. the file given with `--config` (`key = value` lines, `#` comments);
        3. `GUILDHALL_*` environment variables;
        4. flags: `--data`, `--listen`, `--set KEY=VALUE`;
        5. files other settings name: `secret-file`, `admin-token-file` (container secrets);
        6. changes made through the admin endpoint (`PUT /settings`), kept in
           `<data>/admin-settings.json` until `DELETE /settings/<key>` (docs/operating.md).

        `guildhall serve --print-config` prints every setting with its meaning and the value it
        would use; that output is a valid configuration file. A setting marked live applies on
        SIGHUP (which re-reads the file, the environment and the flags) and through `PUT
        /settings`, without a restart; the others wait for the next start, with a warning in the log.

        | setting | environment | default | live | meaning |
        | --- | --- | --- | --- | --- |

        """
        for spec in specs {
            let value = spec.key == "loops" ? Settings.defaultLoopsText : spec.get(defaults)
            let shown = value.isEmpty ? "empty" : "`\(value)`"
            out += "| `\(spec.key)` | `\(spec.environmentName)` | \(shown) | \(spec.live ? "live" : "") | \(cell(spec.doc)) |\n"
        }
        return out
    }

    /// Text a table cell holds as it reads: a `|` would end the cell.
    private static func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
}
