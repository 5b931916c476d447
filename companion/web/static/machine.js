"use strict";
/* Doom Machine page: the machine row, the trackers, the dice pool and allocation by clicks. */
(() => {
  const { h, api, toast, stream, pick } = Doom;
  const $ = (id) => document.getElementById(id);
  let current = null;          // the session view of the current game
  let selected = new Set();    // ids of the dice in hand the player clicked
  let showSetup = false;
  // players count dice from one; events and state keep the engine's ids (0, 1, ...)
  const dieName = (id) => "die " + (Number(id) + 1);

  const ICON = { damage: "dmg", power: "power", sentience: "sentience", broken_shield: "broken shield", repair: "repair", gear: "gear", lock: "lock", damage_parts: "hits parts" };
  const icons = (list) => (list || []).map((i) => h("span", { class: "icon " + i }, ICON[i] || i));

  async function send(event) {
    const r = await api("POST", `/api/games/${current.game.id}/events`, { event });
    if (r.ok) selected.clear();
    if (r.doc && r.doc.state) { current = r.doc; draw(); }
    return r;
  }

  function track(label, value, max, cls) {
    const cells = [];
    for (let i = 0; i <= max; i++) cells.push(h("span", { class: "cell" + (i === value ? " on" : "") + (i < value ? " past" : "") }, String(i)));
    return h("div", { class: "track " + cls }, h("div", { class: "track-label" }, label, h("b", {}, String(value))), h("div", { class: "cells" }, cells));
  }

  function hpBar(label, hp, max, cls) {
    return h("div", { class: "stat hp " + cls }, h("div", { class: "label" }, label),
      h("div", { class: "value" }, String(hp), h("small", {}, " / " + max)),
      h("div", { class: "bar" }, h("span", { style: `width:${Math.max(0, 100 * hp / max)}%` })));
  }

  function partCard(part, s) {
    const attackable = s.phase === "player";
    const options = (s.legal || []).filter((a) => a.type === "attack" && a.part === part.part);
    const ready = attackable && selected.size > 0;
    const card = h("div", {
      class: "part" + (part.core ? " core" : "") + (ready ? " target" : "") + (options.length ? " hittable" : ""),
      "data-part": part.part, title: part.destroyed_text ? "When destroyed: " + part.destroyed_text : "",
      onclick: () => {
        if (!attackable) return;
        if (!selected.size) { toast(options.length ? "Pick the dice first, then the part (" + part.condition_text + ")" : "No dice in hand meet " + part.condition_text, "warn"); return; }
        send({ type: "attack", part: part.part, dice: [...selected] });
      },
    },
    h("div", { class: "part-head" }, h("span", { class: "part-name" }, part.name), part.core ? h("span", { class: "badge err" }, "core") : null),
    h("div", { class: "part-hp" }, h("span", { class: "die yellow small", title: "HP" }, String(part.hp)), h("span", { class: "muted" }, " / " + part.hp_max + " HP")),
    h("div", { class: "part-cond" }, part.condition_text),
    h("ol", { class: "part-track" }, part.track.map((t, i) => h("li", { class: (i === part.pos ? "here " : "") + (i === part.next.pos ? "next " : "") + (t === "dead" ? "dead" : ""), title: t }, i === part.pos ? "●" : (t === "start" ? "○" : t === "blank" ? "·" : t === "dead" ? "■" : "◆")))),
    h("div", { class: "part-next" }, h("span", { class: "muted" }, "next: "), icons(part.next.icons), " " + part.next.text),
    part.destroyed_text ? h("div", { class: "part-destroyed" }, "✖ " + part.destroyed_text) : null);
    return card;
  }

  function diceArea(s) {
    const byAt = (at) => s.dice.filter((d) => d.at === at);
    const hand = byAt("hand");
    // each die with its name under it: the log says "die 4", the table shows faces
    const mk = (d, clickable) => h("span", { class: "die-slot" }, h(clickable ? "button" : "span", {
      class: "die " + d.color + (selected.has(d.id) ? " selected" : "") + (d.at !== "hand" ? " spent" : "") + (d.at === "locked" ? " locked" : "") + (d.rerolled ? " rerolled" : ""),
      "data-die": d.id, title: `${dieName(d.id)} (${d.color})` + (d.rerolled ? ", re-rolled" : ""),
      onclick: clickable ? () => { selected.has(d.id) ? selected.delete(d.id) : selected.add(d.id); draw(); } : null,
    }, d.value === null || d.value === undefined ? "·" : String(d.value)), h("small", { class: "die-n" }, dieName(d.id)));
    const slots = s.slots || {};
    const one = () => { if (selected.size !== 1) { toast("Pick one die first", "warn"); return null; } return [...selected][0]; };
    // a slot is open while the rules allow one of its actions now (a slot left, the stage)
    const allows = (type, delta) => (s.legal || []).some((a) => a.type === type && (delta === undefined || a.delta === delta));
    const slotBtn = (label, cls, used, max, fn, id, open) => h("button", { class: "slot " + cls, id, disabled: !open, onclick: fn },
      h("span", {}, label), h("small", {}, `${max - used} left`));
    return h("div", { class: "panel player" },
      h("div", { class: "panel-head" }, h("h2", {}, "Your dice"), h("span", { class: "muted" }, `pool ${s.pool}` + (s.phase === "player" ? ` · stage: ${s.stage}` : ""))),
      h("div", { class: "dice-row hand" }, hand.length ? hand.map((d) => mk(d, s.phase === "player")) : h("span", { class: "muted" }, s.phase === "roll" ? "roll the dice" : "no dice in hand")),
      h("div", { class: "dice-row small-row" },
        byAt("shield").length ? [h("span", { class: "muted" }, "shield: "), ...byAt("shield").map((d) => mk(d, false))] : null,
        byAt("spent").length ? [h("span", { class: "muted" }, " spent: "), ...byAt("spent").map((d) => mk(d, false))] : null,
        byAt("locked").length ? [h("span", { class: "muted" }, " locked: "), ...byAt("locked").map((d) => mk(d, false))] : null,
        byAt("ready").length && s.phase !== "roll" ? [h("span", { class: "muted" }, " ready: "), ...byAt("ready").map((d) => mk(d, false))] : null),
      h("div", { class: "slots" },
        slotBtn("+1", "mod", slots.modifier.used, slots.modifier.max, () => { const d = one(); if (d !== null) send({ type: "modify", die: d, delta: 1 }); }, "slot-plus", allows("modify", 1)),
        slotBtn("−1", "mod", slots.modifier.used, slots.modifier.max, () => { const d = one(); if (d !== null) send({ type: "modify", die: d, delta: -1 }); }, "slot-minus", allows("modify", -1)),
        slotBtn("Re-roll", "reroll", slots.reroll.used, slots.reroll.max, (ev) => {
          const d = one(); if (d === null) return;
          pick(ev.currentTarget, [{ label: "roll for me", value: 0 }, ...[1, 2, 3, 4, 5, 6].map((v) => ({ label: String(v), value: v }))],
            (v) => send(v ? { type: "reroll", die: d, value: v, source: "manual" } : { type: "reroll", die: d }), "New face of " + dieName(d));
        }, "slot-reroll", allows("reroll")),
        slotBtn("Shield", "shield", slots.shield.used, slots.shield.max, () => {
          if (!selected.size) { toast("Pick the dice for the shield first", "warn"); return; }
          (async () => { for (const d of [...selected]) { const r = await send({ type: "shield", die: d }); if (!r.ok) break; } })();
        }, "slot-shield", allows("shield"))),
      h("p", { class: "muted hint" }, s.phase === "player" ? "Click dice, then a slot or a machine part. Utilities first, then shields, then damage." : ""));
  }

  // the values entered for the roll in progress, kept while the page is redrawn
  let entered = { key: null, values: {} };

  function rollPanel(s) {
    const ids = s.to_roll || [];
    const key = JSON.stringify([current.game.id, s.turn, ids]);
    if (entered.key !== key) entered = { key, values: {} };
    const values = entered.values;
    const chooser = h("div", { class: "dice-row" }, ids.map((id) => {
      const d = s.dice.find((x) => x.id === id);
      const sel = h("select", { "data-roll": id, "aria-label": dieName(id) }, h("option", { value: "" }, "?"), [1, 2, 3, 4, 5, 6].map((v) => h("option", { value: v }, String(v))));
      if (values[id]) sel.value = String(values[id]);
      sel.addEventListener("change", () => { if (sel.value) values[id] = Number(sel.value); else delete values[id]; });
      return h("label", { class: "roll-pick " + d.color }, dieName(id), sel);
    }));
    return h("div", { class: "panel roll-panel" }, h("div", { class: "panel-head" }, h("h2", {}, `Turn ${s.turn}: roll ${ids.length} dice`),
      h("span", { class: "muted" }, "the camera reads a settled roll by itself")),
      chooser,
      h("div", { class: "row" },
        h("button", { id: "roll-manual", onclick: () => {
          if (Object.keys(values).length !== ids.length) { toast("Set every die's value (or let the camera read them)", "warn"); return; }
          send({ type: "roll", dice: Object.fromEntries(ids.map((i) => [String(i), values[i]])), source: "manual" });
        } }, "Use these values"),
        h("button", { class: "ghost", id: "roll-random", onclick: () => send({ type: "roll" }) }, "Roll for me")));
  }

  function logPanel(cur) {
    const s = cur.state;
    return h("div", { class: "panel" }, h("div", { class: "panel-head" }, h("h2", {}, "Log"),
      h("button", { class: "ghost", id: "undo", disabled: !cur.can_undo, onclick: async () => { const r = await api("POST", `/api/games/${cur.game.id}/undo`, {}); if (r.ok) { current = r.doc; draw(); } } }, "↶ Undo"),
      h("button", { class: "ghost", id: "redo", disabled: !cur.can_redo, onclick: async () => { const r = await api("POST", `/api/games/${cur.game.id}/redo`, {}); if (r.ok) { current = r.doc; draw(); } } }, "↷ Redo")),
    h("ol", { class: "log", id: "events" }, cur.log.slice().reverse().slice(0, 40).map((e, i) => h("li", { class: e.amended ? "amended" : "", "data-event": e.id },
      h("span", { class: "n" }, String(cur.log.length - i)), h("span", { class: "t" }, e.text),
      e.event.type === "roll" && e.event.dice ? h("span", { class: "fix" }, Object.entries(e.event.dice).map(([id, v]) => h("button", {
        class: "die tiny clickable " + ((s.dice.find((d) => String(d.id) === id) || {}).color || ""), title: "correct " + dieName(id), "data-fix": id,
        onclick: (ev) => pick(ev.currentTarget, [1, 2, 3, 4, 5, 6].map((x) => ({ label: String(x), value: x, current: x === v })), async (nv) => {
          const event = { ...e.event, dice: { ...e.event.dice, [id]: nv } };
          const r = await api("POST", `/api/games/${cur.game.id}/events/${e.id}`, { event });
          if (r.doc && r.doc.state) { current = r.doc; draw(); if (r.ok) toast("Corrected " + dieName(id) + " to " + nv, "ok"); }
        }, "Which face does " + dieName(id) + " really show?"),
      }, String(v)))) : e.event.type === "reroll" && e.event.value ? h("span", { class: "fix" }, h("button", {
        class: "die tiny clickable", title: "correct the re-rolled die", "data-fix-reroll": e.id,
        onclick: (ev) => pick(ev.currentTarget, [1, 2, 3, 4, 5, 6].map((x) => ({ label: String(x), value: x, current: x === e.event.value })), async (nv) => {
          const r = await api("POST", `/api/games/${cur.game.id}/events/${e.id}`, { event: { ...e.event, value: nv } });
          if (r.doc && r.doc.state) { current = r.doc; draw(); if (r.ok) toast("Corrected the re-roll to " + nv, "ok"); }
        }, "The re-rolled die shows"),
      }, String(e.event.value))) : e.event.type === "grow" && e.event.part ? h("span", { class: "fix" }, h("button", {
        class: "ghost chip", title: "correct the card turned over", "data-fix-grow": e.id,
        onclick: (ev) => pick(ev.currentTarget, ((catalogue && catalogue.parts) || []).map((p) => ({ label: p.name, value: p.id, current: p.id === e.event.part })), async (nv) => {
          const r = await api("POST", `/api/games/${cur.game.id}/events/${e.id}`, { event: { ...e.event, part: nv } });
          if (r.doc && r.doc.state) { current = r.doc; draw(); if (r.ok) toast("Corrected the card drawn", "ok"); }
        }, "The card turned over is"),
      }, "fix")) : e.event.type === "cycle" && e.event.locks ? h("span", { class: "fix" }, h("button", {
        class: "ghost chip", title: "correct the die locked", "data-fix-lock": e.id,
        onclick: (ev) => pick(ev.currentTarget, s.dice.map((d) => ({ label: `${dieName(d.id)} (${d.color})`, value: d.id, current: e.event.locks.includes(d.id) })), async (nv) => {
          const r = await api("POST", `/api/games/${cur.game.id}/events/${e.id}`, { event: { ...e.event, locks: [nv, ...e.event.locks.slice(1)] } });
          if (r.doc && r.doc.state) { current = r.doc; draw(); if (r.ok) toast("Corrected the die locked", "ok"); }
        }, "The die set aside is"),
      }, "fix")) : null))),
    h("h3", { class: "sub" }, "Machine"),
    h("ol", { class: "log machine-log", id: "machine-log" }, s.log.slice().reverse().slice(0, 60).map((line) => h("li", {}, h("span", { class: "t" }, line)))));
  }

  function setupPanel(engine, cur) {
    const hard = h("input", { type: "checkbox", id: "setup-hard" });
    const seed = h("input", { type: "number", id: "setup-seed", placeholder: "random", min: 0 });
    const parts = ((catalogue && catalogue.parts) || []).filter((p) => !p.core).sort((a, b) => a.name.localeCompare(b.name));
    const starters = [0, 1, 2].map((k) => h("select", { "data-revealed": k, "aria-label": `starting part ${k + 1}` },
      h("option", { value: "" }, "shuffled"), parts.map((p) => h("option", { value: p.id }, p.name))));
    const begin = async () => {
      const setup = { hard: hard.checked };
      if (seed.value !== "") setup.seed = Number(seed.value);
      const revealed = starters.map((x) => x.value).filter(Boolean);
      if (revealed.length) setup.revealed = revealed;
      const r = await api("POST", "/api/games", { kind: "machine", title: hard.checked ? "Doom Machine (hard)" : "Doom Machine", setup });
      if (r.ok) { current = r.doc; showSetup = false; selected.clear(); draw(); }
    };
    return h("div", { class: "panel setup" }, h("div", { class: "panel-head" }, h("h2", {}, "New Doom Machine run"),
      cur ? h("button", { class: "ghost", onclick: () => { showSetup = false; draw(); } }, "Back to the game") : null),
    h("div", { class: "setup-grid" },
      h("div", { class: "row" },
        h("label", { class: "check" }, hard, " Hard mode (all 16 parts, player card side B)"),
        h("label", {}, "Shuffle seed (optional)", seed)),
      h("div", {}, h("h3", { class: "sub" }, "Starting parts turned over (left to right)"),
        h("div", { class: "row" }, starters.map((x, k) => h("label", {}, `Part ${k + 1}`, x)))),
      h("p", { class: "muted" }, "Set the table as the rulebook says and name the three cards you turned over (or leave them shuffled: the program draws them). Roll your dice in view of the camera, or enter them here."),
      h("div", { class: "row" }, h("button", { id: "start-machine", onclick: begin }, "Start"))));
  }

  /* The next step fires a lock icon (the part's own, or a neighbour's its gear cycles onto
     one) and the player has dice to choose from. */
  function locking(s) {
    const step = s.next_step;
    if (s.phase !== "machine" || !step || step.type !== "cycle") return false;
    return (s.lock_choices || []).some((c) => c.length > 1);
  }

  /* One picker per lock the step fires, then the step with the dice chosen. */
  function chooseLocks(anchor, s, chosen) {
    const k = chosen.length;
    const choices = s.lock_choices || [];
    if (k >= choices.length) { send({ ...s.next_step, locks: chosen }); return; }
    const free = choices[k].filter((id) => !chosen.includes(id));
    if (free.length <= 1) { chooseLocks(anchor, s, [...chosen, ...free]); return; }
    const title = choices.length > 1 ? `Lock ${k + 1} of ${choices.length}: which die sits out the next turn?` : "Lock: which die sits out the next turn?";
    pick(anchor, free.map((id) => { const d = s.dice.find((x) => x.id === id); return { label: `${dieName(id)} (${d.color})`, value: id }; }),
      (id) => chooseLocks(anchor, s, [...chosen, id]), title);
  }

  function draw() {
    const app = $("app");
    if (!current || showSetup) { app.replaceChildren(setupPanel(null, current)); return; }
    const s = current.state;
    const outcome = s.outcome;
    const growing = s.phase === "machine" && s.next_step && s.next_step.type === "grow";
    const drawable = s.drawable || [];
    const stats = h("div", { class: "stats-row" },
      h("div", { class: "stat" }, h("div", { class: "label" }, "Turn"), h("div", { class: "value" }, String(s.turn))),
      h("div", { class: "stat" }, h("div", { class: "label" }, "Phase"), h("div", { class: "value phase" }, s.phase + (s.phase === "player" ? " · " + s.stage : ""))),
      hpBar("Your HP", s.hp, s.hp_max, "player-hp"),
      h("div", { class: "stat shield" }, h("div", { class: "label" }, "Shield"), h("div", { class: "value" }, String(s.shield)), h("small", { class: "muted" }, `${s.shield_dice}/${s.shield_cap} dice` + (s.broken_shield_next ? " · broken next turn" : ""))),
      h("div", { class: "stat" }, h("div", { class: "label" }, "Deck"), h("div", { class: "value" }, String(s.deck_size)), h("small", { class: "muted" }, "parts left")),
      h("div", { class: "trackers" }, track("Power", s.power, 10, "power"), track("Sentience", s.sentience, 10, "sentience")));
    const controls = h("div", { class: "row controls" },
      s.phase === "player" ? h("button", { id: "end-turn", onclick: () => send({ type: "end_turn" }) }, "End player phase →") : null,
      s.phase === "machine" && growing && drawable.length ? h("button", { id: "name-part", onclick: (ev) => pick(ev.currentTarget,
        drawable.map((p) => ({ label: p.name, value: p.part })), (v) => send({ type: "grow", part: v, source: "manual" }), "The card turned over is") }, "▶ Draw: name the card turned over") : null,
      s.phase === "machine" ? h("button", { class: growing && drawable.length ? "ghost" : "", id: "step", onclick: (ev) => {
        if (!locking(s)) { send(s.next_step); return; }
        chooseLocks(ev.currentTarget, s, []);
      } }, growing && drawable.length ? "Draw for me (random)" : "▶ Step: " + s.next_step_text + (locking(s) ? " (choose the die to lock)" : "")) : null,
      s.phase === "machine" && !growing && !locking(s) ? h("button", { class: "ghost", id: "run-phase", onclick: async () => {
        while (current.state.phase === "machine" && current.state.next_step.type !== "grow" && !locking(current.state)) { const r = await send(current.state.next_step); if (!r.ok) break; }
      } }, "Run the cycles") : null,
      h("span", { class: "spacer" }),
      h("button", { class: "ghost", onclick: () => { showSetup = true; draw(); } }, "New run"),
      h("a", { class: "button ghost", href: `/api/games/${current.game.id}/export`, download: "" }, "Export"));
    app.replaceChildren(...[
      Doom.gameTitle(current.game),
      outcome ? h("div", { class: "verdict " + (outcome === "won" ? "win" : "loss"), id: "verdict" }, outcome === "won" ? "Victory: the Doom Core is destroyed!" : "The machine destroyed you.", h("small", {}, ` (turn ${s.turn})`)) : null,
      current.warning ? h("div", { class: "warning-bar", id: "warning" }, "⚠ " + current.warning) : null,
      current.broken ? h("div", { class: "warning-bar" }, "This game's log breaks a rule: " + current.broken) : null,
      stats,
      h("div", { class: "panel machine-row-panel" }, h("div", { class: "panel-head" }, h("h2", {}, "The machine"), h("span", { class: "muted" }, `${s.row.length} parts in play · ${(s.destroyed || []).length} destroyed`)),
        h("div", { class: "machine-row", id: "row" }, s.row.map((p) => partCard(p, s)))),
      controls,
      h("div", { class: "grid2" }, h("div", {}, s.phase === "roll" ? rollPanel(s) : diceArea(s)), logPanel(current))].filter(Boolean));
  }

  function render(p) {
    const engine = p.engine || {};
    if ("roll_area" in p) rollAreaWanted = !!(engine.available && p.camera_feeds && !p.roll_area);
    const source = ((p.live || {}).source || {}).state;
    $("roll-area-hint").hidden = !rollAreaWanted || !source || source === "none";
    $("unavailable").hidden = !!engine.available && !p.problem;
    if (!engine.available) {
      $("unavailable").replaceChildren(h("h3", {}, "Doom Machine is not available"), h("p", {}, engine.reason || ""),
        h("p", { class: "muted" }, "The live view and the other game still work."));
      $("app").replaceChildren();
      return;
    }
    if (p.problem) Doom.gameProblem($("unavailable"), p.problem);
    const next = p.current;
    // no game: the setup panel is drawn once, not at every camera update (it holds the choices)
    if (!next) { if (current !== null || !$("start-machine")) { current = null; draw(); } return; }
    if (!current || next.game.id !== current.game.id || JSON.stringify(next.log) !== JSON.stringify(current.log) || next.warning !== current.warning) {
      if (current && next.game.id !== current.game.id) selected.clear();
      current = next;
      // drop selected dice that left the hand
      const hand = new Set(current.state.dice ? current.state.dice.filter((d) => d.at === "hand").map((d) => d.id) : []);
      selected = new Set([...selected].filter((d) => hand.has(d)));
      draw();
    }
  }
  let catalogue = null;
  let rollAreaWanted = false;
  fetch("/api/catalogue/machine").then((r) => (r.ok ? r.json() : null)).catch(() => null)
    .then((c) => { catalogue = c; stream("machine", render); });
})();
