// The page's shared parts: the state every view draws from, the connection,
// and the small helpers that build elements and show errors. May touch
// nothing but the document; the other modules import from here.



export const $ = (id) => document.getElementById(id);
export const PAGE = 50;

export const state = {
  me: "",
  servers: new Map(),         // serverId -> {info, channels: Map(channelId -> info)}
  unread: new Map(),          // channelId -> UnreadInfo
  conversations: new Map(),   // conversationId -> Conversation
  currentServer: null,
  view: null,                 // {kind: "channel", serverId, channelId} | {kind: "dm", conversationId, peerId} (peerId "" for a group)
  messages: [],               // the view's messages, oldest first
  moreAbove: false,
  loadingAbove: false,
  moreBelow: false,           // the view shows an older stretch (a search hit's): newer messages are not loaded
  focus: null,                // the uid of the message a search jumped to
  typers: new Map(),          // channelId -> [{userId, until}]
  replyTo: null,
  lastTyping: 0,
  pending: [],                // files chosen for the next message: {file, progress}
  sending: false,
  members: null,              // the member pane: {serverId, list, next, memberCount, onlineCount}
  avatars: new Map(),         // userId -> their avatar's URL, from member lists
  thread: null,               // the open thread: {root, replies, channelId}
  names: new Map(),           // userId -> the name to show (nickname or display name), from member lists and profiles
  blocked: new Set(),         // the users one blocks
  home: false,                // the sidebar shows one's conversations (else the current server's channels)
  muted: new Set(),           // channels muted on this device
  groupChosen: [],            // the people picked for a new group
  firstUnread: null,          // the seq of the open channel's first unread message when it was opened (the "new" line)
  editing: null,              // the uid of the message being edited in place
};

/// How a user shows: their nickname or display name where known, else their id.
export function nameOf(userId) { return state.names.get(userId) || userId; }

export function learnNames(members) {
  for (const x of members || []) {
    const name = x.nickname || x.displayName;
    if (name) state.names.set(x.userId, name); else state.names.delete(x.userId);
    if (x.avatar) state.avatars.set(x.userId, x.avatar); else state.avatars.delete(x.userId);
  }
}

export let gh = null;

/** The connection every module sends through (set once at sign-in). */
export function useConnection(c) { gh = c; }

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c);
  return e;
}

export function showError(where, err) {
  $(where).textContent = err ? `${err.code || "error"}: ${err.message || err}` : "";
}

/** Comma or space separated user ids. */
export function userList(text) { return text.split(/[\s,]+/).filter(Boolean); }

/** "1.2 MB" for a byte count. */
export function sizeText(bytes) {
  const n = Number(bytes || 0);
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB"];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
