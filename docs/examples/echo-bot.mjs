// A minimal Guildhall bot (docs/web-client.md, "A minimal bot"): it answers
// "!echo words" in one channel with "words", as a reply. It runs on Node 22
// (or Node 20 with --experimental-websocket) beside a copy of guildhall.js,
// fetched from the server: curl -O http://HOST:7402/guildhall.js
//
//   GUILDHALL_URL=ws://127.0.0.1:7402/ws GUILDHALL_TOKEN=… SERVER_ID=… CHANNEL_ID=… node echo-bot.mjs
import { GuildhallConnection } from "./guildhall.js";

const { GUILDHALL_URL, GUILDHALL_TOKEN, SERVER_ID, CHANNEL_ID } = process.env;
const gh = new GuildhallConnection({ url: GUILDHALL_URL, token: GUILDHALL_TOKEN });

gh.addEventListener("state", ({ detail }) => console.log("bot:", detail.state, detail.reason || ""));

gh.addEventListener("ready", async ({ detail }) => {
  // A fresh session has no subscriptions; a resumed one kept them.
  if (detail.fresh) {
    await gh.request({ subscribe: { type: "CHANNEL_MSG", operation: "SUBSCRIBE", targets: [{ serverId: SERVER_ID, channelId: CHANNEL_ID }] } });
  }
  console.log("bot: ready as", detail.login.userId);
});

gh.addEventListener("message", async ({ detail }) => {
  const m = detail.body;
  const words = m.body?.text?.match(/^!echo (.+)/s)?.[1];
  if (!words || m.senderId === gh.login?.userId) return;
  try {
    await gh.request({ sendMessage: { channelId: m.channelId, body: { text: words }, replyTo: m.uid } });
  } catch (err) {
    console.log("bot: not sent:", err.code, err.message);
  }
});

gh.connect();
