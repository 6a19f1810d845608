// The settings' last two layers, after the defaults, the file, the
// environment and the flags (Settings.swift):
//   1. values read from files other settings name (secret-file,
//      admin-token-file): container secrets;
//   2. the overrides an operator made through the admin endpoint (PUT
//      /settings), kept in <data>/admin-settings.json so that a restart and a
//      SIGHUP keep them; DELETE /settings/<key> drops one.
// Pure but for reading and writing those files; any thread.

import Foundation

extension Settings {
    /// The admin's overrides, a JSON object of setting keys and their values as text.
    static let adminOverridesFile = "admin-settings.json"
    var adminOverridesPath: String { (data as NSString).appendingPathComponent(Self.adminOverridesFile) }

    /// Both layers: what `serve` runs with, at start and after a SIGHUP.
    public func completed() throws(SettingsError) -> Settings {
        try readingFiles().withAdminOverrides()
    }

    /// The settings a file may hold instead (`<key>-file`), with where each goes.
    static let secretFiles: [(key: String, file: KeyPath<Settings, String> & Sendable, value: WritableKeyPath<Settings, String> & Sendable)] = [
        ("admin-token", \.adminTokenFile, \.adminToken),
        ("s3-access-key", \.s3AccessKeyFile, \.s3AccessKey),
        ("s3-secret-key", \.s3SecretKeyFile, \.s3SecretKey),
        ("push-secret", \.pushSecretFile, \.pushSecret),
    ]

    /// Each `<key>-file` read into its setting (whose source then names the
    /// file setting). Either may be set, not both. The token secret's file is read
    /// where the secret is (`ServerSecret.resolve`), by every command that needs it.
    public func readingFiles() throws(SettingsError) -> Settings {
        var out = self
        for (key, file, value) in Self.secretFiles where !self[keyPath: file].isEmpty {
            if !self[keyPath: value].isEmpty && sources[key] != "\(key)-file" {
                throw SettingsError(description: "set \(key) or \(key)-file, not both")
            }
            out[keyPath: value] = try Self.secret(inFile: self[keyPath: file], for: "\(key)-file")
            out.sources[key] = "\(key)-file"
        }
        return out
    }

    /// A secret's file: its text without surrounding whitespace (a trailing newline is usual), never empty.
    static func secret(inFile path: String, for key: String) throws(SettingsError) -> String {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw SettingsError(description: "\(key): cannot read \(path)")
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw SettingsError(description: "\(key): \(path) is empty") }
        return text
    }

    /// These settings with the admin's overrides applied, each with the source "admin".
    public func withAdminOverrides() throws(SettingsError) -> Settings {
        var out = self
        for (key, value) in try adminOverrides().sorted(by: { $0.key < $1.key }) {
            do { try out.override(key, value) } catch {
                throw SettingsError(description: "\(adminOverridesPath): \(error.description)")
            }
        }
        return out
    }

    /// Sets `key` as the admin's, remembering what it was beneath the first override.
    mutating func override(_ key: String, _ value: String) throws(SettingsError) {
        let before = Beneath(value: self.value(key) ?? "", source: sources[key])
        try set(key, value)
        if beneathAdmin[key] == nil { beneathAdmin[key] = before }
        sources[key] = "admin"
    }

    /// Drops the admin's override of `key`: the value the other layers give comes back.
    mutating func dropOverride(_ key: String) {
        guard let before = beneathAdmin.removeValue(forKey: key) else { return }
        try? set(key, before.value)
        sources[key] = before.source
    }

    /// The overrides kept in the data folder (none when there is no file).
    func adminOverrides() throws(SettingsError) -> [String: String] {
        guard let bytes = FileManager.default.contents(atPath: adminOverridesPath) else { return [:] }
        guard let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: String] else {
            throw SettingsError(description: "\(adminOverridesPath) must be a JSON object of setting keys and text values")
        }
        return object
    }

    /// Keeps `overrides` as the data folder's override file: written whole to
    /// a temporary file, synced, then renamed over the old one, so a crash
    /// leaves the old file or the new, never a part.
    func saveAdminOverrides(_ overrides: [String: String]) throws(SettingsError) {
        let path = adminOverridesPath, temporary = path + ".tmp"
        guard let body = try? JSONSerialization.data(withJSONObject: overrides, options: [.sortedKeys, .prettyPrinted]) else {
            throw SettingsError(description: "cannot encode the overrides")
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw SettingsError(description: "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = body.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == body.count, synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw SettingsError(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        // The rename itself is durable once the folder is synced.
        let folder = open(data, O_RDONLY)
        if folder >= 0 { fsync(folder); close(folder) }
    }
}
