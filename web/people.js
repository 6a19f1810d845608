// The people one can find by name: one's server-mates, searched on the
// servers themselves (ListMembers{query}: a word of the shown name, or the
// id, starting with what was typed), the first servers' answers merged.
// Feeds the pickers of direct and group conversations.

import { gh, learnNames, state } from "./page.js";

/** How many of one's servers a search asks, and how many people each answers with. */
const SERVERS = 20, EACH = 10;

/** Up to `limit` people matching `text`, best first (a match at the start of the name or id first); `except` left out. */
export async function findPeople(text, except = new Set(), limit = 8) {
  const q = text.trim().replace(/^@/, "");
  if (!q) return [];
  const servers = [...state.servers.values()].slice(0, SERVERS);
  const pages = await Promise.all(servers.map((s) =>
    gh.request({ listMembers: { serverId: s.info.serverId, query: q, limit: EACH } }).then((r) => [s, r.members.members || []], () => [s, []])));
  const people = new Map();
  for (const [s, members] of pages) {
    learnNames(members);
    for (const x of members) {
      if (x.userId === state.me || except.has(x.userId)) continue;
      const p = people.get(x.userId) || { userId: x.userId, name: x.displayName || x.nickname || "", servers: [] };
      p.servers.push(s.info.name);
      people.set(x.userId, p);
    }
  }
  const lower = q.toLowerCase();
  const rank = (p) => ((p.name || "").toLowerCase().startsWith(lower) || p.userId.toLowerCase().startsWith(lower) ? 0 : 1);
  return [...people.values()]
    .sort((a, b) => rank(a) - rank(b) || (a.name || a.userId).localeCompare(b.name || b.userId))
    .slice(0, limit)
    .map((p) => ({ key: p.userId, label: p.name || p.userId, detail: p.name ? p.userId : p.servers.slice(0, 2).join(", ") }));
}
