// Where this node keeps files (setting files-store; docs/files.md): the
// local folder, or an S3-compatible bucket. Opened once at start and shared
// by the node's loops: the homes ask it through FileWork, the listeners
// serve the local one and send clients to the bucket. Checks what a cluster
// needs: every node must reach the same files.

import GuildhallFiles

enum FileStorage: Sendable {
    case local(LocalFileStore)
    case s3(S3FileStore)

    var store: any FileStore {
        switch self {
        case .local(let l): l
        case .s3(let s): s
        }
    }

    var local: LocalFileStore? { if case .local(let l) = self { l } else { nil } }

    /// The store `settings` name (nil for files-store = off).
    static func open(_ settings: Settings) throws(SettingsError) -> FileStorage? {
        switch settings.filesStore {
        case "off":
            return nil
        case "s3":
            for (key, value) in [("s3-endpoint", settings.s3Endpoint), ("s3-bucket", settings.s3Bucket),
                                 ("s3-access-key", settings.s3AccessKey), ("s3-secret-key", settings.s3SecretKey)] where value.isEmpty {
                throw SettingsError(description: "files-store = s3 needs \(key)")
            }
            let location = S3Location(endpoint: settings.s3Endpoint, bucket: settings.s3Bucket,
                                      credentials: SigningCredentials(accessKey: settings.s3AccessKey, secretKey: settings.s3SecretKey,
                                                                      region: settings.s3Region),
                                      pathStyle: settings.s3PathStyle == "on")
            do { return .s3(try S3FileStore(location)) } catch { throw SettingsError(description: error.description) }
        default:
            guard settings.cluster.isEmpty || settings.filesFolderShared == "on" else {
                throw SettingsError(description: "a cluster's nodes must reach the same files: set files-store = s3, or files-folder to a folder "
                                    + "every node shares and files-folder-shared = on (or files-store = off for none)")
            }
            do { return .local(try LocalFileStore(folder: settings.filesFolderPath)) } catch {
                throw SettingsError(description: error.description)
            }
        }
    }
}
