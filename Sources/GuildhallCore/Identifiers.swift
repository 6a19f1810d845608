// Identifiers of the domain, and the generator of message UIDs.
// Pure values; the generator is owned by whoever calls it (the loop thread).

/// A server (guild) id.
public typealias ServerID = UInt64
/// A channel id.
public typealias ChannelID = UInt64
/// A message UID: milliseconds since `UIDGenerator.epoch` (41 bits), node id
/// (10 bits), counter (12 bits). Unique across nodes, sortable by time.
public typealias MessageUID = UInt64
/// A user id, as carried in the login token.
public typealias UserID = String
/// A device id, as carried in the login token.
public typealias DeviceID = String

/// Makes globally unique, time-sortable 64-bit ids for messages, servers and channels.
///
/// Owned by one thread. When the counter of a millisecond runs out, the
/// generator borrows the next millisecond instead of waiting, and it never goes
/// backwards when the wall clock does.
public struct UIDGenerator: Sendable {
    /// 2024-01-01T00:00:00Z in Unix milliseconds.
    public static let epoch: UInt64 = 1_704_067_200_000
    public static let maxNode: UInt64 = (1 << 10) - 1
    private let node: UInt64
    /// Each loop of a node makes ids of its own lane: the counter's low
    /// bits are the lane, so loops never issue the same id without sharing
    /// anything. With one lane (one loop) the whole counter is the count.
    private let lane: UInt64
    private let laneBits: UInt64
    private let counterLimit: UInt64
    private var lastMillis: UInt64 = 0
    private var counter: UInt64 = 0

    public init(node: UInt64, lane: Int = 0, lanes: Int = 1) {
        precondition(node <= Self.maxNode, "node id must be at most \(Self.maxNode)")
        precondition(lanes >= 1 && lanes <= 64 && lane >= 0 && lane < lanes, "lane \(lane) of \(lanes)")
        self.node = node
        self.lane = UInt64(lane)
        laneBits = lanes == 1 ? 0 : UInt64(64 - (lanes - 1).leadingZeroBitCount)
        counterLimit = 0xFFF >> laneBits
    }

    /// Continues after `uid`, so that a restarted node never reissues an id
    /// it already used, whatever lanes made it.
    public mutating func resume(after uid: UInt64) {
        let millis = uid >> 22
        let next = ((uid & 0xFFF) >> laneBits) + 1
        if millis > lastMillis || (millis == lastMillis && next > counter) {
            lastMillis = millis
            counter = next
        }
    }

    public mutating func next(nowMillis: UInt64) -> UInt64 {
        let now = nowMillis > Self.epoch ? nowMillis - Self.epoch : 0
        if now > lastMillis {
            lastMillis = now
            counter = 0
        } else if counter > counterLimit {
            lastMillis += 1
            counter = 0
        }
        let uid = (lastMillis << 22) | (node << 12) | (counter << laneBits) | lane
        counter += 1
        return uid
    }

    /// The smallest UID that could have been made at `millis`.
    public static func floor(atMillis millis: UInt64) -> UInt64 {
        (millis > epoch ? millis - epoch : 0) << 22
    }

    /// The Unix milliseconds a UID was made at.
    public static func millis(of uid: UInt64) -> UInt64 { (uid >> 22) + epoch }
}
