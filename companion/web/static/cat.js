"use strict";
/* Doom Cat page: set up a game, then per turn the roll, each player's legal choices, the sigil
   cards as the camera (or the clicks) drew them, and the live score of each goal. */
(() => {
  const { h, api, toast, stream, pick, die } = Doom;
  const $ = (id) => document.getElementById(id);
  let current = null;
  let catalogue = null;
  let showSetup = false;
  let lineStart = null;          // {p, c, candle}: first candle of a line being clicked
  let camera = { player: 0, card: 0 };
  let campaigns = [];
  let gamesVersion = null;       // the games' version the stream carried last
  let campaignsSeen = null;      // the games' version the campaigns were fetched at
  const campaignOptions = () => [h("option", { value: "" }, "no campaign"), ...campaigns.map((c) => h("option", { value: c.id }, c.title))];
  /* The campaigns, fetched when the setup form opens and while it is open when the games change
     (one created on the History page), into its choice in place. */
  async function refreshCampaigns() {
    campaignsSeen = gamesVersion;
    const camp = await fetch("/api/campaigns").then((r) => r.json()).catch(() => null);
    campaigns = (camp && camp.campaigns) || campaigns;
    const sel = $("setup-campaign");
    if (sel) { const chosen = sel.value; sel.replaceChildren(...campaignOptions()); sel.value = chosen; }
  }

  const gid = () => current.game.id;
  async function send(event) {
    const r = await api("POST", `/api/games/${gid()}/events`, { event });
    if (r.doc && r.doc.state) { current = r.doc; draw(); }
    return r;
  }
  async function amend(entry, event, message) {
    const r = await api("POST", `/api/games/${gid()}/events/${entry.id}`, { event });
    if (r.doc && r.doc.state) { current = r.doc; draw(); if (r.ok) toast(message || "Corrected", "ok"); }
  }

  /* ---------------------------------------------------------------- the sigil card (SVG) */
  // What a player calls candle i of player p's card c ("left 3"): the layout's candle_names.
  const candleName = (p, c, i) => current.state.players[p].cards[c].layout.candle_names[i];
  const lineName = (p, c, [a, b]) => `${candleName(p, c, a)} – ${candleName(p, c, b)}`;

  function cardSvg(p, c, card, ctx) {
    const L = card.layout, S = card.sigil;
    const [W, H] = L.size_mm;
    const svg = h("svg", { viewBox: `0 0 ${W} ${H}`, class: "sigil", "data-player": p, "data-card": c, role: "img",
      "aria-label": `sigil ${card.letter} of ${ctx.name}` });
    svg.append(h("rect", { x: 0.5, y: 0.5, width: W - 1, height: H - 1, rx: 4, class: "paper" }));
    const d = L.dividers;
    svg.append(h("line", { x1: d.vertical_x, y1: 14, x2: d.vertical_x, y2: H - 15, class: "divider" }));
    svg.append(h("line", { x1: 3, y1: d.horizontal_y, x2: W - 3, y2: d.horizontal_y, class: "divider" }));
    for (const [x, y] of L.stars) svg.append(h("text", { x, y: y + 1.6, class: "star", "text-anchor": "middle" }, "★"));
    const cc = L.candles.map((k) => k.center);
    // a line as drawn: straight, or a must-curve line bowed round the candles in its way (the layout's control point)
    const ink = ([a, b], attrs) => {
      const q = (L.curves || {})[`${a}-${b}`];
      return q ? h("path", { d: `M${cc[a][0]} ${cc[a][1]} Q${q[0]} ${q[1]} ${cc[b][0]} ${cc[b][1]}`, fill: "none", ...attrs })
        : h("line", { x1: cc[a][0], y1: cc[a][1], x2: cc[b][0], y2: cc[b][1], ...attrs });
    };
    const pending = ctx.pieces && ctx.pieces.card === c ? ctx.pieces : null;
    const power = (pending && pending.power) || {};
    const erased = power.erase ? power.erase.join("-") : null;   // the Snake's line, this turn
    for (const line of S.lines) svg.append(ink(line, { class: "ink" + (line.join("-") === erased ? " erased" : ""), "data-line": line.join("-") }));
    if (pending && pending.line) svg.append(ink(pending.line, { class: "ink" }));
    if (power.extra_line) svg.append(ink(power.extra_line, { class: "ink extra", "data-extra-line": power.extra_line.join("-") }));   // the Raven's, this turn
    const crossed = new Set(S.crossed);
    if (pending && pending.cross !== null) crossed.add(pending.cross);
    const opt = (ctx.options || []).find((o) => o.card === c);
    const lineCandles = new Set(opt ? opt.lines.flat() : []);
    L.candles.forEach((k, i) => {
      const [x, y] = k.center;
      const starting = lineStart && lineStart.p === p && lineStart.c === c && lineStart.candle === i;
      const g = h("g", { class: "candle" + (crossed.has(i) ? " crossed" : "") + (lineCandles.has(i) ? " usable" : "") + (starting ? " start" : ""),
        "data-candle": i, onclick: (ev) => candleClick(ev, p, c, i) });
      g.append(h("circle", { cx: x, cy: y, r: k.radius }));
      g.append(h("text", { x, y: y + 1.5, "text-anchor": "middle" }, String(k.number)));
      if (crossed.has(i)) g.append(h("path", { d: `M${x - 4.5} ${y - 4.5} L${x + 4.5} ${y + 4.5} M${x + 4.5} ${y - 4.5} L${x - 4.5} ${y + 4.5}`, class: "x" }));
      g.append(h("title", {}, `candle ${L.candle_names[i]}`));
      svg.append(g);
    });
    const tops = S.top.slice();
    if (pending && pending.value !== null) {
      const k = tops.findIndex((t) => t === null);
      // the second time a number is written on a card it is circled at once (rulebook, Wild Numbers)
      if (k >= 0) tops[k] = { value: pending.value, circled: S.top.some((t) => t && t.value === pending.value), pending: true };
    }
    L.top_boxes.forEach(([x0, y0, x1, y1], k) => {
      svg.append(h("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, class: "box" }));
      const t = tops[k];
      if (t) {
        svg.append(h("text", { x: (x0 + x1) / 2, y: (y0 + y1) / 2 + 2.4, class: "digit" + (t.pending ? " pending" : ""), "text-anchor": "middle" }, String(t.value)));
        if (t.circled) svg.append(h("circle", { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, r: 4, class: "ring" }));
      }
    });
    const goals = Object.entries(card.score.goals || {});
    L.score_boxes.forEach(([x0, y0, x1, y1], k) => {
      svg.append(h("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, class: "box score" }));
      const v = k < goals.length && k < L.score_boxes.length - 1 ? goals[k][1] : (k === L.score_boxes.length - 1 ? card.score.total : null);
      if (v !== null && v !== undefined) svg.append(h("text", { x: (x0 + x1) / 2, y: (y0 + y1) / 2 + 2.2, class: "score-digit" + (k === L.score_boxes.length - 1 ? " total" : ""), "text-anchor": "middle" }, String(v)));
    });
    return svg;
  }

  function candleClick(ev, p, c, i) {
    ev.stopPropagation();
    const player = current.state.players[p];
    if (player.done || current.state.phase !== "turn") return;
    const pieces = player.pieces;
    const opt = (player.options || []).find((o) => o.card === c);
    if (!opt) { toast("No legal move on this card now", "warn"); return; }
    if (lineStart && lineStart.p === p && lineStart.c === c && lineStart.candle !== i) {
      const line = [lineStart.candle, i].sort((a, b) => a - b);
      lineStart = null;
      send({ type: "line", player: p, card: c, line, source: "manual" });
      return;
    }
    const free = player.power_free;   // a power the rules judge whole: any candle may be tried
    const canCross = (free || opt.crosses.includes(i)) && pieces.cross === null;
    const canLine = (free || opt.lines.some((l) => l.includes(i))) && pieces.line === null;
    if (canCross && !canLine) { send({ type: "cross", player: p, card: c, candle: i, source: "manual" }); return; }
    if (canLine && !canCross) { lineStart = { p, c, candle: i }; draw(); return; }
    if (canLine && canCross) {
      pick(ev.target, [{ label: "start a line here", value: "line" }, { label: "cross it out", value: "cross" }], (v) => {
        if (v === "cross") send({ type: "cross", player: p, card: c, candle: i, source: "manual" });
        else { lineStart = { p, c, candle: i }; draw(); }
      }, `Candle ${candleName(p, c, i)}`);
      return;
    }
    toast(`Candle ${candleName(p, c, i)} can't be used in this turn`, "warn");
  }

  /* ---------------------------------------------------------------- per-player panel */
  function builder(p, player) {
    const s = current.state;
    if (s.phase !== "turn") return null;
    if (player.done) return h("div", { class: "builder done" }, "✓ turn played");
    const pc = player.pieces;
    const opts = player.options || [];
    if (!opts.length) return h("div", { class: "builder" }, h("span", { class: "muted" }, "no legal move with this roll"));
    const rows = [];
    for (const o of opts) {
      const tag = `card ${o.card + 1} (${player.cards[o.card].letter})`;
      rows.push(h("div", { class: "choice-row" }, h("span", { class: "choice-label" }, tag),
        pc.value === null ? h("span", { class: "choices" }, "write ", o.values.map((v) => h("button", { class: "die small clickable", "data-write": `${p}-${o.card}-${v}`,
          onclick: () => send({ type: "write", player: p, card: o.card, value: v, source: "manual" }) }, String(v)))) : null,
        pc.line === null ? h("span", { class: "choices" }, "line ", o.lines.slice(0, 12).map(([a, b]) => h("button", { class: "ghost chip", "data-line": `${p}-${o.card}-${a}-${b}`,
          onclick: () => send({ type: "line", player: p, card: o.card, line: [a, b], source: "manual" }) }, lineName(p, o.card, [a, b]))),
          // the list is cut short: say so, and where the others are drawn
          o.lines.length > 12 ? h("span", { class: "muted more-lines", "data-more-lines": `${p}-${o.card}` }, `+${o.lines.length - 12} more: click two candles on card ${o.card + 1}`) : null) : null,
        pc.line === null && o.no_line && !o.lines.length ? h("span", { class: "choices" }, h("button", { class: "ghost chip", "data-noline": `${p}-${o.card}`,
          onclick: () => send({ type: "turn", player: p, card: o.card, value: pc.value ?? o.values[0], line: null, cross: pc.cross ?? (o.crosses[0] ?? null), source: "manual" }) }, "no line possible")) : null,
        pc.cross === null ? h("span", { class: "choices" }, "cross ", o.crosses.map((x) => h("button", { class: "ghost chip", "data-cross": `${p}-${o.card}-${x}`,
          onclick: () => send({ type: "cross", player: p, card: o.card, candle: x, source: "manual" }) }, `✕ ${candleName(p, o.card, x)}`))) : null));
    }
    return h("div", { class: "builder" }, powerNote(p, player), rows,
      lineStart && lineStart.p === p ? h("p", { class: "muted hint" }, `line from candle ${candleName(p, lineStart.c, lineStart.candle)}: click the other candle`) : null);
  }

  function playerPanel(p, player) {
    const s = current.state;
    const status = s.phase === "turn" ? (player.done ? h("span", { class: "badge ok" }, "played") : h("span", { class: "badge warn" }, "to play")) : null;
    return h("div", { class: "panel player-panel", "data-player": p },
      h("div", { class: "panel-head" }, h("h3", {}, player.name), status,
        familiarBadge(p, player),
        h("span", { class: "total", "data-total": p }, String(player.total), h("small", {}, " VP"))),
      h("div", { class: "cards" }, player.cards.map((card, c) => h("div", { class: "card-wrap" + (camera.player === p && camera.card === c ? " watched" : "") },
        h("div", { class: "card-head" }, h("b", {}, `Card ${c + 1} · ${card.letter}`),
          card.wild.length ? h("span", { class: "wild" }, "wild: " + card.wild.join(", ")) : null,
          h("button", { class: "ghost tiny-btn", title: "the camera reads this card", "data-camera": `${p}-${c}`, onclick: () => setCamera(p, c) },
            camera.player === p && camera.card === c ? "● camera" : "○ camera")),
        cardSvg(p, c, card, { name: player.name, pieces: player.pieces, options: player.options }),
        scoreTable(card, p, c)))),
      builder(p, player));
  }

  /* ---------------------------------------------------------------- familiars */
  function familiarBadge(p, player) {
    const f = player.familiar;
    if (!f) return null;
    const cost = current.state.familiar_mode === "one-for-all" ? "" : ` −${f.cost}`;
    const power = player.pieces.power;
    return h("span", { class: "familiar", "data-familiar": p },
      h("span", { class: "badge", title: f.text || "" }, `${f.id} ${f.name || ""}${cost}`),
      f.kind !== "once" ? null
        : power ? h("span", { class: "badge warn", "data-power-on": p, title: f.text }, "power on this turn")
          : f.used ? h("span", { class: "badge", "data-power-used": p, title: f.text }, "power used")
            : current.state.phase === "over" ? h("span", { class: "badge", "data-power-unused": p, title: f.text }, "power not used")
            : f.usable ? h("button", { class: "ghost tiny-btn", "data-power": p, title: f.text, onclick: (ev) => usePower(ev.currentTarget, p, player) }, "use power")
              : h("span", { class: "badge ok", "data-power-ready": p, title: f.text }, "power ready"));
  }

  function usePower(anchor, p, player) {
    const f = player.familiar;
    const power = (extra) => send({ type: "power", player: p, familiar: f.id, source: "manual", ...extra });
    const faces = (title, then) => pick(anchor, [1, 2, 3, 4, 5, 6].map((x) => ({ label: String(x), value: x })), then, title);
    const playable = player.cards.map((c, i) => i).filter((i) => player.pieces.card === null || player.pieces.card === i)
      .filter((i) => player.cards[i].sigil.top.includes(null));
    const onCard = (title, then) => (playable.length === 1 ? then(playable[0])
      : pick(anchor, playable.map((i) => ({ label: `card ${i + 1} (${player.cards[i].letter})`, value: i })), then, title));
    const lines = (card, list, title, then) => (list.length ? pick(anchor, list.map((l) => ({ label: lineName(p, card, l), value: l })), then, title)
      : toast("No line to choose on this card", "warn"));
    if (f.id === "F01") {
      pick(anchor, current.state.roll.map((v, i) => ({ label: `die ${i + 1}: ${v}`, value: i })), (die) =>
        faces(`Black Cat: die ${die + 1} now shows`, (to) => power({ die, to })), "Black Cat: turn which die?");
    } else if (f.id === "F06") {
      const dice = [];
      const next = () => faces(`Bat: your re-roll, die ${dice.length + 1}`, (v) => { dice.push(v); if (dice.length < 3) next(); else power({ dice }); });
      next();
    } else if (f.id === "F02") {
      onCard("Raven: the extra line goes on", (card) => lines(card, player.cards[card].open_lines || [], "Raven: the extra line", (line) => power({ card, extra_line: line })));
    } else if (f.id === "F07") {
      onCard("Snake: erase a line on", (card) => lines(card, player.cards[card].sigil.lines, "Snake: erase the line", (line) => power({ card, erase: line })));
    } else {
      power({});
    }
  }

  function powerNote(p, player) {
    const pw = player.pieces.power, card = player.pieces.card;
    if (!pw) return null;
    const what = { F01: () => `die ${pw.die + 1} shows ${pw.to} for you`, F06: () => `your dice are ${pw.dice.join(", ")}`,
      F02: () => `extra line ${lineName(p, card, pw.extra_line)}`, F07: () => `line ${lineName(p, card, pw.erase)} erased`,
      F04: () => "no candle is crossed this turn", F08: () => "your line may end at a crossed-out candle" }[pw.familiar];
    return h("p", { class: "muted hint", "data-power-note": "" }, `${player.familiar.name}: ${what ? what() : "power on"}` + (player.power_free ? " (the rules check the whole turn when it is complete)" : ""));
  }

  function pickingPanel() {
    const pk = current.state.picking;
    if (!pk) return null;
    const s = current.state;
    if (pickRolls.length !== s.players.length) resetPickRolls();
    if (!pk.order) {
      return h("div", { class: "panel notice", id: "picking" }, h("h3", {}, "Familiars: who picks first?"),
        h("p", {}, "Each player rolls three dice: the highest sum picks a familiar first, the others pick clockwise."),
        s.players.map((pl, p) => h("div", { class: "choice-row" }, h("span", { class: "choice-label" }, pl.name),
          h("span", { class: "dice-row" }, [0, 1, 2].map((k) => h("button", { class: "die small clickable" + (pickRolls[p][k] === null ? " unknown" : ""), "data-pick-roll": `${p}-${k}`,
            onclick: (ev) => pick(ev.currentTarget, [1, 2, 3, 4, 5, 6].map((x) => ({ label: String(x), value: x, current: x === pickRolls[p][k] })), (v) => {
              pickRolls[p][k] = v;
              if (pickRolls.every((r) => r.every((x) => x !== null))) {
                const rolls = pickRolls.map((r) => r.slice());
                send({ type: "pick_roll", rolls, source: "manual" }).then((r) => { if (r.ok) resetPickRolls(); else draw(); });
              } else draw();
            }, `${pl.name}: die ${k + 1}`) }, pickRolls[p][k] === null ? "?" : String(pickRolls[p][k])))),
          pickRolls[p].every((x) => x !== null) ? h("b", {}, ` = ${pickRolls[p].reduce((a, b) => a + b, 0)}`) : null)));
    }
    const fams = (catalogue && catalogue.familiars) || [];
    const who = s.players[pk.next].name;
    return h("div", { class: "panel notice", id: "picking" }, h("h3", {}, `Familiars: ${who} picks`),
      h("p", { class: "muted" }, "Still to pick, in order: " + pk.order.map((i) => s.players[i].name).join(" → ") + ". Each familiar's cost is subtracted from each of its player's sigils."),
      h("div", { class: "familiar-grid" }, fams.map((f) => {
        const owner = pk.taken[f.id];
        return h("button", { class: "ghost familiar-card", "data-pick": f.id, disabled: owner !== undefined, title: f.text,
          onclick: () => send({ type: "pick", player: pk.next, familiar: f.id, source: "manual" }) },
        h("b", {}, `${f.id} ${f.name}`), h("small", {}, owner !== undefined ? `taken by ${s.players[owner].name}` : `cost ${f.cost} · ${f.kind === "once" ? "once per game" : f.kind === "setup" ? "before the first roll" : "always"}`),
        h("span", { class: "familiar-text" }, f.text));
      })));
  }
  let pickRolls = [];
  function resetPickRolls() { pickRolls = current ? current.state.players.map(() => [null, null, null]) : []; }

  function scoreTable(card, p, c) {
    const goals = current.state.goals;
    const sc = card.score;
    return h("table", { class: "score-table", "data-score": `${p}-${c}` },
      h("tbody", {}, goals.map((g) => h("tr", {}, h("td", {}, `#${g.label || g.key} ${g.name}`), h("td", { class: "num" }, String((sc.goals || {})[g.label || g.key] ?? 0)))),
        sc.familiar_cost ? h("tr", {}, h("td", {}, "familiar"), h("td", { class: "num" }, "−" + sc.familiar_cost)) : null,
        h("tr", { class: "sum" }, h("td", {}, sc.pending ? "sigil total (with this turn)" : "sigil total"), h("td", { class: "num" }, String(sc.total ?? 0)))));
  }

  async function setCamera(p, c) {
    const r = await api("POST", "/api/cat/camera", { player: p, card: c });
    if (r.ok) { camera = { player: p, card: c }; draw(); toast(`The camera now reads card ${c + 1} of ${current.state.players[p].name}`, "ok"); }
  }

  /* ---------------------------------------------------------------- roll, log, header */
  function lastRoll(before = current.log.length) {   // the last roll entry of the log before index `before`
    for (let i = before - 1; i >= 0; i--) if (current.log[i].event.type === "roll") return current.log[i];
    return null;
  }

  function rollPanel() {
    const s = current.state;
    const entry = lastRoll();
    const dice = s.roll || [null, null, null];
    const waiting = s.roll === null;
    const items = dice.map((v, i) => h("button", {
      class: "die clickable" + (v === null ? " unknown" : "") + (s.wild_roll ? " wild" : ""), "data-roll": i,
      title: waiting ? "enter the roll" : "correct this die",
      onclick: (ev) => pick(ev.currentTarget, [1, 2, 3, 4, 5, 6].map((x) => ({ label: String(x), value: x, current: x === v })), (nv) => {
        if (entry && !waiting) {
          const d = entry.event.dice.slice(); d[i] = nv;
          amend(entry, { ...entry.event, dice: d }, `Die ${i + 1} corrected to ${nv}`);
        } else {
          manual[i] = nv; draw();
          if (manual.every((x) => x !== null)) { send({ type: "roll", dice: manual.slice(), source: "manual" }); manual = [null, null, null]; }
        }
      }, waiting ? `Die ${i + 1}` : `Die ${i + 1} really shows`),
    }, waiting ? (manual[i] === null ? "?" : String(manual[i])) : (v === null ? "?" : String(v))));
    const hint = s.phase === "over" ? "game over" : s.phase === "tiebreak" ? "Tie-break: roll 2 dice, each tied player draws one more line (above)"
      : s.phase === "setup" ? "Toad players choose their wild numbers (above)" : s.phase === "picking" ? "Players pick their familiars first (above)" : waiting ? "Roll the three dice in view of the camera, or click them to enter the roll"
      : s.roll.includes(null) ? "A die could not be read: click it and say its value"
        : s.wild_roll ? "Triples: every die is wild for everyone this turn" : "Each player writes one die, draws a line with the other two and crosses a candle";
    const over = s.phase === "over";
    return h("div", { class: "panel roll-strip" },
      h("div", { class: "turn-stat" }, h("div", { class: "label" }, "Turn"), h("div", { class: "value", id: "turn" }, `${s.turn}`, h("small", {}, ` / ${s.turns}`))),
      over ? h("a", { class: "button", id: "share-big", href: `/api/games/${gid()}/share.png`, target: "_blank" }, "Charge the sigils: share image")
        : s.phase === "tiebreak" ? h("div", { class: "dice-row" }, (s.tiebreak.dice || [null, null]).map((v) => h("span", { class: "die" + (v === null ? " unknown" : "") }, v === null ? "?" : String(v))))
          : h("div", { class: "dice-row", id: "roll" }, items),
      h("div", { class: "roll-hint" }, hint),
      h("div", { class: "row" },
        h("button", { class: "ghost", id: "undo", disabled: !current.can_undo, onclick: async () => { const r = await api("POST", `/api/games/${gid()}/undo`, {}); if (r.ok) { current = r.doc; draw(); } } }, "↶ Undo"),
        h("button", { class: "ghost", id: "redo", disabled: !current.can_redo, onclick: async () => { const r = await api("POST", `/api/games/${gid()}/redo`, {}); if (r.ok) { current = r.doc; draw(); } } }, "↷ Redo")));
  }
  let manual = [null, null, null];

  function logPanel() {
    return h("div", { class: "panel" }, h("div", { class: "panel-head" }, h("h2", {}, "This game"),
      h("a", { class: "button ghost", href: `/api/games/${gid()}/export`, download: "" }, "Export JSON"),
      h("a", { class: "button ghost", href: `/api/games/${gid()}/share.png`, target: "_blank", id: "share" }, "Share image"),
      h("button", { class: "ghost", onclick: () => { showSetup = true; draw(); } }, "New game")),
    h("ol", { class: "log", id: "events" }, current.log.slice().reverse().slice(0, 60).map((e, i) => h("li", { class: e.amended ? "amended" : "", "data-event": e.id },
      h("span", { class: "n" }, String(current.log.length - i)), h("span", { class: "t" }, e.text), fixButton(e)))));
  }

  function fixButton(e) {
    const ev = e.event;
    const btn = (label, opts, make, title) => h("button", { class: "ghost chip", "data-fix": e.id, title: "correct this reading",
      onclick: (x) => pick(x.currentTarget, opts, (v) => amend(e, make(v)), title) }, label);
    const faces = (first, cur) => [...new Set([...first, 1, 2, 3, 4, 5, 6])].map((x) => ({ label: String(x), value: x, current: x === cur }));
    if (ev.type === "write") {   // the numbers of the roll it was written from first
      const roll = lastRoll(current.log.indexOf(e));
      return btn("fix", faces(roll ? roll.event.dice.filter((x) => x !== null) : [], ev.value), (v) => ({ ...ev, value: v }), "The number written is");
    }
    if (ev.type === "pick") return btn("fix", ((catalogue && catalogue.familiars) || []).map((f) => ({ label: `${f.id} ${f.name}`, value: f.id, current: f.id === ev.familiar })), (v) => ({ ...ev, familiar: v }), "The familiar picked is");
    if (ev.type !== "cross" && ev.type !== "line") return null;
    const card = current.state.players[ev.player].cards[ev.card], L = card.layout, names = L.candle_names;
    if (ev.type === "cross") {   // the candles not crossed out otherwise, the 1s first, then the 2s...
      const crossed = new Set(card.sigil.crossed.filter((x) => x !== ev.candle));
      const byNumber = (u, w) => L.candles[u.value].number - L.candles[w.value].number;
      return btn("fix", names.map((n, x) => ({ label: n, value: x, current: x === ev.candle })).filter((o) => !crossed.has(o.value)).sort(byNumber),
        (v) => ({ ...ev, candle: v }), "The candle crossed is");
    }
    // every line, the nearest to the line recorded first (the least distance its two ends move)
    const [a, b] = ev.line, cc = L.candles.map((k) => k.center);
    const dist = (u, w) => Math.hypot(cc[u][0] - cc[w][0], cc[u][1] - cc[w][1]);
    const moved = ([m, n]) => Math.min(dist(a, m) + dist(b, n), dist(a, n) + dist(b, m));
    const lines = [];
    for (let m = 0; m < names.length; m++) for (let n = m + 1; n < names.length; n++) lines.push([m, n]);
    lines.sort((u, w) => moved(u) - moved(w));
    return btn("fix", lines.map((l) => ({ label: lineName(ev.player, ev.card, l), value: l, current: l[0] === a && l[1] === b })),
      (v) => ({ ...ev, line: v }), "The line drawn is");
  }

  function goalsStrip() {
    return h("div", { class: "goals", id: "goals" }, current.state.goals.map((g) => h("div", { class: "goal tier" + (g.tier || 1) },
      h("div", { class: "goal-head" }, h("span", { class: "goal-num" }, "#" + (g.label || g.key)), h("b", {}, g.name)), h("p", {}, g.text))));
  }

  function verdictPanel() {
    const v = current.state.verdict;
    if (!v) return null;
    const win = v.solo ? v.solo.win : true;
    return h("div", { class: "verdict " + (win ? "win" : "loss"), id: "verdict" }, v.text || "Game over",
      v.tiebreak ? h("div", { class: "muted" }, v.tiebreak) : null);
  }

  /* ---------------------------------------------------------------- setup */
  function setupPanel() {
    const cat = catalogue || { goals: [], familiars: [], sets: [], layouts: [] };
    const letters = (cat.layouts || []).map((l) => l.name);
    const players = ["Player 1"];
    const cards = ["A", "B"];
    const form = h("div", { class: "setup-grid" });
    const title = h("input", { id: "setup-title", placeholder: "Friday night", maxlength: 80 });
    const setSel = h("select", { id: "setup-set" }, h("option", { value: "" }, "choose the goals…"),
      // the rulebook's set names are also goal names ("Crossroads" holds #07-09, not #02 Crossroads)
      (cat.sets || []).map((s, i) => h("option", { value: i }, `Set “${s.name}”: goals ${s.goals.map((n) => "#" + String(n).padStart(2, "0")).join(", ")}`)),
      h("option", { value: "custom" }, "my own 2 or 3 goals"));
    const goalSel = [0, 1, 2].map((k) => h("select", { class: "goal-pick", "data-goal": k }, k === 2 ? h("option", { value: "" }, "— (easy game: 2 goals)") : null,
      (cat.goals || []).map((g) => h("option", { value: g.number }, `#${String(g.number).padStart(2, "0")} ${g.name}`))));
    goalSel[0].value = "1"; goalSel[1].value = "2"; goalSel[2].value = "3";
    const custom = h("div", { class: "row custom-goals", hidden: true }, goalSel);
    const preview = h("div", { class: "goal-preview muted" });
    const showGoals = () => {
      const nums = setSel.value === "custom" ? goalSel.map((x) => Number(x.value)).filter(Boolean)
        : setSel.value !== "" ? cat.sets[Number(setSel.value)].goals : [];
      preview.replaceChildren(...nums.map((n) => { const g = (cat.goals || []).find((x) => x.number === n); return g ? h("p", {}, h("b", {}, `#${g.key} ${g.name}: `), g.text) : null; }));
    };
    setSel.addEventListener("change", () => { custom.hidden = setSel.value !== "custom"; showGoals(); });
    goalSel.forEach((x) => x.addEventListener("change", showGoals));
    const famMode = h("select", { id: "setup-familiar-mode" }, h("option", { value: "none" }, "no familiar"),
      h("option", { value: "one-for-all" }, "one for all (every player, no cost)"),
      h("option", { value: "asymmetric" }, "asymmetric (each player picks their own; its cost on each of their sigils)"),
      h("option", { value: "solo" }, "solo (its cost is subtracted from each sigil)"));
    const famOne = h("select", { id: "setup-familiar" }, (cat.familiars || []).map((f) => h("option", { value: f.id }, `${f.id} ${f.name} (cost ${f.cost})`)));
    famOne.hidden = true;
    famMode.addEventListener("change", () => { famOne.hidden = famMode.value === "none" || famMode.value === "asymmetric"; });
    const campSel = h("select", { id: "setup-campaign" }, campaignOptions());
    const lineSel = h("select", { id: "setup-campaign-line", hidden: true });
    campSel.addEventListener("change", () => {
      const c = campaigns.find((x) => String(x.id) === campSel.value);
      lineSel.hidden = !c;
      if (!c) { setSel.disabled = false; return; }
      const played = new Set((c.standings && c.standings.played) || []);
      const grid = c.setup.goals;
      const idx = { "row 0": [0, 1, 2], "row 1": [3, 4, 5], "row 2": [6, 7, 8], "column 0": [0, 3, 6], "column 1": [1, 4, 7], "column 2": [2, 5, 8] };
      lineSel.replaceChildren(...Object.entries(idx).filter(([l]) => !played.has(l)).map(([l, ix]) => h("option", { value: l }, `${Doom.lineName(l)}: goals ${ix.map((i) => grid[i]).join(", ")}`)));
      setSel.disabled = true;
      if ((c.setup.players || []).length) { players.splice(0, players.length, ...c.setup.players); drawPlayers(); }
    });
    const rows = h("div", { class: "player-rows" });
    function drawPlayers() {
      rows.replaceChildren(...players.map((name, i) => h("div", { class: "row player-row" },
        h("label", {}, `Player ${i + 1}`, h("input", { value: name, "data-player-name": i, maxlength: 24, oninput: (e) => { players[i] = e.target.value; } })),
        players.length > 1 ? h("button", { class: "ghost", onclick: () => { players.splice(i, 1); drawPlayers(); } }, "remove") : null)));
    }
    drawPlayers();
    const cardSel = [0, 1].map((c) => h("label", {}, `Sigil card ${c + 1}`, h("select", { "data-card-letter": c, onchange: (e) => { cards[c] = e.target.value; } },
      letters.map((l) => h("option", { value: l, selected: cards[c] === l }, l)))));
    form.append(
      h("label", {}, "Title", title),
      h("div", {}, h("h3", { class: "sub" }, "Players (one: solo, more: multiplayer)"), rows,
        h("button", { class: "ghost", id: "add-player", onclick: () => { if (players.length < 6) { players.push(`Player ${players.length + 1}`); drawPlayers(); } } }, "+ add a player")),
      h("div", {}, h("h3", { class: "sub" }, "Sigil cards (every player takes the same pair)"), h("div", { class: "row" }, cardSel)),
      h("div", {}, h("h3", { class: "sub" }, "Goal cards"), setSel, custom, preview),
      h("div", { class: "row" }, h("label", {}, "Familiar", famMode), famOne),
      h("div", { class: "row" }, h("label", {}, "Campaign", campSel), h("label", {}, "\u00a0", lineSel)),
      h("div", { class: "row" }, h("button", { id: "start-cat", onclick: start }, "Start the game"),
        current ? h("button", { class: "ghost", onclick: () => { showSetup = false; draw(); } }, "Back to the game") : null));
    async function start() {
      let goals;
      if (campSel.value) goals = [1, 2, 3];   // the campaign's row or column decides
      else if (setSel.value === "custom") goals = goalSel.map((x) => x.value).filter((v) => v !== "").map(Number);
      else if (setSel.value !== "") goals = cat.sets[Number(setSel.value)].goals;
      else { toast("Choose the goal cards first", "warn"); return; }
      const setup = { players: players.map((n, i) => ({ name: n.trim() || `Player ${i + 1}` })), cards: cards.slice(), goals, familiar_mode: famMode.value };
      if (famMode.value === "one-for-all" || famMode.value === "solo") setup.familiar = famOne.value;
      // a campaign's game is named by the server after its campaign and line, then the title typed
      const body = { kind: "cat", title: title.value.trim() || (campSel.value ? "" : players.length === 1 ? "Solo game" : `${players.length} players`), setup };
      if (campSel.value) { body.campaign_id = Number(campSel.value); setup.campaign_line = lineSel.value; }
      const r = await api("POST", "/api/games", body);
      if (r.ok) { current = r.doc; showSetup = false; camera = { player: 0, card: 0 }; resetPickRolls(); draw(); }
    }
    return h("div", { class: "panel setup" }, h("div", { class: "panel-head" }, h("h2", {}, "New Doom Cat game")), form);
  }

  let tbDice = [null, null];     // the tie-break roll being entered by clicks
  function tiebreakPanel() {
    const tb = current.state.tiebreak;
    if (!tb) return null;
    const names = tb.tied.map((i) => current.state.players[i].name).join(" and ");
    if (!tb.dice) {
      return h("div", { class: "panel notice", id: "tiebreak" }, h("h3", {}, `Tie between ${names}`),
        h("p", {}, "Roll 2 dice (the camera reads them, or click them): each tied player draws one more line with them."),
        h("div", { class: "dice-row" }, [0, 1].map((k) => h("button", { class: "die clickable" + (tbDice[k] === null ? " unknown" : ""), "data-tiebreak": k,
          onclick: (ev) => pick(ev.currentTarget, [1, 2, 3, 4, 5, 6].map((x) => ({ label: String(x), value: x, current: x === tbDice[k] })), (v) => {
            tbDice[k] = v;
            if (tbDice.every((x) => x !== null)) { const dice = tbDice.slice(); tbDice = [null, null]; send({ type: "tiebreak", dice, source: "manual" }); } else draw();
          }, `Tie-break die ${k + 1}`) }, tbDice[k] === null ? "?" : String(tbDice[k])))));
    }
    const options = tb.options || {};
    return h("div", { class: "panel notice", id: "tiebreak" }, h("h3", {}, `Tie-break: ${tb.dice.join(" and ")}`),
      h("p", { class: "muted" }, "Each tied player draws one more line between candles matching the two dice."),
      tb.waiting.map((p) => {
        const mine = options[String(p)] || [];
        const perCard = [0, 1].map((c) => mine.filter((o) => o.card === c && o.line));
        const none = mine.length && mine.every((o) => o.line === null);
        return h("div", { class: "choice-row" }, h("span", { class: "choice-label" }, current.state.players[p].name),
          none ? h("button", { class: "ghost chip", "data-tb-line": `${p}-none`, onclick: () => send({ type: "tiebreak", player: p, card: 0, line: null, source: "manual" }) }, "no line possible")
            : perCard.map((opts, c) => opts.length ? h("span", { class: "choices" }, `card ${c + 1} (${current.state.players[p].cards[c].letter}) `,
              opts.map((o) => h("button", { class: "ghost chip", "data-tb-line": `${p}-${c}-${o.line[0]}-${o.line[1]}`,
                onclick: () => send({ type: "tiebreak", player: p, card: c, line: o.line, source: "manual" }) }, lineName(p, c, o.line)))) : null));
      }));
  }

  function toadPanel() {
    if (current.state.phase !== "setup") return null;
    return h("div", { class: "panel notice", id: "toad" }, h("h3", {}, "The Toad: choose a wild number for each card"),
      current.state.players.map((pl, p) => {
        const vals = [1, 1];
        return h("div", { class: "row" }, h("b", {}, pl.name), [0, 1].map((c) => h("select", { onchange: (e) => { vals[c] = Number(e.target.value); } },
          [1, 2, 3, 4, 5, 6].map((v) => h("option", { value: v }, `card ${c + 1}: ${v}`)))),
        h("button", { onclick: () => send({ type: "toad", player: p, wild: vals.slice() }) }, "Set"));
      }));
  }

  /* ---------------------------------------------------------------- page */
  function draw() {
    const app = $("app");
    if (!current || showSetup) { app.replaceChildren(setupPanel()); refreshCampaigns(); return; }
    const s = current.state;
    app.replaceChildren(...[
      Doom.gameTitle(current.game),
      verdictPanel(),
      tiebreakPanel(),
      pickingPanel(),
      toadPanel(),
      current.warning ? h("div", { class: "warning-bar", id: "warning" }, "⚠ " + current.warning) : null,
      current.broken ? h("div", { class: "warning-bar" }, "This game's log breaks a rule: " + current.broken) : null,
      rollPanel(),
      h("div", { class: "cat-layout" },
        h("div", { class: "players" }, s.players.map((pl, p) => playerPanel(p, pl))),
        h("aside", { class: "cat-side" }, goalsStrip(), logPanel())),
    ].filter(Boolean));
  }

  function render(p) {
    const engine = p.engine || {};
    gamesVersion = p.games_version;
    if ($("setup-campaign") && campaignsSeen !== gamesVersion) refreshCampaigns();
    $("unavailable").hidden = !!engine.available && !p.problem;
    if (!engine.available) {
      $("unavailable").replaceChildren(h("h3", {}, "Doom Cat is not available"), h("p", {}, engine.reason || ""),
        h("p", { class: "muted" }, "The live view and the other game still work."));
      $("app").replaceChildren();
      return;
    }
    if (p.problem) Doom.gameProblem($("unavailable"), p.problem);
    if (p.camera_card) camera = p.camera_card;
    const next = p.current;
    if (!next) { if (current !== null || !$("start-cat")) { current = null; draw(); } return; }
    const key = (v) => JSON.stringify([v.game.id, v.log, v.warning, v.state.players.map((x) => x.pieces)]);
    if (!current || key(next) !== key(current) || showSetup === false && !$("roll")) {
      if (!current || current.game.id !== next.game.id || pickRolls.length !== next.state.players.length) { current = next; resetPickRolls(); }
      current = next;
      if (!showSetup) draw();   // the new-game form keeps what was typed: the game shows again on "Back to the game"
    }
  }

  fetch("/api/catalogue/cat").then((r) => (r.ok ? r.json() : null)).catch(() => null)
    .then((cat) => { catalogue = cat; stream("cat", render); });
})();
