/// The web console served at `GET /`: one self-contained page (inline CSS and JavaScript, no external
/// assets) that shows the sound server, the queue and the last 50 announcements, sends announcements, skips,
/// clears and sets the volume through the HTTP API. Live updates come from `/events`, read with `fetch()` and
/// parsed here (EventSource cannot send the `Authorization` header), reconnecting with backoff. Everything
/// the server sends is shown through `textContent`, never as markup. scripts/console-check.py drives it in a
/// real browser (ConsoleBrowserTests).
enum ConsolePage {
    static let html: String = #"""
<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>Bobao 播报控制台</title>
<style>
:root{--bg:#f3f4f6;--card:#fff;--fg:#111827;--mute:#6b7280;--line:#e5e7eb;--accent:#2563eb;--ok:#15803d;--warn:#b45309;--bad:#b91c1c;--chip:#eef2ff}
@media (prefers-color-scheme:dark){:root{--bg:#0f172a;--card:#1e293b;--fg:#e5e7eb;--mute:#94a3b8;--line:#334155;--accent:#60a5fa;--ok:#4ade80;--warn:#fbbf24;--bad:#f87171;--chip:#1e3a8a}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"PingFang SC","Noto Sans CJK SC","Microsoft YaHei","WenQuanYi Micro Hei",sans-serif}
header{position:sticky;top:0;z-index:1;display:flex;align-items:center;gap:.75rem;padding:.6rem 1rem;background:var(--card);border-bottom:1px solid var(--line)}
h1{font-size:1.2rem;margin:0;flex:1}
h2{font-size:1.05rem;margin:0 0 .6rem}
main{display:grid;gap:1rem;padding:1rem;max-width:72rem;margin:0 auto;grid-template-columns:1fr}
@media (min-width:60rem){main{grid-template-columns:minmax(0,1fr) minmax(0,1.3fr);align-items:start}#history{grid-column:2;grid-row:1/span 4}}
section{background:var(--card);border:1px solid var(--line);border-radius:.75rem;padding:1rem;min-width:0}
label{display:block;font-size:.9rem;color:var(--mute)}
textarea,input,select,button{font:inherit;color:inherit}
textarea,input[type=text],input[type=password],input[type=number],select{display:block;width:100%;min-height:2.75rem;margin-top:.25rem;padding:.5rem .6rem;border:1px solid var(--line);border-radius:.5rem;background:var(--bg)}
textarea{resize:vertical;min-height:5rem}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:.6rem;margin:.6rem 0}
button{min-height:2.75rem;padding:.5rem 1rem;border:1px solid var(--line);border-radius:.5rem;background:var(--bg);cursor:pointer}
button.primary{width:100%;background:var(--accent);border-color:var(--accent);color:#fff;font-weight:600}
button.danger{color:var(--bad);border-color:var(--bad)}
button:disabled{opacity:.55;cursor:default}
.buttons{display:flex;gap:.6rem;flex-wrap:wrap}.buttons button{flex:1}
.msg{margin:.5rem 0 0;font-size:.9rem;overflow-wrap:anywhere}.msg.ok{color:var(--ok)}.msg.err{color:var(--bad)}
.badge{display:inline-block;padding:.15rem .6rem;border-radius:1rem;font-size:.85rem;white-space:nowrap;background:var(--chip)}
.on{background:#dcfce7;color:#166534}.off{background:#fee2e2;color:#991b1b}.wait{background:#fef3c7;color:#92400e}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem .8rem;margin:0 0 .8rem}dt{color:var(--mute)}dd{margin:0;overflow-wrap:anywhere}
.counts{display:grid;grid-template-columns:repeat(4,1fr);gap:.4rem;margin:.6rem 0;text-align:center}
.counts div{background:var(--bg);border-radius:.5rem;padding:.35rem}.counts b{display:block;font-size:1.3rem}
.counts span{font-size:.8rem;color:var(--mute)}
#speaking{padding:.6rem;border-radius:.5rem;background:var(--bg);overflow-wrap:anywhere}
input[type=range]{width:100%;height:2.75rem;margin:0;accent-color:var(--accent)}
#list{list-style:none;margin:0;padding:0}
#list li{padding:.6rem 0;border-top:1px solid var(--line)}#list li:first-child{border-top:0}
.top{display:flex;align-items:center;gap:.4rem;flex-wrap:wrap}.num{font-weight:600}
.text{margin:.2rem 0;overflow-wrap:anywhere;white-space:pre-wrap}
.meta{font-size:.8rem;color:var(--mute);display:flex;gap:.2rem .8rem;flex-wrap:wrap}
.p-urgent{background:#fee2e2;color:#991b1b}.p-low{background:#e5e7eb;color:#374151}
.s-speaking{background:#dbeafe;color:#1e40af}.s-done{background:#dcfce7;color:#166534}
.s-cut,.s-expired,.s-cancelled{background:#fef3c7;color:#92400e}.s-failed{background:#fee2e2;color:#991b1b}
.empty{color:var(--mute)}
details summary{cursor:pointer;padding:.6rem 0}
.msg:empty{display:none}
.need-token #settings{order:-1}
.offline #queue-card,.offline #sound-card,.offline #history{opacity:.55}
.row{display:flex;gap:.6rem;align-items:end}.row label{flex:1}
footer{text-align:center;color:var(--mute);font-size:.8rem;padding:0 1rem 1.5rem}
</style>
</head>
<body>
<header><h1>Bobao 播报</h1><span id="conn" class="badge wait" role="status">连接中…</span></header>
<main>
<section id="send-card">
<h2>发送播报</h2>
<form id="send" autocomplete="off">
<label for="text">文字</label>
<textarea id="text" name="text" rows="3" required placeholder="例如：请 A12 号到三号窗口办理"></textarea>
<div class="grid">
<label>优先级<select id="priority"><option value="normal" selected>普通</option><option value="urgent">紧急（插播）</option><option value="low">低</option></select></label>
<label>重复次数<input id="repeat" type="number" min="1" max="5" value="1" inputmode="numeric"></label>
<label>提示音<select id="chime"><option value="">默认</option><option value="true">开</option><option value="false">关</option></select></label>
<label>语音<input id="voice" type="text" placeholder="默认" spellcheck="false" autocapitalize="off"></label>
</div>
<button type="submit" class="primary" id="send-button">播报</button>
<p id="send-msg" class="msg" aria-live="polite"></p>
</form>
</section>
<section id="queue-card">
<h2>正在播报与队列</h2>
<div id="speaking" class="empty">—</div>
<div class="counts" id="counts"><div><b id="q-urgent">–</b><span>紧急</span></div><div><b id="q-normal">–</b><span>普通</span></div><div><b id="q-low">–</b><span>低</span></div><div><b id="q-total">–</b><span>合计</span></div></div>
<div class="buttons"><button type="button" id="skip">跳过当前</button><button type="button" id="clear" class="danger">清空队列</button></div>
<p id="ctl-msg" class="msg" aria-live="polite"></p>
</section>
<section id="history">
<h2>最近 50 条播报</h2>
<ol id="list"><li class="empty">还没有播报</li></ol>
</section>
<section id="sound-card">
<h2>声音</h2>
<dl><dt>状态</dt><dd id="sound-state">–</dd><dt>输出设备</dt><dd id="sound-sink">–</dd><dt>原因</dt><dd id="sound-reason">–</dd><dt>最近错误</dt><dd id="last-error">–</dd></dl>
<label for="volume">音量 <output id="volume-out">–</output></label>
<input id="volume" type="range" min="0" max="100" step="1" value="100">
<p id="vol-msg" class="msg" aria-live="polite"></p>
</section>
<section id="settings">
<details id="token-box"><summary>访问令牌</summary>
<div class="row"><label>令牌（服务器设置了 --token 时需要；只存在本浏览器）<input id="token" type="password" autocomplete="off"></label><button type="button" id="token-save">保存</button></div>
<p id="token-msg" class="msg"></p>
</details>
</section>
</main>
<footer id="version"></footer>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const STATES = {waiting: "等待", speaking: "播报中", done: "完成", cut: "截断", expired: "过期", cancelled: "已取消", failed: "失败"};
const OUTCOMES = ["done", "cut", "expired", "cancelled", "failed"];
const PRIORITIES = {urgent: "紧急", normal: "普通", low: "低"};
const SOUND = {playing: "正常", idle: "空闲", connecting: "连接中", "no-sink": "没有输出设备", corked: "被暂停", stopped: "已停止"};
const rows = new Map();
let token = "";
try { token = localStorage.getItem("bobao.token") || ""; } catch (e) { /* storage off: token for this page only */ }

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function say(id, text, ok) { const node = $(id); node.textContent = text; node.className = "msg " + (ok ? "ok" : "err"); }
function authHeaders(extra) {
  const headers = Object.assign({}, extra);
  if (token) headers.Authorization = "Bearer " + token;
  return headers;
}
class ApiError extends Error {
  constructor(code, message, status) { super(message); this.code = code; this.status = status; }
}
function describe(error) {
  if (error instanceof ApiError) return (error.status ? error.status + " " : "") + error.code + ": " + error.message;
  return String(error && error.message || error);
}
async function api(method, path, body) {
  const init = {method, cache: "no-store", headers: authHeaders(body === undefined ? {} : {"Content-Type": "application/json; charset=utf-8"})};
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try { response = await fetch(path, init); } catch (e) { throw new ApiError("network", "连不上服务器（" + e.message + "）", 0); }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (!response.ok) {
    if (response.status === 401) needToken();
    const code = data && data.error ? data.error : "http-" + response.status;
    throw new ApiError(code, data && data.message ? data.message : (text.trim() || response.statusText), response.status);
  }
  return data;
}
function needToken() {
  $("token-box").open = true;
  document.body.classList.add("need-token");  // the field first, where it is seen
  say("token-msg", token ? "令牌被拒绝，请检查" : "服务器要求令牌", false);
}

// Status: the sound server, the queue, what is speaking.
let volumeBusy = false;
function showStatus(s) {
  if (!s) return;
  const sound = s.sound || {};
  lastSound = sound;
  if (connected) showSoundInBadge();
  const state = $("sound-state");
  state.replaceChildren(el("span", "badge " + (sound.state === "playing" || sound.state === "idle" ? "on" : "off"),
    (SOUND[sound.state] || sound.state || "?") + " · " + (sound.state || "?")));
  $("sound-sink").textContent = sound.sink || "–";
  if (Array.isArray(sound.sinks) && sound.sinks.length > 1) $("sound-sink").textContent += "（共 " + sound.sinks.length + " 个：" + sound.sinks.join("、") + "）";
  $("sound-reason").textContent = sound.reason || "–";
  const lastError = s.last_error ? s.last_error.message : sound.last_error;
  $("last-error").textContent = lastError || "–";
  if (!volumeBusy) {
    const known = typeof sound.volume === "number";
    $("volume").value = known ? sound.volume : 100;
    $("volume-out").textContent = known ? sound.volume + "%" : "系统默认";
  }
  const q = s.queue || {};
  for (const p of ["urgent", "normal", "low"]) $("q-" + p).textContent = q[p] ?? "–";
  $("q-total").textContent = q.total ?? "–";
  $("counts").title = "队列上限 " + (q.capacity ?? "?") + (q.storing ? "，" + q.storing + " 条正在写入" : "");
  const speaking = $("speaking");
  if (s.speaking) {
    speaking.className = "";
    speaking.replaceChildren(el("span", "badge s-speaking", "播报中"), " ",
      el("span", "num", "#" + s.speaking.number), " ", el("span", "badge p-" + s.speaking.priority, PRIORITIES[s.speaking.priority] || s.speaking.priority),
      el("div", "text", s.speaking.text));
  } else {
    speaking.className = "empty";
    speaking.textContent = "没有正在播报的内容";
  }
  if (s.version) $("version").textContent = "Bobao " + s.version + " · 已运行 " + duration(s.uptime_s);
}
function duration(seconds) {
  if (typeof seconds !== "number") return "?";
  const d = Math.floor(seconds / 86400), h = Math.floor(seconds % 86400 / 3600), m = Math.floor(seconds % 3600 / 60);
  return (d ? d + " 天 " : "") + (d || h ? h + " 小时 " : "") + m + " 分";
}

// The last 50 announcements, newest first.
function rank(state) { return OUTCOMES.includes(state) ? 2 : state === "speaking" ? 1 : 0; }
function renderRow(a) {
  let li = rows.get(a.number) && rows.get(a.number).li;
  if (!li) li = el("li");
  li.dataset.number = a.number;
  li.dataset.state = a.state;
  const top = el("div", "top");
  top.append(el("span", "num", "#" + a.number), el("span", "badge s-" + a.state, (STATES[a.state] || a.state) + " " + a.state));
  if (a.priority && a.priority !== "normal") top.append(el("span", "badge p-" + a.priority, PRIORITIES[a.priority] || a.priority));
  if (a.id) top.append(el("span", "badge", "id " + a.id));
  const meta = el("div", "meta");
  if (a.accepted_at_ms) meta.append(el("span", "", new Date(a.accepted_at_ms).toLocaleTimeString("zh-CN", {hour12: false})));
  if (typeof a.onset_ms === "number") meta.append(el("span", "onset", "起播 " + a.onset_ms.toFixed(1) + " ms"));
  if (typeof a.speaking_ms === "number") meta.append(el("span", "", "时长 " + (a.speaking_ms / 1000).toFixed(1) + " s"));
  if (a.reason) meta.append(el("span", "reason", "原因：" + a.reason));
  li.replaceChildren(top, el("div", "text", a.text ?? "…"), meta);
  return li;
}
function upsert(change, force) {
  const old = rows.get(change.number);
  // Events arrive in order, but the reply to a POST or a list fetched on reconnect may be older news.
  if (old && !force && change.state && rank(old.data.state) === 2 && rank(change.state) < 2) return;
  const data = Object.assign(old ? old.data : {state: "waiting"}, change);
  const li = renderRow(data);
  rows.set(data.number, {data, li});
  if (!old) placeRows();
}
function placeRows() {
  const list = $("list");
  const numbers = [...rows.keys()].sort((a, b) => b - a);
  for (const n of numbers.slice(50)) rows.delete(n);
  if (!rows.size) { list.replaceChildren(el("li", "empty", "还没有播报")); return; }
  list.replaceChildren(...numbers.slice(0, 50).map((n) => rows.get(n).li));
}
async function loadAnnouncements() {
  const reply = await api("GET", "announcements");
  for (const a of (reply && reply.announcements) || []) {
    const old = rows.get(a.number);
    if (old && rank(old.data.state) > rank(a.state)) continue;  // an event already told more
    upsert(a, true);
  }
  placeRows();
}

// Live updates: /events as Server-Sent Events over fetch(), so the token can go in a header.
const handlers = {
  status: showStatus,
  accepted: (d) => upsert(rows.has(d.number) ? d : Object.assign({state: "waiting"}, d)),
  start: (d) => upsert({number: d.number, state: "speaking", reason: null}),
  waiting: (d) => upsert({number: d.number, state: "waiting", reason: d.reason}),
  interrupted: (d) => upsert({number: d.number, state: "waiting", reason: "被紧急播报打断，稍后重播"}),
};
for (const outcome of OUTCOMES) {
  handlers[outcome] = (d) => upsert({number: d.number, state: outcome, reason: d.reason, onset_ms: d.onset_ms, speaking_ms: d.speaking_ms}, true);
}
function dispatch(name, data) {
  const handler = handlers[name || "message"];
  if (!handler) return;
  let value;
  try { value = JSON.parse(data); } catch (e) { console.warn("bobao: unreadable event", name, data); return; }
  if (value && (name === "status" || typeof value.number === "number")) handler(value);
}
let connected = false, lastSound = null;
function setConnection(kind, text) {
  const c = $("conn");
  connected = kind === "on";
  c.className = "badge " + kind;
  c.textContent = text;
  document.body.classList.toggle("offline", kind === "off");  // what is shown may be out of date
  if (connected) showSoundInBadge();
}
// Connected to Bobao, the badge says whether the speaker can play: the first thing seen on a phone.
function showSoundInBadge() {
  if (!lastSound || !lastSound.state) return;
  const ok = lastSound.state === "playing" || lastSound.state === "idle";
  const c = $("conn");
  c.className = "badge " + (ok ? "on" : "off");
  c.textContent = ok ? "已连接 · 声音正常" : "无法播放 · " + (SOUND[lastSound.state] || lastSound.state);
  c.title = lastSound.reason || lastSound.last_error || "";
}

let backoff = 1000, stream = null, retryTimer = 0;
async function connect() {
  clearTimeout(retryTimer);
  if (stream) stream.abort();
  const controller = new AbortController();
  stream = controller;
  let lastRead = Date.now(), opened = false;
  const watchdog = setInterval(() => { if (Date.now() - lastRead > 40000) controller.abort(); }, 5000);
  try {
    const response = await fetch("events", {headers: authHeaders({Accept: "text/event-stream"}), cache: "no-store", signal: controller.signal});
    if (response.status === 401) {  // retrying cannot help: a new token reconnects
      needToken();
      setConnection("off", "需要令牌");
      return;
    }
    if (!response.ok) {
      let message = response.statusText;
      try { const body = await response.json(); message = body.error + ": " + body.message; } catch (e) { /* not JSON */ }
      throw new ApiError("http-" + response.status, message, response.status);
    }
    opened = true;
    backoff = 1000;
    document.body.classList.remove("need-token");
    if ($("ctl-msg").classList.contains("err")) say("ctl-msg", "", true);  // an earlier failure is past
    setConnection("on", "已连接");
    loadAnnouncements().catch((e) => say("ctl-msg", "读取播报列表失败：" + describe(e), false));
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "", name = "", data = [];
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      lastRead = Date.now();
      buffer += value;
      let match;
      while ((match = /\r\n|\n|\r(?=[^\n])/.exec(buffer))) {
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === "") {
          if (data.length) dispatch(name, data.join("\n"));
          name = ""; data = [];
          continue;
        }
        if (line[0] === ":") continue;  // a comment: keep-alive
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text[0] === " ") text = text.slice(1);
        if (field === "event") name = text;
        else if (field === "data") data.push(text);
      }
    }
    throw new Error("服务器关闭了连接");
  } catch (e) {
    if (stream !== controller) return;  // replaced by a newer connection
    const why = e.name === "AbortError" ? "超时" : describe(e);
    const wait = opened ? 1000 : backoff;
    backoff = Math.min(backoff * 2, 30000);
    setConnection("off", "已断开 · " + Math.round(wait / 1000) + " 秒后重连");
    $("conn").title = why;
    retryTimer = setTimeout(connect, wait);
  } finally {
    clearInterval(watchdog);
  }
}
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && $("conn").classList.contains("off")) connect();
});

// Sending and the controls.
$("send").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("text").value.trim();
  if (!text) { say("send-msg", "请输入要播报的文字", false); return; }
  const body = {text, priority: $("priority").value};
  const repeat = parseInt($("repeat").value, 10);
  if (repeat > 1) body.repeat = repeat;
  if ($("chime").value) body.chime = $("chime").value === "true";
  if ($("voice").value.trim()) body.voice = $("voice").value.trim();
  const button = $("send-button");
  button.disabled = true;
  try {
    const reply = await api("POST", "announce", body);
    say("send-msg", reply.duplicate ? "重复的 id，没有再次播报（#" + reply.number + "）" : "已接受，编号 #" + reply.number, true);
    upsert({number: reply.number, id: reply.id ?? null, text, priority: body.priority, accepted_at_ms: Date.now()});
    $("text").value = "";
  } catch (e) {
    say("send-msg", "发送失败：" + describe(e), false);
  } finally {
    button.disabled = false;
  }
});
async function control(method, path, body, messageId, okText) {
  try {
    const reply = await api(method, path, body);
    say(messageId, okText(reply), true);
  } catch (e) {
    say(messageId, "失败：" + describe(e), false);
  }
}
$("skip").addEventListener("click", () => control("POST", "skip", undefined, "ctl-msg", (r) => r.reply || "已跳过"));
let clearArmed = 0;
$("clear").addEventListener("click", () => {
  const button = $("clear");
  if (!clearArmed) {  // a second tap confirms: a stray tap on a phone must not empty the queue
    button.textContent = "再按一次确认清空";
    clearArmed = setTimeout(() => { clearArmed = 0; button.textContent = "清空队列"; }, 3000);
    return;
  }
  clearTimeout(clearArmed);
  clearArmed = 0;
  button.textContent = "清空队列";
  control("POST", "clear", undefined, "ctl-msg", (r) => r.reply || "已清空");
});
const volume = $("volume");
volume.addEventListener("input", () => { volumeBusy = true; $("volume-out").textContent = volume.value + "%"; });
volume.addEventListener("change", async () => {
  await control("PUT", "volume", {value: Number(volume.value)}, "vol-msg", (r) => "音量已设为 " + r.volume + "%");
  volumeBusy = false;
});
$("token").value = token;
$("token-save").addEventListener("click", () => {
  token = $("token").value.trim();
  try {
    if (token) localStorage.setItem("bobao.token", token); else localStorage.removeItem("bobao.token");
    say("token-msg", token ? "已保存" : "已清除", true);
  } catch (e) {
    say("token-msg", "浏览器不允许保存，只对本页有效", false);
  }
  connect();
});

api("GET", "status").then(showStatus).catch((e) => say("ctl-msg", "读取状态失败：" + describe(e), false));
connect();
</script>
</body>
</html>
"""#
}
