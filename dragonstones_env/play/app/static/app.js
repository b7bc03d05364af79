// The table page: plain JavaScript, no build step. It draws what the server sends for one seat
// (built from that seat's observation) or for a spectator (what every seat sees alike), and sends
// back action indices from the legal actions it was given. Per-game drawing lives in DRAW only:
// the rest of the page knows no game.
//
// Addresses: #/ the set-up, #/game/ID?token=T a seat (the token is the seat's secret: the address
// is the seat, and a reload keeps it), #/game/ID a spectator, #/replay/ID a replay. The creator's
// address also carries &creator=C (the creator's token): it gives back the invite links and Delete
// in any browser (the server derives each seat's token from it); localStorage keeps it too.
//
// Records travel as text: a record's seed is a 63-bit integer, which JSON.parse would round to a
// double (4192384376986149819 -> 4192384376986150000), so the page never parses a record it sends
// back. A poll redraws only what changed, and never the move being composed (the same decision
// still pending keeps its bid builder, its values and the focus). ?poll=MS in the page's address
// sets the slow poll while it is your move (20 s by default; the tests shorten it).
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c.nodeType ? c : String(c));
  return node;
};

const ui = { meta: null, gameId: null, token: null, creator: null, replayId: null, replay: null, timer: null, state: null,
             log: [], lastRecord: null, insight: false, busy: false, offline: false, drawn: null, invites: null };
const PAGE = new URLSearchParams(location.search);
const PHONE = matchMedia("(max-width: 880px)");  // the one-column layout (app.css)
const POLL_MS = Math.max(200, +PAGE.get("poll") || 20000);  // the slow poll while it is your move

// A request; a string body is sent as it is (a record's text: see the top). ``raw``: the answer's text.
async function api(method, url, body, token, raw = false) {
  const headers = {};
  if (method !== "GET") headers["Content-Type"] = "application/json";  // every state-changing request is JSON
  if (token) headers.Authorization = "Bearer " + token;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  if (raw && res.ok) return res.text();
  const data = await res.json();
  if (!res.ok) throw Object.assign(new Error(data.error || res.statusText), { status: res.status });
  return data;
}

// replaceChildren without the nulls that stand for "nothing to draw here"
function fill(node, ...kids) { node.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false)); }

function showError(err) { $("#error").textContent = err ? String(err.message || err) : ""; }

// Screen readers hear whose turn it is (and a lost or found connection) from this live region.
function announce(text) { if ($("#announce").textContent !== text) $("#announce").textContent = text; }

// A policy spec in plain words (the spec itself on hover): "Champion (trained)" for champion.
const BOT_NAMES = { human: "a person", random: "Random bot", heuristic: "Rule bot", champion: "Champion (trained)",
  "ds-heuristic": "Rule bot", "ds-champion": "Champion (trained)", "ds-random": "Random bot", ismcts: "Search bot" };
function botName(spec) {
  if (BOT_NAMES[spec]) return BOT_NAMES[spec];
  const head = spec.split(":")[0];
  if (BOT_NAMES[head]) return BOT_NAMES[head];
  const word = head.replace(/^ds-/, "").replace(/[-_]/g, " ");
  return word.charAt(0).toUpperCase() + word.slice(1) + " bot";
}
const plural = (k, unit) => `${k} ${k === 1 ? unit.replace(/s$/, "") : unit}`;

const saved = (id) => JSON.parse(localStorage.getItem("dragonstones.table." + id) || "null");
const creatorToken = () => ui.creator || (saved(ui.gameId) || {}).creator || null;
const game = (name) => ui.meta.games.find((g) => g.name === name);

// ------------------------------------------------------------------ cards and their rules text
function ruleOf(s, name) {
  const custom = s.view.deck ? s.view.deck.custom.find((c) => c.name === name) : null;
  if (custom) return custom.text || "(no rules text)";
  return (game(s.game).rules || {})[name] || "";
}

// A card: its rules text on hover (title), on tap, on focus and on Enter (the tip below the card).
function card(s, name, cls = "", extra = {}) {
  const tip = (e) => { e.stopPropagation(); showTip(e.currentTarget, name, ruleOf(s, name)); };
  return el("span", { class: "card-face " + cls, title: `${name}: ${ruleOf(s, name)}`, "data-card": name, tabindex: 0,
                      role: "button", "aria-label": `${name}: ${ruleOf(s, name)}`,
                      onclick: tip, onfocus: tip, onblur: () => { $("#rule-tip").hidden = true; },
                      onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); tip(e); } }, ...extra }, name);
}

function showTip(anchor, name, text) {
  const tip = $("#rule-tip");
  fill(tip, el("b", {}, name), el("div", {}, text || "(no rules text)"));
  tip.hidden = false;
  const r = anchor.getBoundingClientRect();
  const width = Math.min(320, window.innerWidth - 16);
  tip.style.width = width + "px";
  tip.style.left = Math.max(8, Math.min(r.left + window.scrollX, window.scrollX + window.innerWidth - width - 8)) + "px";
  tip.style.top = (r.bottom + window.scrollY + 6) + "px";
}
document.addEventListener("click", () => { $("#rule-tip").hidden = true; });

// ------------------------------------------------------------------ per-game drawing
// a stone's colour is never told by colour alone: each chip carries its letter (R, B, Y) too
const chips = (obj) => ["red", "blue", "yellow"].map((c) => el("span", { class: "chip " + c, title: `${obj[c]} ${c} stones`,
  "aria-label": `${obj[c]} ${c} stones` }, el("span", { class: "chip-letter", "aria-hidden": "true" }, c[0].toUpperCase()), obj[c]));
const coins = (p) => ["fairy", "common", "silver"].map((c) =>
  el("span", { class: "coin " + c, title: c === "silver" ? "silver" : c + " gold" }, (p[c] === null ? "?" : p[c]) + " " + c));

// A sealed bid as the engine holds it, [fairy, common, black, amulet] (a tie-break's: [silver, amulet]), in words.
function sealedText(b) {
  if (!Array.isArray(b)) return String(b);
  if (b.length === 2) return [b[0] ? `${b[0]} silver` : null, b[1] ? "amulet" : null].filter(Boolean).join(" + ") || "no silver";
  const [fairy, common, black, amulet] = b;
  const parts = [fairy ? `${fairy} fairy` : null, common ? `${common} common` : null,
                 black ? "black coin" : null, amulet ? "amulet" : null].filter(Boolean);
  return parts.length ? parts.join(" + ") : "empty fist";
}

const DRAW = {
  dragonstones: {
    centre(s) {
      const v = s.view, n = s.names;
      const turn = v.decision ? `Turn ${v.turn} (the game stops after turn ${v.max_turns})` : "Game over";
      const chars = v.characters.map((c) => card(s, c.name, c.status, { "data-status": c.status }));
      const hidden = s.hidden ? el("div", { class: "hidden-info", "data-hidden": "sealed" },
        "sealed bids: " + (Object.entries(s.hidden.sealed_bids).map(([p, b]) => `${n[p]} ${sealedText(b)}`).join(", ") || "none")) : null;
      const revealed = v.auctions.filter((a) => a.bids);
      return [
        el("div", { class: "turn" }, turn),
        v.card && v.decision ? el("div", { class: "current" }, v.decision === "bid" || v.decision === "tiebreak" ? "Up for auction: " : "Now: ",
          card(s, v.card, "big", { id: "current-card" }),
          v.asks && v.asks !== v.card ? el("span", {}, " asked by ", card(s, v.asks)) : null) : null,
        el("div", { class: "cards", title: "this turn's characters" }, el("span", { class: "label" }, "This turn: "), chars),
        // this turn's revealed bids, auction by auction (bid values by player)
        revealed.length ? el("div", { class: "bids", id: "revealed" }, revealed.map((a) =>
          el("div", {}, el("b", {}, a.card + ": "), a.bids.map((b, i) => `${n[i]} ${b.value}`).join(" · ")))) : null,
        // the table's custom characters (issue #16): name and copies; the rules text on hover or tap
        v.deck ? el("div", { class: "cards", id: "custom-deck" }, el("span", { class: "label" }, "Custom cards: "),
          v.deck.custom.map((c) => card(s, c.name, "custom")), v.deck.exclude.length ? ` (without ${v.deck.exclude.join(", ")})` : "") : null,
        el("div", { class: "bank" }, "Bank: ", chips(v.bank), ` ${v.bank.fairy} fairy gold · ${v.bank.common} common gold · ${v.bank.silver} silver · ${v.bank.amulets} amulets`),
        hidden,
      ];
    },
    seat(s, i) {
      const v = s.view, pl = v.players[i];
      const last = v.auctions.length ? v.auctions[v.auctions.length - 1] : null;
      const bid = last && last.bids ? last.bids[i] : null;
      const own = s.seat === i && v.own;
      return [
        el("div", { class: "row" }, el("span", { class: "score", title: `${pl.score} of ${v.win_score} points` },
          "★".repeat(pl.score) + "☆".repeat(Math.max(0, v.win_score - pl.score)), ` ${pl.score}/${v.win_score}`), chips(pl)),
        el("div", { class: "row" }, coins(pl), pl.black ? el("span", { class: "coin black" }, `${pl.black} black`) : null,
           pl.amulets ? el("span", { class: "coin amulet" }, pl.amulets + " amulet") : null),
        el("div", { class: "row" }, pl.fairy_spent ? `${pl.fairy_spent} fairy gold spent` : null,
           pl.doppelganger ? card(s, "Doppelganger", "badge-card") : null,
           pl.has_bid ? el("span", { class: "badge sealed" }, "bid sealed") : null,
           bid ? el("span", { class: "badge" }, `bid ${bid.value}`) : null,
           pl.auction_winner ? el("span", { class: "badge" }, "won it") : null),
        own && (own.bid_fairy || own.bid_common || own.bid_black || own.bid_amulet)
          ? el("div", { class: "row mine" }, `your sealed bid: ${own.bid_fairy} fairy + ${own.bid_common} common${own.bid_black ? " + black coin" : ""}${own.bid_amulet ? " + amulet" : ""}`) : null,
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
        const click = onStack[k] ? { onclick: () => act(onStack[k].action), title: onStack[k].text } : { title: `${k < 8 ? "village" : "caves"} stack ${k % 8 + 1}: ${n} cards` };
        return el("div", { class: "stack " + (k >= 8 ? "caves " : "") + (n ? "" : "empty") + (onStack[k] ? " clickable" : ""), ...click },
          el("span", { class: "n" }, n),
          top ? el("span", { class: "top" + (s.hidden ? " hidden-info" : ""), "data-hidden": s.hidden ? "stack" : "memory" }, top) : null);
      });
      return [
        el("div", { class: "turn" }, !v.decision ? "Game over" : v.turn ? `Turn ${v.turn}` : "Opening picks", v.card ? [" · ", card(s, v.card, "big", { id: "current-card" })] : null),
        el("div", { class: "label" }, "Village (top row) and caves (bottom row): cards left in each stack"),
        el("div", { class: "stacks" }, stacks),
        el("div", { class: "bank" }, `Out of the game: ${v.removed} cards`),
      ];
    },
    seat(s, i) {
      const pl = s.view.players[i];
      const objs = pl.collection.flatMap((c) => [
        ...Array(c.ready).fill(null).map(() => card(s, c.name, "obj " + c.category)),
        ...Array(c.other).fill(null).map(() => card(s, c.name, "obj " + (c.category === "object" ? "used" : c.category))),
      ]);
      const mem = s.hidden ? Object.entries(s.hidden.memories[i]) : [];
      return [
        el("div", { class: "row" }, `${pl.cards} cards · ${pl.kinds}/7 kinds · ${pl.beasts}/3 beasts · ${pl.treasures}/3 treasures`,
           pl.forfeit ? el("span", { class: "badge sealed" }, "must forfeit") : null,
           s.view.first === i ? el("span", { class: "badge" }, "first") : null),
        el("div", { class: "row" }, objs),
        mem.length ? el("div", { class: "row hidden-info", "data-hidden": "memory" }, "saw: " + mem.map(([k, t]) => `${k}:${t}`).join(", ")) : null,
      ];
    },
  },
};

// ------------------------------------------------------------------ generic drawing
function seatBox(s, i) {
  const who = s.seats[i] === "?" ? "" : botName(s.seats[i]);
  const cls = "seat" + (s.actor === i ? " acting" : "") + (s.seat === i ? " me" : "");
  return el("div", { class: cls, "data-seat": i },
    el("div", { class: "name" }, el("span", {}, s.names[i] + (s.seat === i ? " (you)" : "")), el("small", { title: s.seats[i] }, who),
       // a search bot deciding in the server's bot thread (it takes a moment): "thinking…"
       s.thinking === i ? el("span", { class: "badge thinking", id: "thinking", title: `${botName(s.seats[i])} (${s.seats[i]}) is searching its move` }, "thinking…")
         : s.actor === i ? el("span", { class: "badge to-act" }, "to act") : null),
    DRAW[s.game].seat(s, i));
}

function drawTable(s) {
  fill($("#centre"), ...DRAW[s.game].centre(s));
  const n = s.players, me = typeof s.seat === "number" ? s.seat : 0;
  // the viewer at the bottom; the others from the viewer's left, clockwise
  fill($("#seats-top"), ...Array.from({ length: n - 1 }, (_, k) => seatBox(s, (me + 1 + k) % n)));
  // On a phone your own seat sits just under your move (what you hold beside what you bid), not
  // below the whole table.
  const mineUp = PHONE.matches && s.kind === "live" && typeof s.seat === "number";
  $("#my-seat-top").hidden = !mineUp;
  fill($("#my-seat-top"), mineUp ? seatBox(s, me) : null);
  fill($("#seats-bottom"), mineUp ? null : seatBox(s, me));
  $("#goal").textContent = s.goal;
}

function drawLog(s) {
  const box = $("#log");
  if (s.log_from === 0 || s.log_from !== ui.log.length) { ui.log = ui.log.slice(0, s.log_from); fill(box, ...ui.log.map((l) => el("li", {}, l))); }
  const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  for (const line of s.log) { ui.log.push(line); box.append(el("li", {}, line)); }
  if (atEnd || s.log_from === 0) box.scrollTop = box.scrollHeight;
}

function drawSide(s) {
  const whose = s.actor === null ? "The game is over." : (s.prompt || `${s.names[s.actor]} decides.`);
  const watching = s.kind === "live" && s.seat === null;
  announce(s.actor === null ? "The game is over." : s.actor === s.seat && s.kind === "live" ? `Your turn: ${s.prompt || ""}` : whose);
  fill($("#status"), el("h3", {}, s.title + (watching ? " — watching" : "")),
    el("div", { id: "prompt" }, whose),
    s.seeded ? el("div", { class: "notice", id: "seeded" }, "This table's deal was chosen by its creator (a fixed seed): whoever chose it can know the hidden cards.") : null,
    s.kind === "replay" && s.next ? el("div", {}, `next: ${s.names[s.next.seat]} → ${s.next.text}`) : null,
    s.kind === "replay" && s.insight_unavailable.length ? el("div", { class: "notice", id: "insight-missing" },
      `No insight for ${s.insight_unavailable.map((i) => `${s.names[i]} (${s.seats[i]})`).join(", ")}: that policy is not on this server; the replay plays its recorded actions.`) : null);
  drawActions(s);
  drawHelp(s);
  drawControls(s);
  fill($("#race"), el("h3", {}, "Race"), ...s.race.flatMap((bars, i) => bars.map((b) =>
    el("div", { class: "race-row" }, el("span", { class: "who", title: s.names[i] }, `${s.names[i]} ${b.label}`),
       el("div", { class: "bar" }, el("span", { style: `width:${Math.min(100, (100 * b.value) / b.target)}%` })), `${b.value}/${b.target}`))));
  drawLog(s);
  const res = $("#result");
  res.hidden = !s.result;
  if (s.result) {
    res.className = "card" + (s.result.winners.includes(s.seat) ? " win" : "");
    fill(res, el("h3", {}, "Result"), el("div", { id: "winners" }, s.result.text),
      el("ul", { class: "points" }, s.result.points.map((p, i) => el("li", {}, `${s.names[i]}: ${plural(p, s.result.unit)}` + (s.result.winners.includes(i) ? " — winner" : "")))),
      s.kind === "live" ? el("button", { onclick: saveRecord }, "Save record") : null,
      s.kind === "live" ? el("button", { id: "replay-this", onclick: replayThis }, "Replay it, with the bots' thinking") : null);
  }
  const ins = $("#insight-panel");
  ins.hidden = !(s.insight && s.insight.length);
  if (!ins.hidden) {
    fill(ins, el("h3", {}, "Policy insight"), ...s.insight.map((x) => el("div", { class: "insight" },
      // the probabilities only: a checkpoint plays with its actor, and its critic is never read (docs/app.md)
      el("div", {}, `${s.names[x.seat]}: what ${botName(x.policy)} (${x.policy}) would do`),
      ...x.top.map((t) => el("div", { class: "prob" + (s.next && s.next.action === t.action && s.next.seat === x.seat ? " chosen" : "") },
        el("div", { class: "bar" }, el("span", { style: `width:${100 * t.p}%` })),
        el("span", { class: "pct" }, `${(100 * t.p).toFixed(1)}%`), el("span", {}, t.text))))));
  }
  drawInvites(s);
}

// How to play and the cards' colours, under your move: open on an invitee's first screen (until
// they close it), folded for everyone else. Drawn once per table.
function drawHelp(s) {
  const card = $("#help");
  const key = JSON.stringify([ui.gameId, ui.replayId, s.game]);
  if (card.dataset.key === key) return;
  card.dataset.key = key;
  card.hidden = false;
  const open = s.kind === "live" && typeof s.seat === "number" && !creatorToken() && s.moves < 2 * s.players;
  const box = el("details", { id: "howto", class: "howto" }, el("summary", {}, "How to play"),
    el("ul", {}, (game(s.game).how_to || []).map((line) => el("li", {}, line))), legend(s));
  box.open = open;
  fill(card, box);
}

// What the cards' colours say (the same classes as the cards on the table).
const LEGENDS = {
  dragonstones: [["face_down", "still to come this turn"], ["won", "won by a bid"], ["passed", "passed: nobody bid"],
                 ["cursed", "cursed by a black coin: nobody uses it"], ["custom", "this table's own card"]],
  drachenschatten: [["obj", "a ready object"], ["obj used", "a used object"], ["obj beast", "a beast"], ["obj treasure", "a treasure"]],
};
function legend(s) {
  const rows = LEGENDS[s.game] || [];
  return rows.length ? el("div", { class: "legend", id: "legend" }, el("b", {}, "Card colours: "),
    rows.map(([cls, text]) => el("span", { class: "legend-item" }, el("span", { class: "card-face " + cls, "aria-hidden": "true" }, "Aa"), " " + text))) : null;
}

function drawActions(s) {
  const box = $("#actions");
  // The same decision still pending (a poll, a pace change...): keep what is being composed and the focus.
  const key = JSON.stringify([ui.gameId, ui.replayId, s.seat, s.moves, s.actions, s.result ? 1 : 0, s.thinking]);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  const head = el("h3", {}, s.seat === null || s.kind === "replay" ? "Moves" : "Your move");
  if (!s.actions) {
    const text = s.result ? "The game is over." : s.kind === "replay" ? "A replay: step through it below the table."
      : s.seat === null ? "You are watching: no seat is yours here."
      : typeof s.thinking === "number" ? `Waiting: ${s.names[s.thinking]} is thinking…` : "Waiting for the other players…";
    fill(box, head, el("div", { class: "muted" }, text));
    return;
  }
  const parts = [head];
  for (const g of s.actions) {
    if (g.kind === "builder") parts.push(builder(g));
    else parts.push(el("div", { class: "group" }, el("div", {}, el("b", {}, g.title)),
      el("div", { class: "choices" }, g.actions.map((a) => el("button", { class: "choice", "data-action": a.action, onclick: () => act(a.action) }, a.text)))));
  }
  fill(box, ...parts);
}

// The live table's controls: the pace (for its creator and seats) and the bots' thinking (tables of bots only).
function drawControls(s) {
  const box = $("#controls");
  const canPace = s.kind === "live" && !s.result && (ui.token || creatorToken());
  box.hidden = !(s.kind === "live" && (canPace || s.insight_allowed));
  if (box.hidden) return;
  if (box.dataset.game === ui.gameId) {  // keep the slider under the pointer: update values only
    $("#live-pace-label").textContent = `${s.pace_ms} ms per bot move`;
    return;
  }
  box.dataset.game = ui.gameId;
  const pace = el("input", { id: "live-pace", type: "range", min: 0, max: 3000, step: 100, value: s.pace_ms });
  pace.addEventListener("input", () => { $("#live-pace-label").textContent = `${pace.value} ms per bot move`; });
  pace.addEventListener("change", () => api("POST", `/api/games/${ui.gameId}/pace`, { pace_ms: +pace.value },
    ui.token || creatorToken()).then(refresh).catch(showError));
  const insight = el("input", { id: "live-insight", type: "checkbox" });
  insight.checked = ui.insight;
  insight.addEventListener("change", () => { ui.insight = insight.checked; refresh(); });
  fill(box, el("h3", {}, "Table"),
    canPace ? el("label", {}, "Bot pace ", pace, " ", el("span", { id: "live-pace-label" }, `${s.pace_ms} ms per bot move`)) : null,
    s.insight_allowed ? el("label", { class: "check" }, insight, " show the checkpoints' thinking") : null);
}

// "This table": for a seat, its name; for everyone, the spectators' link to share; for the creator
// (by the creator's token: the address's &creator= or this browser's memory), the link each invited
// person opens (it holds that seat's token), the creator's own link, and Delete. Redrawn only when
// what it shows changes (a name being typed stays).
function drawInvites(s) {
  const box = $("#invites");
  if (s.kind !== "live") { box.hidden = true; box.dataset.key = ""; return; }
  const creator = creatorToken();
  if (creator && ui.invites === null) {
    ui.invites = (saved(ui.gameId) || {}).tokens || {};
    const id = ui.gameId;
    api("GET", `/api/games/${id}/invites`, undefined, creator)
      .then((got) => { if (id === ui.gameId) { ui.invites = got.tokens; box.dataset.key = ""; drawInvites(ui.state); } })
      .catch(() => {});  // a table of an older server: the tokens this browser kept
  }
  const key = JSON.stringify([ui.gameId, s.names, s.seat, creator, ui.invites, !!s.result]);
  box.hidden = false;
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  const base = `${location.origin}${location.pathname}#/game/${ui.gameId}`;
  const link = (q) => base + (q ? `?${new URLSearchParams(q)}` : "");
  const field = (value, attrs = {}) => el("input", { readonly: "", value, class: "link", "aria-label": attrs.label, ...attrs, onfocus: (e) => e.target.select() });
  const others = creator ? Object.entries(ui.invites || {}).filter(([, t]) => t !== ui.token) : [];
  const parts = [el("h3", {}, creator ? "Your table" : "This table")];
  if (typeof s.seat === "number" && ui.token && !s.result) {
    const input = el("input", { id: "seat-name", type: "text", maxlength: 24, value: s.names[s.seat], "aria-label": "your name" });
    const save = () => api("POST", `/api/games/${ui.gameId}/name`, { name: input.value.trim() || null }, ui.token)
      .then(() => { showError(null); refresh(); }).catch(showError);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") save(); });
    parts.push(el("div", { class: "invite" }, el("label", { for: "seat-name" }, "Your name: "), input,
      el("button", { id: "set-name", onclick: save }, "Set")));
  }
  if (others.length) parts.push(el("div", {}, "Send each person their seat's link (it is their seat: keep it private):"),
    ...others.map(([seat, t]) => el("div", { class: "invite" }, el("span", {}, s.names[+seat] + ": "), field(link({ token: t }), { "data-seat": seat, label: `${s.names[+seat]}'s link` }))));
  parts.push(el("div", { class: "invite" }, el("span", {}, "Spectators: "), field(link(null), { id: "spectator-link", label: "the spectators' link" })));
  if (creator) {
    parts.push(el("div", { class: "invite" }, el("span", { title: "your link as the table's creator: it brings back this box and Delete in any browser (keep it private)" }, "Your creator link: "),
      field(link(ui.token ? { token: ui.token, creator } : { creator }), { id: "creator-link", label: "your creator link" })));
    parts.push(el("button", { id: "delete-table", onclick: deleteTable }, "Delete this table"));
  }
  fill(box, ...parts);
}

// A bid builder: one stepper per field, each bounded by what the seat may bid, so every bid it
// composes is legal; the action index is base + sum(value * stride).
function builder(g) {
  const values = Object.fromEntries(g.fields.map((f) => [f.name, 0]));
  const summary = el("div", { id: "bid-summary" });
  const update = () => { summary.textContent = "Bid: " + (g.fields.filter((f) => f.max > 0 && values[f.name]).map((f) => `${values[f.name]} ${f.label}`).join(" + ") || "nothing (the empty fist)"); };
  const rows = g.fields.filter((f) => f.max > 0).map((f) => {
    const out = el("output", { "data-field": f.name }, "0");
    const set = (d) => { values[f.name] = Math.max(0, Math.min(f.max, values[f.name] + d)); out.textContent = values[f.name]; update(); };
    return el("div", { class: "field" }, el("span", { class: "label" }, f.label),
      el("button", { "data-dec": f.name, onclick: () => set(-1), "aria-label": "less " + f.label }, "−"), out,
      el("button", { "data-inc": f.name, onclick: () => set(1), "aria-label": "more " + f.label }, "+"), el("small", {}, `of ${f.max}`));
  });
  update();
  const submit = el("button", { class: "primary", id: "submit-bid",
    onclick: () => act(g.base + g.fields.reduce((sum, f) => sum + values[f.name] * f.stride, 0)) }, "Seal bid");
  return el("div", { class: "group builder" }, el("b", {}, g.title), ...rows, summary, submit);
}

// ------------------------------------------------------------------ live play
function render(s) {
  ui.state = s;
  $("#setup").hidden = true;
  $("#board").hidden = false;
  // A poll that brings nothing new redraws nothing (the focus and what is being typed stay).
  const key = JSON.stringify({ ...s, log: null, log_from: null, log_total: null });
  if (key === ui.drawn && !s.log.length) return;
  ui.drawn = key;
  drawTable(s);
  drawSide(s);
}

async function refresh() {
  clearTimeout(ui.timer);
  if (!ui.gameId) return;
  const id = ui.gameId;
  try {
    const s = await api("GET", `/api/games/${id}?log_from=${ui.log.length}` + (ui.insight ? "&insight=1" : ""), undefined, ui.token);
    if (id !== ui.gameId) return;
    online();
    render(s);
    schedule(s);
  } catch (err) {
    if (!err.status || err.status >= 500) {  // the network, not a refusal: retry, and say so until it is back
      ui.offline = true;
      showError(`Connection lost (${err.message}): trying again every 5 s…`);
      announce("Connection lost: trying again.");
      ui.timer = setTimeout(refresh, 5000);
    } else {
      showError(err);
      if (err.status === 410) gone(err.message);
    }
  }
}

// The server answers again: the connection banner goes.
function online() {
  if (!ui.offline) return;
  ui.offline = false;
  showError(null);
  announce("Connected again.");
}

// The table was deleted by its creator: say so where the move would be, and stop polling.
function gone(message) {
  clearTimeout(ui.timer);
  if ($("#board").hidden) return;
  $("#controls").hidden = $("#invites").hidden = true;
  fill($("#actions"), el("h3", {}, "Table deleted"), el("div", { id: "deleted" }, message.charAt(0).toUpperCase() + message.slice(1) + "."));
  $("#actions").dataset.key = "";
}

// Poll while others decide; while it is our move, slowly (the server counts a seat whose page asks as
// connected, and never evicts its table).
function schedule(s) {
  clearTimeout(ui.timer);
  if (s.result) return;
  const mine = s.seat !== null && s.actor === s.seat;
  ui.timer = setTimeout(refresh, mine ? POLL_MS : Math.max(150, s.pace_ms / 2));
}

async function act(action) {
  if (ui.busy) return;
  showError(null);
  ui.busy = true;
  try {
    const s = await api("POST", `/api/games/${ui.gameId}/actions?log_from=${ui.log.length}`, { action }, ui.token);
    online();
    render(s);
    schedule(s);
  } catch (err) { showError(err); if (err.status === 410) gone(err.message); } finally { ui.busy = false; }
}

// The record as the server wrote it (text: its 63-bit seed stays exact; see the top).
async function saveRecord() {
  try {
    const text = await api("GET", `/api/games/${ui.gameId}/record`, undefined, undefined, true);
    ui.lastRecord = text;
    $("#replay-last").hidden = false;
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    el("a", { href: url, download: `${ui.state.game}-game.json` }).click();
  } catch (err) { showError(err); }
}

async function replayThis() {
  try {
    const text = await api("GET", `/api/games/${ui.gameId}/record`, undefined, undefined, true);
    ui.lastRecord = text;
    openReplay(text);
  } catch (err) { showError(err); }
}

async function deleteTable() {
  if (!confirm("Delete this table for everyone? The other players are told it was deleted; this cannot be undone.")) return;
  try {
    await api("DELETE", `/api/games/${ui.gameId}`, undefined, creatorToken());
    localStorage.removeItem("dragonstones.table." + ui.gameId);
    location.hash = "#/";
  } catch (err) { showError(err); }
}

async function readDeck() {
  const choice = $("#deck").value;
  if (!choice) return undefined;
  if (choice !== "__file") return choice;  // a deck of the server's deck folder, by name
  const file = $("#deck-file").files[0];
  if (!file) throw new Error("choose a deck file (YAML, TOML or JSON)");
  const format = { yml: "yaml", yaml: "yaml", toml: "toml", json: "json" }[file.name.split(".").pop().toLowerCase()];
  if (!format) throw new Error("a deck file ends in .yaml, .yml, .toml or .json");
  return { format, text: await file.text() };
}

async function start() {
  showError(null);
  const name = $("#game").value, n = +$("#players").value, me = $("#my-seat").value === "" ? -1 : +$("#my-seat").value;
  const seats = [...Array(n).keys()].map((i) => (i === me ? "human" : $(`#policy-${i}`).value));
  const names = [...Array(n).keys()].map((i) => (i === me && $("#my-name").value.trim() ? $("#my-name").value.trim() : null));
  try {
    const characters = game(name).options.includes("characters") ? await readDeck() : undefined;
    // ?seed=N in the page's address replays the same deal (reproducible tables; announced at the table)
    // ?seed=N is sent as text: a number past 2**53 would lose digits (the server reads either)
    const seed = PAGE.get("seed");
    const made = await api("POST", "/api/games", { game: name, players: n, seats, names, pace_ms: +$("#pace").value,
      insight: me < 0 && $("#insight").checked, seed: seed === null ? undefined : seed, characters });
    localStorage.setItem("dragonstones.table." + made.id, JSON.stringify({ creator: made.creator, tokens: made.tokens }));
    if (me < 0) ui.insight = $("#insight").checked;
    const query = new URLSearchParams(me >= 0 ? { token: made.tokens[me], creator: made.creator } : { creator: made.creator });
    location.hash = `#/game/${made.id}?${query}`;
  } catch (err) { showError(err); }
}

// ------------------------------------------------------------------ replay
async function openReplay(body) {
  showError(null);
  try {
    const r = await api("POST", "/api/replays", body);
    ui.replay = r;
    location.hash = `#/replay/${r.id}`;
  } catch (err) { showError(err); }
}

function showReplayBar(r) {
  $("#replay-bar").hidden = false;
  $("#step-slider").max = r.steps;
  fill($("#view-select"), el("option", { value: "all" }, "whole table"),
    ...r.seats.map((s, i) => el("option", { value: i }, `${r.names[i]}'s view`)));
  $("#view-select").value = "0";
  fill($("#turn-select"), Object.entries(r.turns).map(([t, step]) => el("option", { value: step }, t)));
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
    ui.log = [];
    ui.drawn = null;
    render(s);
  } catch (err) { showError(err); }
}

async function loadReplayFromInputs() {
  let text = $("#record-text").value.trim();
  const file = $("#record-file").files[0];
  if (!text && file) text = await file.text();
  if (!text) { showError("choose a record file or paste a record"); return; }
  try { JSON.parse(text); } catch (err) { showError("the record is not JSON: " + err.message); return; }
  openReplay(text);  // the text itself: parsing it here would round its seed (see the top)
}

// ------------------------------------------------------------------ set-up
function fillSetup() {
  const g = game($("#game").value);
  const keepN = +$("#players").value;
  fill($("#players"), ...Array.from({ length: g.max_players - g.min_players + 1 }, (_, k) =>
    el("option", { value: g.min_players + k }, g.min_players + k)));
  $("#players").value = keepN >= g.min_players && keepN <= g.max_players ? keepN : g.default_players;
  fill($("#setup-howto-text"), el("ul", {}, (g.how_to || []).map((line) => el("li", {}, line))));
  $("#deck-setup").hidden = !g.options.includes("characters");
  fill($("#deck"), el("option", { value: "" }, "the box's cards"), ...ui.meta.decks.map((d) => el("option", { value: d }, `${d} (this server's deck)`)),
    el("option", { value: "__file" }, "my deck file…"));
  fillSeats();
  fillInsightPolicies(null);
}

// The policies offered for a replay's insight: those of the replay's game only (before one is open: none).
function fillInsightPolicies(gameName) {
  const sel = $("#insight-policy"), was = sel.value;
  const g = gameName ? game(gameName) : null;
  fill(sel, el("option", { value: "" }, "the seat's own checkpoint"),
    ...(g ? g.policies : []).filter((p) => !p.startsWith("ismcts")).map((p) => el("option", { value: p, title: p }, `${botName(p)} (${p})`)));
  if ([...sel.options].some((o) => o.value === was)) sel.value = was;
}

// A bot in the seat menu: its plain name, and the spec where several share one ("Search bot · simulations=10").
function botLabel(p) {
  const extra = p.includes(":") ? " · " + p.split(":").slice(1).join(", ") : "";
  return botName(p) + extra;
}

function fillSeats() {
  const g = game($("#game").value);
  const n = +$("#players").value;
  const was = $("#my-seat").options.length ? $("#my-seat").value : "0";
  fill($("#my-seat"), ...[...Array(n).keys()].map((i) => el("option", { value: i }, `player_${i}`)), el("option", { value: "" }, "none: I watch"));
  $("#my-seat").value = was === "" ? "" : String(Math.min(+was || 0, n - 1));
  const me = $("#my-seat").value === "" ? -1 : +$("#my-seat").value;
  fill($("#seat-policies"), ...[...Array(n).keys()].map((i) => i === me
    ? el("div", { class: "seat-choice" }, `player_${i}: you`)
    : el("label", { class: "seat-choice" }, `player_${i} `, el("select", { id: `policy-${i}` },
        el("option", { value: "human" }, "a person (invite link)"), g.policies.map((p) => el("option", { value: p, title: p }, botLabel(p)))))));
  for (const sel of document.querySelectorAll("#seat-policies select")) sel.value = g.default_opponent;
  $("#insight-label").hidden = me >= 0;
}

function setMode(mode) {
  $("#tab-play").classList.toggle("active", mode === "play");
  $("#tab-replay").classList.toggle("active", mode === "replay");
  $("#play-setup").hidden = mode !== "play";
  $("#replay-setup").hidden = mode !== "replay";
}

// ------------------------------------------------------------------ addresses
function parseHash() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/");
  const params = new URLSearchParams(query || "");
  if (parts[0] === "game" && parts[1]) return { kind: "game", id: parts[1], token: params.get("token"), creator: params.get("creator") };
  if (parts[0] === "replay" && parts[1]) return { kind: "replay", id: parts[1] };
  return { kind: "setup", mode: parts[0] === "replays" ? "replay" : "play" };
}

async function route() {
  clearTimeout(ui.timer);
  showError(null);
  const r = parseHash();
  ui.log = [];
  ui.drawn = null;
  fill($("#log"));
  $("#controls").dataset.game = "";
  $("#actions").dataset.key = "";
  $("#invites").dataset.key = "";
  $("#help").dataset.key = "";
  if (r.kind === "game") {
    Object.assign(ui, { gameId: r.id, token: r.token, creator: r.creator, replayId: null, invites: null });
    $("#replay-bar").hidden = true;
    setMode("play");
    await refresh();
    return;
  }
  Object.assign(ui, { gameId: null, token: null, creator: null });
  if (r.kind === "replay") {
    ui.replayId = r.id;
    try {
      if (!ui.replay || ui.replay.id !== r.id) {
        const s = await api("GET", `/api/replays/${r.id}?step=0&seat=0`);
        ui.replay = { id: r.id, game: s.game, steps: s.steps, seats: s.seats, names: s.names, turns: s.turns };
      }
      setMode("replay");
      fillInsightPolicies(ui.replay.game);
      showReplayBar(ui.replay);
      await showStep(0);
    } catch (err) { showError(err); $("#setup").hidden = false; $("#board").hidden = true; setMode("replay"); }
    return;
  }
  ui.replayId = null;
  $("#setup").hidden = false;
  $("#board").hidden = true;
  setMode(r.mode);
}

async function init() {
  ui.meta = await api("GET", "/api/meta");
  fill($("#game"), ...ui.meta.games.map((g) => el("option", { value: g.name }, g.title)));
  fillSetup();
  $("#game").addEventListener("change", fillSetup);
  $("#players").addEventListener("change", fillSeats);
  $("#my-seat").addEventListener("change", fillSeats);
  $("#deck").addEventListener("change", () => { $("#deck-file-label").hidden = $("#deck").value !== "__file"; });
  const paceLabel = () => { $("#pace-label").textContent = `${$("#pace").value} ms per bot move`; };
  $("#pace").addEventListener("input", paceLabel);
  paceLabel();
  $("#start").addEventListener("click", start);
  $("#tab-play").addEventListener("click", () => { location.hash = "#/"; });
  $("#tab-replay").addEventListener("click", () => { location.hash = "#/replays"; });
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
  window.addEventListener("hashchange", route);
  PHONE.addEventListener("change", () => { if (ui.state && !$("#board").hidden) { ui.drawn = null; render(ui.state); } });
  await route();
}

init().catch(showError);
