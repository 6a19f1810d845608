// Every limit of the protocol and the domain in one place, each with why.
// The numbers here are defaults; `Settings` (in GuildhallServer) lets an
// operator change those marked as settings (docs/configuration.md).

public enum Limits {
    /// Largest frame after login. A message body is at most 16 KiB, so 64 KiB
    /// leaves room for mentions and metadata while bounding what one read can cost.
    public static let maxFrameBytes = 64 * 1024
    /// Largest frame before login: a login request is a token and two short
    /// strings, so anything larger is not a client speaking our protocol.
    public static let maxFrameBytesBeforeLogin = 4 * 1024
    /// A message body (text bytes, or custom type plus data).
    public static let maxBodyBytes = 16 * 1024
    /// Mentions per message.
    public static let maxMentions = 100
    /// History and get-by-UID page size.
    public static let maxPageSize = 100
    /// Default history page when the client asks for 0.
    public static let defaultPageSize = 50
    /// Ids per get-servers / get-messages request.
    public static let maxIdsPerRequest = 100
    /// User and device ids: long enough for UUIDs and emails, short enough to index cheaply.
    public static let maxUserIDLength = 128
    /// Server and channel names.
    public static let maxNameLength = 100
    /// Icons and topics.
    public static let maxIconLength = 1024
    /// Opaque custom data on servers and channels.
    public static let maxCustomBytes = 4096
    /// Client-side de-duplication ids.
    public static let maxClientIDLength = 128
    /// Roles per server, `everyone` included: Discord's 250, enough for any community's ranks.
    public static let maxRolesPerServer = 250
    /// Custom body type names.
    public static let maxCustomTypeLength = 64
}
