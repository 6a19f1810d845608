// Invite links: the join screen a link opens, and making a link to share.

import { chooseServer, loadServers, serverIcon } from "./lists.js";
import { $, gh, showError, state } from "./page.js";
import { openView } from "./view.js";

// ---- invite links ----

/** The join screen of an invite link: what it leads to, and Join. */
export async function showInvite(code) {
  history.replaceState(null, "", "/" + location.search);
  $("invite-screen").hidden = false;
  $("invite-join").hidden = true;
  showError("invite-error", null);
  try {
    const c = (await gh.request({ lookUpInvite: { code } })).inviteCode;
    $("invite-icon").replaceChildren(serverIcon(c));
    $("invite-server").textContent = c.serverName;
    const n = Number(c.memberCount || 0);
    $("invite-details").textContent = `${n} member${n === 1 ? "" : "s"} · lands in # ${c.channelName}`;
    $("invite-join").hidden = false;
    $("invite-join").onclick = async () => {
      try {
        const landed = (await gh.request({ joinByInvite: { code } })).inviteCode;
        $("invite-screen").hidden = true;
        await loadServers();
        chooseServer(landed.serverId);
        await openView({ kind: "channel", serverId: landed.serverId, channelId: landed.channelId });
      } catch (err) { showError("invite-error", err); }
    };
  } catch (err) {
    $("invite-server").textContent = "";
    $("invite-details").textContent = "";
    showError("invite-error", err.code === "NOT_FOUND" ? { code: "invalid", message: "this invite is invalid or has expired" } : err);
  }
}

export async function makeInvite() {
  try {
    const c = (await gh.request({ createInviteCode: { serverId: state.currentServer } })).inviteCode;
    $("invite-link").value = `${location.origin}/invite/${c.code}`;
    $("invite-made").hidden = false;
    $("invite-link").select();
  } catch (err) { showError("view-error", err); }
}

/** Hooks this module's controls to the page. */
export function wireInvites() {
  $("invite-people").addEventListener("click", () => makeInvite());
  $("invite-cancel").addEventListener("click", () => { $("invite-screen").hidden = true; });
}
