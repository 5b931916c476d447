/* Doom Companion: helpers shared by every page (no build step, no framework). */
"use strict";

const Doom = (() => {
  // The access token (needed when the server listens beyond this machine): ?token=... once.
  const params = new URLSearchParams(location.search);
  if (params.get("token")) {
    localStorage.setItem("doomToken", params.get("token"));
    params.delete("token");
    const q = params.toString();
    history.replaceState(null, "", location.pathname + (q ? "?" + q : ""));
  }
  const token = () => localStorage.getItem("doomToken") || "";

  /** Build an element: h("div", {class: "x", onclick: f}, child, "text", ...). */
  function h(tag, attrs, ...children) {
    const svg = ["svg", "g", "line", "circle", "rect", "path", "text", "polygon", "polyline"].includes(tag);
    const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "text") el.textContent = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  let toastTimer = null;
  function toast(message, kind) {
    const el = document.getElementById("toast");
    el.textContent = message;
    el.className = "toast " + (kind || "warn");
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.hidden = true; }, kind === "ok" ? 2500 : 7000);
  }

  /** Call the JSON API; rules refusals (409) and bad input (4xx) show a toast and resolve, as
      does what the server says it did (done: "undid event 3: ..."). */
  async function api(method, url, body) {
    const opts = { method, headers: {} };
    if (method !== "GET") {
      opts.headers["Content-Type"] = "application/json";
      opts.headers["X-Doom-Token"] = token();
      opts.body = JSON.stringify(body || {});
    }
    let res, doc;
    try {
      res = await fetch(url, opts);
      doc = await res.json();
    } catch (err) {
      toast("The server did not answer: " + err.message, "error");
      return { ok: false, status: 0, doc: null };
    }
    if (!res.ok) {
      const reason = (doc && doc.outcome && doc.outcome.reason) || (doc && doc.error) || res.statusText;
      toast(reason, res.status === 409 ? "warn" : "error");
    } else if (doc && doc.done) {   // what an undo or redo stepped over
      toast(doc.done[0].toUpperCase() + doc.done.slice(1), "ok");
    }
    return { ok: res.ok, status: res.status, doc };
  }

  function sourceStatus(live) {
    const el = document.getElementById("source-status");
    if (!el || !live) return;
    const src = live.source || {};
    const state = src.state || "none";
    el.dataset.state = state;
    el.querySelector(".text").textContent =
      state === "none" ? "no camera" : state + (src.kind ? " · " + src.kind : "");
    el.title = (src.source || "") + (src.last_error ? " — " + src.last_error : "") + (src.detail ? " — " + src.detail : "");
  }

  window.__doomLatencies = [];
  /** Subscribe to the server's pushed state for a view; calls render(payload) on each update. */
  function stream(view, render) {
    let es = null;
    let lastCaptured = 0;
    let lastError = "";
    function open() {
      es = new EventSource("/api/stream?view=" + encodeURIComponent(view));
      let full = {};
      es.onmessage = (msg) => {
        // a frame-only update carries "live" alone: the rest is the last full state
        const payload = Object.assign(full, JSON.parse(msg.data));
        // the server could not read its database (damaged, locked): say so once, keep going
        if (payload.error && payload.error !== lastError) toast(payload.error, "error");
        lastError = payload.error;
        sourceStatus(payload.live);
        try {
          render(payload);
        } finally {
          const cap = payload.live && payload.live.captured_at;
          if (cap && cap !== lastCaptured) {
            lastCaptured = cap;
            // time from the frame's capture to the page showing what was read in it
            window.__doomLatencies.push(Date.now() / 1000 - cap);
            if (window.__doomLatencies.length > 500) window.__doomLatencies.shift();
          }
          document.body.dataset.ready = "1";
        }
      };
      es.onerror = () => { sourceStatus({ source: { state: "reconnecting" } }); };
    }
    open();
    window.addEventListener("beforeunload", () => es && es.close());
  }

  const pip = (v) => (v === null || v === undefined ? "?" : String(v));
  function die(value, attrs) {
    const a = Object.assign({ class: "die" }, attrs || {});
    if (value === null || value === undefined) a.class += " unknown";
    return h("span", a, pip(value));
  }

  return { h, api, toast, stream, die, token };
})();

/* Where a game would be: why the current game cannot be opened (a damaged row, a card gone). */
Doom.gameProblem = (el, problem) => el.replaceChildren(
  Doom.h("h3", {}, "The current game cannot be opened"), Doom.h("p", { class: "problem" }, problem),
  Doom.h("p", { class: "muted" }, "Start a new game here, or resume another one from the History page."));

/* The open game's name above its page (the title typed at setup, a campaign's row...). */
Doom.gameTitle = (game) => Doom.h("div", { class: "game-title", id: "game-title" },
  game.title || "Untitled game", Doom.h("span", { class: "muted" }, ` · game ${game.id}`));

/* A campaign's row or column as players count them, from 1 ("row 0" is stored: "row 1"). */
Doom.lineName = (line) => line.replace(/\d+$/, (k) => String(Number(k) + 1));

/* A small popover menu next to an element: Doom.pick(el, [{label, value}], onPick). */
Doom.pick = (anchor, options, onPick, title) => {
  const { h } = Doom;
  document.querySelectorAll(".picker").forEach((p) => p.remove());
  const box = h("div", { class: "picker", role: "menu" },
    title ? h("div", { class: "picker-title" }, title) : null,
    h("div", { class: "picker-options" }, options.map((o) => h("button", {
      class: "ghost" + (o.current ? " current" : ""), "data-value": String(o.value),
      onclick: (ev) => { ev.stopPropagation(); box.remove(); onPick(o.value); },
    }, o.label))));
  document.body.append(box);
  const r = anchor.getBoundingClientRect();
  box.style.left = Math.max(8, Math.min(window.scrollX + r.left, window.scrollX + document.documentElement.clientWidth - box.offsetWidth - 8)) + "px";
  box.style.top = (window.scrollY + r.bottom + 6) + "px";
  setTimeout(() => document.addEventListener("click", function close(ev) {
    if (!box.contains(ev.target)) { box.remove(); document.removeEventListener("click", close); }
  }), 0);
  return box;
};
