// The people one can find by name: the members of one's servers (their
// display names and nicknames), gathered a server at a time and kept a
// minute. Feeds the pickers of direct and group conversations.

import { gh, learnNames, state } from "./page.js";

const people = new Map(); // userId -> {userId, name, avatar, servers: Set of server names}
let gathered = 0;

/** Reads every server's members (up to 1000 each) when the last reading is over a minute old. */
export async function gatherPeople() {
  if (Date.now() - gathered < 60_000) return;
  gathered = Date.now();
  for (const s of state.servers.values()) {
    try {
      const r = await gh.request({ listMembers: { serverId: s.info.serverId, limit: 1000 } });
      const members = r.members.members || [];
      learnNames(members);
      for (const x of members) {
        if (x.userId === state.me) continue;
        const p = people.get(x.userId) || { userId: x.userId, servers: new Set() };
        p.name = x.displayName || x.nickname || p.name || "";
        p.avatar = x.avatar || p.avatar || "";
        p.servers.add(s.info.name);
        people.set(x.userId, p);
      }
    } catch { /* a server gone meanwhile */ }
  }
}

/** Up to `limit` people whose name or id starts a word with `text`, best first; `except` left out. */
export function findPeople(text, except = new Set(), limit = 8) {
  const q = text.trim().toLowerCase().replace(/^@/, "");
  if (!q) return [];
  const found = [];
  for (const p of people.values()) {
    if (except.has(p.userId)) continue;
    const name = (p.name || "").toLowerCase(), id = p.userId.toLowerCase();
    const rank = name.startsWith(q) || id.startsWith(q) ? 0 : name.split(/\s+/).some((w) => w.startsWith(q)) ? 1 : name.includes(q) || id.includes(q) ? 2 : -1;
    if (rank >= 0) found.push({ rank, p });
  }
  found.sort((a, b) => a.rank - b.rank || (a.p.name || a.p.userId).localeCompare(b.p.name || b.p.userId));
  return found.slice(0, limit).map(({ p }) => ({ key: p.userId, label: p.name || p.userId, detail: p.name ? p.userId : [...p.servers].slice(0, 2).join(", ") }));
}
