// Presence (docs/features.md "Presence"): how a user shows to others, worked
// out at the user's home, which admits every session of theirs.
//
//   choice        sessions                  shown
//   ----------    ----------------------    --------------------------
//   any           none                      offline, last seen
//   invisible     any                       offline, last seen (frozen)
//   idle          some                      idle
//   dnd           some                      do-not-disturb
//   online        some, all of them idle    idle
//   online        some, one not idle        online
//
// "Last seen" is the time the shown status last became offline: a user who
// goes invisible looks exactly like one who logged out then. The book says
// when what others see changed (`settle`), so each change is told once.
// Pure; owned by the home's loop thread.

/// The statuses, with the protocol's numbers.
public enum PresenceStatus: Int, Sendable, Codable, CaseIterable {
    case offline = 0
    case online = 1
    case idle = 2
    case doNotDisturb = 3
    /// Chosen only: shown as offline.
    case invisible = 4
}

/// What a user chose (`SetPresence`); kept across restarts.
public struct PresenceChoice: Sendable, Equatable, Codable {
    /// Online (shown from the sessions), idle, do-not-disturb or invisible.
    public var status: PresenceStatus
    public var text: String

    public init(status: PresenceStatus = .online, text: String = "") {
        self.status = status
        self.text = text
    }

    public static let maxTextLength = 128

    /// Why a choice may not be made, or nil.
    public var problem: String? {
        if status == .offline { return "one cannot choose to be offline; choose PRESENCE_INVISIBLE to be shown as offline" }
        if text.count > Self.maxTextLength { return "custom_text is \(text.count) characters; at most \(Self.maxTextLength)" }
        return nil
    }
}

/// What others see of a user.
public struct ShownPresence: Sendable, Equatable {
    public let user: UserID
    /// Never `.invisible`.
    public let status: PresenceStatus
    /// "" while offline.
    public let text: String
    /// While offline: when the user was last seen (0: never); 0 otherwise.
    public let lastSeen: UInt64

    public init(user: UserID, status: PresenceStatus, text: String, lastSeen: UInt64) {
        self.user = user
        self.status = status
        self.text = text
        self.lastSeen = lastSeen
    }

    public var isOffline: Bool { status == .offline }
}

/// The users homed here: their choices, sessions and what others last heard.
public struct PresenceBook: Sendable {
    public private(set) var choices: [UserID: PresenceChoice] = [:]
    public private(set) var lastSeen: [UserID: UInt64] = [:]
    /// Each user's sessions, with whether each is idle.
    private var sessions: [UserID: FewByKey<Bool>] = [:]
    /// What others were last told, for users not offline.
    private var told: [UserID: ShownPresence] = [:]

    public init() {}

    /// A stored choice and last-seen time (at start).
    public mutating func load(_ user: UserID, _ choice: PresenceChoice, lastSeen: UInt64) {
        if choice != PresenceChoice() { choices[user] = choice }
        if lastSeen > 0 { self.lastSeen[user] = lastSeen }
    }

    public mutating func choose(_ user: UserID, _ choice: PresenceChoice) {
        choices[user] = choice == PresenceChoice() ? nil : choice
    }

    public func choice(of user: UserID) -> PresenceChoice { choices[user] ?? PresenceChoice() }

    public mutating func opened(_ user: UserID, session: SessionKey) { sessions[user, default: FewByKey()][session] = false }

    public mutating func closed(_ user: UserID, session: SessionKey) {
        sessions[user]?[session] = nil
        if sessions[user]?.isEmpty == true { sessions[user] = nil }
    }

    /// Returns whether the session was known.
    @discardableResult
    public mutating func setIdle(_ user: UserID, session: SessionKey, _ idle: Bool) -> Bool {
        guard sessions[user]?[session] != nil else { return false }
        sessions[user]![session] = idle
        return true
    }

    /// What others see now.
    public func presence(of user: UserID) -> ShownPresence {
        let choice = choice(of: user)
        guard let mine = sessions[user], choice.status != .invisible else {
            return ShownPresence(user: user, status: .offline, text: "", lastSeen: lastSeen[user] ?? 0)
        }
        let status: PresenceStatus = switch choice.status {
        case .idle: .idle
        case .doNotDisturb: .doNotDisturb
        default: mine.values.allSatisfy { $0 } ? .idle : .online
        }
        return ShownPresence(user: user, status: status, text: choice.text, lastSeen: 0)
    }

    /// What others see now, if it differs from what they were last told
    /// (which it then becomes). Becoming offline sets the last-seen time to `now`.
    public mutating func settle(_ user: UserID, now: UInt64) -> ShownPresence? {
        let shown = presence(of: user)
        if shown.isOffline {
            guard told.removeValue(forKey: user) != nil else { return nil }
            lastSeen[user] = now
            return ShownPresence(user: user, status: .offline, text: "", lastSeen: now)
        }
        guard shown != told[user] else { return nil }
        told[user] = shown
        return shown
    }

    /// Forgets the users `leaves` picks (their home moved to another node, which
    /// shows them as told here until their sessions log in again there).
    public mutating func forget(where leaves: (UserID) -> Bool) {
        sessions = sessions.filter { !leaves($0.key) }
        told = told.filter { !leaves($0.key) }
        choices = choices.filter { !leaves($0.key) }
        lastSeen = lastSeen.filter { !leaves($0.key) }
    }

    /// Another home saw the user's last session end at `time` (its node left
    /// the cluster), before this home took the user over: the last-seen time,
    /// unless the user is online here or was seen later. Returns whether it changed.
    public mutating func sawLeave(_ user: UserID, at time: UInt64) -> Bool {
        guard sessions[user] == nil, told[user] == nil, time > lastSeen[user] ?? 0 else { return false }
        lastSeen[user] = time
        return true
    }

    /// What others were last told of `user`, if not offline.
    public func told(_ user: UserID) -> ShownPresence? { told[user] }

    /// Users not offline now, as others were told.
    public var shownOnline: [ShownPresence] { Array(told.values) }

    /// A user taken over from another home (their shard moved here): what that
    /// home told others, so the next `settle` compares with it. A session of
    /// theirs that logs in here again then changes nothing others see; none
    /// logging in makes them offline, with a last-seen time.
    public mutating func takeOver(_ user: UserID, told shown: ShownPresence) {
        guard told[user] == nil, !shown.isOffline else { return }
        told[user] = shown
    }
}
