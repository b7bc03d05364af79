// The table page: plain JavaScript, no build step. It draws what the server sends for one seat
// (built from that seat's observation) and sends back action indices from the legal actions it
// was given. Per-game drawing lives in DRAW only: the rest of the page knows no game.
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c.nodeType ? c : String(c));
  return node;
};

const ui = { meta: null, mode: "play", gameId: null, seat: 0, replayId: null, replay: null, timer: null, lastRecord: null };

async function api(method, url, body) {
  const res = await fetch(url, { method, headers: body ? { "Content-Type": "application/json" } : {},
                                 body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

// replaceChildren without the nulls that stand for "nothing to draw here"
function fill(node, ...kids) { node.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined)); }

function showError(err) { $("#error").textContent = err ? String(err.message || err) : ""; }

// ------------------------------------------------------------------ per-game drawing
const chips = (obj) => ["red", "blue", "yellow"].map((c) => el("span", { class: "chip " + c, title: c + " stones" }, obj[c]));
const coins = (p) => ["fairy", "common", "silver"].map((c) =>
  el("span", { class: "coin " + c, title: c }, (p[c] === null ? "?" : p[c]) + " " + c[0]));

const DRAW = {
  dragonstones: {
    centre(s) {
      const v = s.view;
      const chars = v.characters.map((c) => el("span", { class: "card-face " + c.status, title: c.status },
        c.name));
      const hidden = s.hidden ? el("div", { class: "hidden-info", "data-hidden": "sealed" },
        "sealed bids: " + (Object.entries(s.hidden.sealed_bids).map(([p, b]) => `player_${p} [${b.join(" ")}]`).join(", ") || "none")) : null;
      return [
        el("div", {}, `Turn ${v.turn} / ${v.max_turns}`),
        v.card ? el("div", { class: "card-face big", id: "current-card" }, v.card) : el("div", {}, "—"),
        // the decision's kind (what is chosen), and who asks when it is not the card shown (the Doppelganger's offer)
        el("div", {}, (v.decision || "game over").replaceAll("_", " ") + (v.asks && v.asks !== v.card ? ` (${v.asks})` : "")),
        el("div", {}, chars),
        // the table's custom characters (issue #16): name, copies and rules text
        v.deck ? el("div", { class: "bank", id: "custom-deck" }, v.deck.custom.map((c) =>
          el("div", {}, el("b", {}, c.name), ` ×${c.copies}: ${c.text}`))) : null,
        // this turn's revealed bids, auction by auction (bid values by seat)
        el("div", { class: "bank", id: "revealed" }, v.auctions.filter((a) => a.bids).map((a) =>
          el("div", {}, `${a.card}: ` + a.bids.map((b, i) => `${s.names[i].split(" ")[0]} ${b.value}`).join(" · ")))),
        el("div", { class: "bank" }, "bank: ", chips(v.bank), ` ${v.bank.fairy} fairy · ${v.bank.common} common · ${v.bank.silver} silver · ${v.bank.amulets} amulets`),
        hidden,
      ];
    },
    seat(s, p, i) {
      const v = s.view, pl = v.players[i];
      const last = v.auctions.length ? v.auctions[v.auctions.length - 1] : null;
      const bid = last && last.bids ? last.bids[i] : null;
      const me = s.seat === i;
      return [
        el("div", { class: "row" }, el("span", { class: "score" }, "★".repeat(pl.score) + "☆".repeat(Math.max(0, 3 - pl.score))), chips(pl)),
        el("div", { class: "row" }, coins(pl), pl.black ? el("span", { class: "coin black" }, "black") : null,
           pl.amulets ? el("span", { class: "coin amulet" }, pl.amulets + " amulet") : null),
        el("div", { class: "row" }, `spent ${pl.fairy_spent} fairy`, pl.doppelganger ? el("span", { class: "badge" }, "doppelganger") : null,
           pl.has_bid ? el("span", { class: "badge sealed" }, "sealed bid") : null,
           bid ? el("span", { class: "badge" }, `bid ${bid.value}`) : null,
           pl.auction_winner ? el("span", { class: "badge" }, "winner") : null),
        me && (v.own.bid_fairy || v.own.bid_common || v.own.bid_black || v.own.bid_amulet)
          ? el("div", { class: "row" }, `your bid: ${v.own.bid_fairy}f ${v.own.bid_common}c${v.own.bid_black ? " b" : ""}${v.own.bid_amulet ? " a" : ""}`) : null,
      ];
    },
  },
  drachenschatten: {
    centre(s) {
      const v = s.view;
      // a legal action about one stack (pick, turn over, look at) is also a click on that stack
      const onStack = {};
      for (const g of s.actions || []) for (const a of g.actions || []) if (a.stack !== undefined) onStack[a.stack] = a;
      const stacks = v.stacks.map((n, k) => {
        const top = s.hidden ? s.hidden.stack_cards[k][0] : v.memory[k];
        const click = onStack[k] ? { onclick: () => act(onStack[k].action), title: onStack[k].text } : { title: `stack ${k}` };
        return el("div", { class: "stack " + (k >= 8 ? "caves " : "") + (n ? "" : "empty") + (onStack[k] ? " clickable" : ""), ...click },
          el("span", { class: "n" }, n),
          top ? el("span", { class: "top" + (s.hidden ? " hidden-info" : ""), "data-hidden": s.hidden ? "stack" : "memory" }, top) : null);
      });
      return [
        el("div", {}, `Turn ${v.turn} · ${(v.decision || "game over")}${v.card ? " · " + v.card : ""}`),
        el("div", { class: "stacks" }, stacks),
        el("div", { class: "bank" }, `village (top row) · caves (bottom row) · out of the game: ${v.removed}`),
      ];
    },
    seat(s, p, i) {
      const pl = s.view.players[i];
      const objs = pl.collection.flatMap((c) => [
        ...Array(c.ready).fill(el("span", { class: "obj " + c.category }, c.name)),
        ...Array(c.other).fill(el("span", { class: "obj " + (c.category === "object" ? "used" : c.category) }, c.name)),
      ].map((n) => n.cloneNode(true)));
      const mem = s.hidden ? Object.entries(s.hidden.memories[i]) : [];
      return [
        el("div", { class: "row" }, `${pl.cards} cards · ${pl.kinds} kinds · ${pl.beasts} beasts · ${pl.treasures} treasures`,
           pl.forfeit ? el("span", { class: "badge sealed" }, "must forfeit") : null,
           s.view.first === i ? el("span", { class: "badge" }, "first") : null),
        el("div", { class: "row" }, objs),
        mem.length ? el("div", { class: "row hidden-info", "data-hidden": "memory" }, "saw: " + mem.map(([k, t]) => `${k}:${t}`).join(", ")) : null,
      ];
    },
  },
};

// ------------------------------------------------------------------ generic drawing
function drawTable(s) {
  const draw = DRAW[s.game];
  fill($("#centre"), ...draw.centre(s));
  const n = s.players, me = typeof s.seat === "number" ? s.seat : 0;
  const seats = [];
  for (let i = 0; i < n; i++) {
    // the viewer sits at the bottom; the others clockwise around the oval
    const angle = Math.PI / 2 + (2 * Math.PI * ((i - me + n) % n)) / n;
    const x = 50 + 40 * Math.cos(angle), y = 50 + 40 * Math.sin(angle);
    const cls = "seat" + (s.actor === i ? " acting" : "") + (s.seat === i ? " me" : "");
    seats.push(el("div", { class: cls, style: `left:${x}%;top:${y}%`, "data-seat": i },
      el("div", { class: "name" }, el("span", {}, s.names[i]), s.actor === i ? el("span", { class: "badge" }, "to act") : null),
      draw.seat(s, null, i)));
  }
  fill($("#seats"), ...seats);
}

function drawSide(s) {
  const whose = s.actor === null ? "game over" : `${s.names[s.actor]} to decide`;
  fill($("#status"), el("h3", {}, s.title), el("div", {}, whose),
    s.kind === "replay" && s.next ? el("div", {}, `next: ${s.names[s.next.seat]} → ${s.next.text}`) : null);
  drawActions(s);
  const race = $("#race");
  fill(race, el("h3", {}, "Race"), ...s.race.flatMap((bars, i) => bars.map((b) =>
    el("div", { class: "race-row" }, el("span", { class: "who", title: s.names[i] }, `player_${i} ${b.label}`),
       el("div", { class: "bar" }, el("span", { style: `width:${Math.min(100, (100 * b.value) / b.target)}%` })), `${b.value}/${b.target}`))));
  fill($("#log"), ...s.log.map((line) => el("li", {}, line)));
  $("#log").scrollTop = 1e9;
  const res = $("#result");
  res.hidden = !s.result;
  if (s.result) {
    const won = s.result.winners.map((w) => s.names[w]).join(", ") || "nobody (truncated)";
    res.className = "card" + (s.result.winners.includes(s.seat) ? " win" : "");
    fill(res, el("h3", {}, "Result"), el("div", { id: "winners" }, `Winner: ${won}`),
      s.kind === "live" ? el("div", {}, "rewards: " + s.result.rewards.join(" · ")) : null,
      s.kind === "live" ? el("button", { onclick: saveRecord }, "Save record") : null);
  }
  const ins = $("#insight-panel");
  ins.hidden = !(s.insight && s.insight.length);
  if (!ins.hidden) {
    fill(ins, el("h3", {}, "Policy insight"), ...s.insight.map((x) => el("div", { class: "insight" },
      el("div", {}, `${s.names[x.seat]} (${x.policy})` + (x.value === null ? "" : ` value ${x.value}`)),
      ...x.top.map((t) => el("div", { class: "prob" + (s.next && s.next.action === t.action && s.next.seat === x.seat ? " chosen" : "") },
        el("div", { class: "bar" }, el("span", { style: `width:${100 * t.p}%` })),
        el("span", { class: "pct" }, `${(100 * t.p).toFixed(1)}%`), el("span", {}, t.text))))));
  }
}

function drawActions(s) {
  const box = $("#actions");
  if (!s.actions) {
    fill(box, el("h3", {}, "Your move"), el("div", {}, s.result ? "—" : (s.kind === "live" ? "waiting for the other players…" : "replay")));
    return;
  }
  const parts = [el("h3", {}, "Your move")];
  for (const g of s.actions) {
    if (g.kind === "builder") parts.push(builder(g));
    else parts.push(el("div", { class: "group" }, el("div", {}, el("b", {}, g.title)),
      el("div", { class: "choices" }, g.actions.map((a) => el("button", { class: "choice", "data-action": a.action, onclick: () => act(a.action) }, a.text)))));
  }
  fill(box, ...parts);
}

// A bid builder: one stepper per field, each bounded by what the seat may bid, so every bid it
// composes is legal; the action index is base + sum(value * stride).
function builder(g) {
  const values = Object.fromEntries(g.fields.map((f) => [f.name, 0]));
  const summary = el("div", { id: "bid-summary" });
  const update = () => { summary.textContent = g.fields.filter((f) => f.max > 0).map((f) => `${values[f.name]} ${f.label}`).join(" + "); };
  const rows = g.fields.filter((f) => f.max > 0).map((f) => {
    const out = el("output", { "data-field": f.name }, "0");
    const set = (d) => { values[f.name] = Math.max(0, Math.min(f.max, values[f.name] + d)); out.textContent = values[f.name]; update(); };
    return el("div", { class: "field" }, el("span", { class: "label" }, f.label),
      el("button", { "data-dec": f.name, onclick: () => set(-1) }, "−"), out,
      el("button", { "data-inc": f.name, onclick: () => set(1) }, "+"), el("small", {}, `max ${f.max}`));
  });
  update();
  const submit = el("button", { class: "primary", id: "submit-bid",
    onclick: () => act(g.base + g.fields.reduce((sum, f) => sum + values[f.name] * f.stride, 0)) }, "Seal bid");
  return el("div", { class: "group builder" }, el("b", {}, g.title), ...rows, summary, submit);
}

// ------------------------------------------------------------------ live play
function render(s) {
  ui.state = s;
  $("#board").hidden = false;
  drawTable(s);
  drawSide(s);
}

async function refresh() {
  clearTimeout(ui.timer);
  if (!ui.gameId) return;
  try {
    const s = await api("GET", `/api/games/${ui.gameId}?seat=${ui.seat}`);
    render(s);
    schedule(s);
  } catch (err) { showError(err); }
}

function schedule(s) {
  clearTimeout(ui.timer);
  if (!s.result && s.actor !== ui.seat) ui.timer = setTimeout(refresh, Math.max(80, s.pace_ms / 2));
}

async function act(action) {
  showError(null);
  try {
    const s = await api("POST", `/api/games/${ui.gameId}/actions`, { seat: ui.seat, action });
    render(s);
    schedule(s);
  } catch (err) { showError(err); }
}

async function saveRecord() {
  const data = await api("GET", `/api/games/${ui.gameId}/record`);
  ui.lastRecord = data;
  $("#replay-last").hidden = false;
  const url = URL.createObjectURL(new Blob([JSON.stringify(data)], { type: "application/json" }));
  el("a", { href: url, download: `${data.game}-game.json` }).click();
}

async function start() {
  showError(null);
  const game = $("#game").value, n = +$("#players").value, me = +$("#my-seat").value;
  const seats = [...Array(n).keys()].map((i) => (i === me ? "human" : $(`#policy-${i}`).value));
  const characters = $("#characters-label").hidden ? "" : $("#characters").value.trim();
  try {
    // ?seed=N in the page's address replays the same deal (reproducible tables, the browser test)
    const seed = new URLSearchParams(location.search).get("seed");
    const { id } = await api("POST", "/api/games", { game, players: n, seats, pace_ms: +$("#pace").value,
                                                     insight: $("#insight").checked, seed: seed === null ? undefined : +seed,
                                                     characters: characters || undefined });
    Object.assign(ui, { gameId: id, seat: me, replayId: null });
    $("#replay-bar").hidden = true;
    $("#setup").hidden = true;
    refresh();
  } catch (err) { showError(err); }
}

// ------------------------------------------------------------------ replay
async function openReplay(body) {
  showError(null);
  try {
    const r = await api("POST", "/api/replays", body);
    Object.assign(ui, { replayId: r.id, replay: r, gameId: null, seat: 0 });
    clearTimeout(ui.timer);
    $("#replay-bar").hidden = false;
    $("#setup").hidden = true;
    $("#step-slider").max = r.steps;
    $("#step-slider").value = 0;
    fill($("#view-select"), el("option", { value: "all" }, "whole table"),
      ...r.seats.map((s, i) => el("option", { value: i }, `player_${i}'s view`)));
    $("#view-select").value = "0";
    fill($("#turn-select"), Object.entries(r.turns).map(([t, step]) => el("option", { value: step }, t)));
    showStep(0);
  } catch (err) { showError(err); }
}

async function showStep(step) {
  step = Math.max(0, Math.min(ui.replay.steps, step));
  const seat = $("#view-select").value;
  const insight = $("#insight-policy").value;
  try {
    const s = await api("GET", `/api/replays/${ui.replayId}?step=${step}&seat=${seat}` + (insight ? `&insight=${encodeURIComponent(insight)}` : ""));
    $("#step-slider").value = step;
    $("#step-label").textContent = `decision ${step} / ${ui.replay.steps}`;
    const turn = [...$("#turn-select").options].filter((o) => +o.value <= step).pop();  // the turn shown
    if (turn) $("#turn-select").value = turn.value;
    render(s);
  } catch (err) { showError(err); }
}

async function loadReplayFromInputs() {
  let text = $("#record-text").value.trim();
  const file = $("#record-file").files[0];
  if (!text && file) text = await file.text();
  if (!text) { showError("choose a record file or paste a record"); return; }
  let body;
  try { body = JSON.parse(text); } catch (err) { showError("the record is not JSON: " + err.message); return; }
  openReplay(body);
}

// ------------------------------------------------------------------ setup
function fillSetup() {
  const g = ui.meta.games.find((x) => x.name === $("#game").value);
  const keepN = +$("#players").value;
  fill($("#players"), ...Array.from({ length: g.max_players - g.min_players + 1 }, (_, k) =>
    el("option", { value: g.min_players + k }, g.min_players + k)));
  $("#players").value = keepN >= g.min_players && keepN <= g.max_players ? keepN : g.default_players;
  $("#characters-label").hidden = !g.options.includes("characters");
  fillSeats();
  fill($("#insight-policy"), el("option", { value: "" }, "the seat's own checkpoint"),
    ...ui.meta.games.flatMap((x) => x.policies).filter((v, i, a) => a.indexOf(v) === i).map((p) => el("option", { value: p }, p)));
}

function fillSeats() {
  const g = ui.meta.games.find((x) => x.name === $("#game").value);
  const n = +$("#players").value, me = Math.min(+$("#my-seat").value || 0, n - 1);
  fill($("#my-seat"), ...[...Array(n).keys()].map((i) => el("option", { value: i }, `player_${i}`)));
  $("#my-seat").value = me;
  fill($("#seat-policies"), ...[...Array(n).keys()].map((i) => i === me
    ? el("div", {}, `player_${i}: you`)
    : el("label", {}, `player_${i} `, el("select", { id: `policy-${i}` },
        g.policies.map((p) => el("option", { value: p }, p)), el("option", { value: "__folder" }, "checkpoint folder…")))));
  for (const sel of document.querySelectorAll("#seat-policies select")) {
    sel.value = g.default_opponent;
    sel.addEventListener("change", () => {
      if (sel.value !== "__folder") return;
      const path = prompt("Checkpoint folder (card.json + policy.npz) on the server's disk:");
      if (path) { sel.append(el("option", { value: path }, path)); sel.value = path; } else sel.value = g.default_opponent;
    });
  }
}

function setMode(mode) {
  ui.mode = mode;
  $("#tab-play").classList.toggle("active", mode === "play");
  $("#tab-replay").classList.toggle("active", mode === "replay");
  $("#play-setup").hidden = mode !== "play";
  $("#replay-setup").hidden = mode !== "replay";
  $("#setup").hidden = false;
  $("#board").hidden = true;  // the setup replaces the table until a game or replay opens
  clearTimeout(ui.timer);
}

async function init() {
  ui.meta = await api("GET", "/api/meta");
  fill($("#game"), ...ui.meta.games.map((g) => el("option", { value: g.name }, g.title)));
  fillSetup();
  $("#game").addEventListener("change", fillSetup);
  $("#players").addEventListener("change", fillSeats);
  $("#my-seat").addEventListener("change", fillSeats);
  const paceLabel = () => { $("#pace-label").textContent = `${$("#pace").value} ms per bot move`; };
  $("#pace").addEventListener("input", paceLabel);
  $("#pace").addEventListener("change", () => { if (ui.gameId) api("POST", `/api/games/${ui.gameId}/pace`, { pace_ms: +$("#pace").value }); });
  paceLabel();
  $("#start").addEventListener("click", start);
  $("#tab-play").addEventListener("click", () => setMode("play"));
  $("#tab-replay").addEventListener("click", () => setMode("replay"));
  $("#load-replay").addEventListener("click", loadReplayFromInputs);
  $("#replay-last").addEventListener("click", () => openReplay(ui.lastRecord));
  $("#step-first").addEventListener("click", () => showStep(0));
  $("#step-prev").addEventListener("click", () => showStep(+$("#step-slider").value - 1));
  $("#step-next").addEventListener("click", () => showStep(+$("#step-slider").value + 1));
  $("#step-last").addEventListener("click", () => showStep(ui.replay.steps));
  $("#step-slider").addEventListener("change", () => showStep(+$("#step-slider").value));
  $("#view-select").addEventListener("change", () => showStep(+$("#step-slider").value));
  $("#turn-select").addEventListener("change", () => showStep(+$("#turn-select").value));
  $("#insight-policy").addEventListener("change", () => ui.replayId && showStep(+$("#step-slider").value));
  document.addEventListener("keydown", (e) => {
    if (!ui.replayId || e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA") return;
    if (e.key === "ArrowRight") showStep(+$("#step-slider").value + 1);
    if (e.key === "ArrowLeft") showStep(+$("#step-slider").value - 1);
  });
}

init().catch(showError);
