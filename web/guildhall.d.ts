// Types for guildhall.js, Guildhall's protocol for browsers (README "Web client"):
// the connection, its events and its requests. Bodies and results follow
// Proto/guildhall.proto in proto3's JSON mapping (64-bit numbers are strings,
// enums are their names); they are typed loosely here, by name. A test
// (WebClientTests) checks the names below against Proto/.

/** A request's body: one field, named for the request kind (e.g. { sendMessage: { channelId, body: { text } } }). */
export type RequestName =
  | "login"
  | "heartbeat"
  | "resume"
  | "ack"
  | "logout"
  | "createServer"
  | "updateServer"
  | "deleteServer"
  | "getServers"
  | "listMyServers"
  | "joinServer"
  | "inviteMember"
  | "acceptInvite"
  | "leaveServer"
  | "kickMember"
  | "setMemberRole"
  | "listMembers"
  | "createChannel"
  | "updateChannel"
  | "deleteChannel"
  | "listChannels"
  | "sendMessage"
  | "getHistory"
  | "getMessages"
  | "setReceivedStatus"
  | "getReceivedStatus"
  | "requestReceipt"
  | "respondReceipts"
  | "getReceiptReaders"
  | "getReceiptInfo"
  | "subscribe"
  | "setSubscribeMode"
  | "markRead"
  | "getUnread"
  | "sendTyping"
  | "enterAsGuest"
  | "leaveAsGuest"
  | "banMember"
  | "unbanMember"
  | "openConversation"
  | "listConversations"
  | "sendDirectMessage"
  | "markDelivered"
  | "sendReadReceipt"
  | "ackMessageRead"
  | "ackConversationRead"
  | "getSentStatus"
  | "createRole"
  | "updateRole"
  | "deleteRole"
  | "grantRole"
  | "takeBackRole"
  | "setPermissionOverride"
  | "listRoles"
  | "getPermissions"
  | "recallMessage"
  | "editMessage"
  | "deleteMessage"
  | "addReaction"
  | "removeReaction"
  | "getThread"
  | "searchMessages"
  | "createUpload"
  | "searchServers"
  | "transferOwnership"
  | "setPresence"
  | "setIdle"
  | "createInviteCode"
  | "listInviteCodes"
  | "revokeInviteCode"
  | "lookUpInvite"
  | "joinByInvite"
  | "timeoutMember"
  | "pinMessage"
  | "unpinMessage"
  | "listPins"
  | "getAuditLog"
  | "setProfile"
  | "getUsers"
  | "setNickname"
  | "registerPushToken"
  | "unregisterPushToken"
  | "blockUser"
  | "unblockUser"
  | "listBlockedUsers"
  | "createGroup"
  | "updateGroup"
  | "addGroupMembers"
  | "removeGroupMember"
  | "leaveGroup"
  | "setDmPrivacy"
  | "getDmPrivacy"
  | "createWebhook"
  | "listWebhooks"
  | "deleteWebhook"
  | "listReactors";

/** A server event's body, by kind: what `addEventListener(kind, …)` hears. */
export type EventName =
  | "message"
  | "notification"
  | "closed"
  | "unreadChanged"
  | "unreadStatus"
  | "typing"
  | "syncCompleted"
  | "resumed"
  | "receivedStatus"
  | "receiptRequest"
  | "receiptResponse"
  | "directReceipt"
  | "messageUpdate"
  | "presence"
  | "memberList";

export type RequestBody = { [K in RequestName]?: Record<string, unknown> };

/** A failed request: the server's error code name (e.g. "NOT_FOUND"), or UNAVAILABLE / TIMEOUT from the connection itself. */
export interface RequestError {
  code: string;
  message: string;
}

export type ConnectionState = "connecting" | "connected" | "reconnecting" | "closed";

export interface StateDetail {
  state: ConnectionState;
  reason?: string;
}

export interface ReadyDetail {
  /** The LoginResult: userId, deviceId, sessionId, limits, … */
  login: Record<string, any>;
  /** A new session (subscriptions are gone), not a resumed one. */
  fresh: boolean;
}

export interface EventDetail {
  /** The event's body (a ChannelMessage for "message", …). */
  body: Record<string, any>;
  /** The whole Event: seq, unread, offline, left, cursor, and the body. */
  event: Record<string, any>;
}

export interface GuildhallConnectionOptions {
  /** ws(s)://HOST/ws */
  url: string;
  /** The token the application's backend minted. */
  token: string;
  /** Tell senders a direct message reached this device (default true). */
  deliveryReceipts?: boolean;
  /** How long to wait for the login's answer before giving it up and trying again (default 15000 ms). */
  loginTimeoutMs?: number;
}

export declare class GuildhallConnection extends EventTarget {
  constructor(options: GuildhallConnectionOptions);
  readonly state: ConnectionState;
  /** The LoginResult once logged in; null while not. */
  readonly login: Record<string, any> | null;
  /** Opens the connection, logs in, and from then on reconnects and resumes by itself. */
  connect(): void;
  /** Logs out: the session ends for good. */
  logout(): void;
  /** Sends one request; resolves with its result ({ message: {…} }), rejects with a RequestError. */
  request(body: RequestBody, timeoutMs?: number): Promise<Record<string, any>>;
  addEventListener(type: "state", listener: (e: CustomEvent<StateDetail>) => void): void;
  addEventListener(type: "ready", listener: (e: CustomEvent<ReadyDetail>) => void): void;
  addEventListener(type: EventName, listener: (e: CustomEvent<EventDetail>) => void): void;
}
