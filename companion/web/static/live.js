"use strict";
(() => {
  const { h, die, stream } = Doom;
  const $ = (id) => document.getElementById(id);
  const video = $("video");
  video.addEventListener("error", () => { setTimeout(() => { video.src = "/video.mjpg?" + Date.now(); }, 2000); });

  function render(p) {
    const live = p.live || {};
    const r = live.readings || {};
    $("fps").textContent = live.fps ? live.fps.toFixed(1) + " fps" : "";
    const dice = r.dice || [];
    $("dice-now").replaceChildren(...(dice.length ? dice.map((d) => die(d.value, { class: "die " + (d.color || ""), title: d.state + " · " + Math.round(100 * (d.confidence || 0)) + "%" }))
      : [h("span", { class: "muted" }, "no dice in view")]));
    if (r.settled) $("dice-now").append(h("span", { class: "badge ok" }, "settled"));
    const src = live.source || {};
    const rows = [["State", src.state || "none"], ["Source", src.source || "—"], ["Kind", src.kind || "—"],
      ["Source fps", src.fps !== undefined ? String(src.fps) : "—"], ["Frames read", String(live.frame || 0)]];
    if (src.dropped) rows.push(["Stale frames dropped", String(src.dropped)]);
    if (src.loops) rows.push(["Loops", String(src.loops)]);
    if (src.state === "retrying") rows.push(["Retry", `attempt ${src.attempt}, in ${(src.retry_in || 0).toFixed(1)} s`]);
    if (src.last_error || src.detail) rows.push(["Last error", src.last_error || src.detail]);
    if (live.error) rows.push(["Reader error", live.error]);
    $("source-detail").replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
    const events = (r.events || []).slice().reverse();
    $("events-now").replaceChildren(...(events.length ? events.map((e) => h("li", { class: e.refused ? "refused" : "" },
      e.text, e.refused ? h("div", { class: "why" }, e.refused) : null)) : [h("li", { class: "muted" }, "nothing yet")]));
    const sg = r.sigil;
    const m = sg && String(sg.card || "").match(/^g(\d+)p(\d+)c(\d+)$/);
    const cardName = m ? `Player ${Number(m[2]) + 1}, card ${Number(m[3]) + 1}` + (sg.layout ? ` (${sg.layout})` : "") : "Card";
    $("sigils-now").replaceChildren(...(sg ? [h("p", { class: "sigil-now" }, h("b", {}, cardName + ": "),
      sg.error ? h("span", { class: "muted" }, sg.error) : `${(sg.lines || []).length} lines, ${(sg.crossed || []).length} crossed`,
      (sg.unknown || []).length ? h("span", { class: "muted" }, " · unseen: " + sg.unknown.join(", ")) : null)] : []));
    const engines = [["cat", "/cat"], ["machine", "/machine"]].map(([k, href]) => {
      const e = p[k] || {};
      const feeds = p.feeds === k;
      return h("li", {}, h("a", { href }, e.title || k), " ",
        e.available ? h("span", { class: "badge ok" }, "ready") : h("span", { class: "badge warn", title: e.reason }, "unavailable"),
        e.available ? h("button", { class: "ghost tiny-btn" + (feeds ? " on" : ""), "data-feeds": k, title: "the camera's readings go to this game",
          onclick: async () => { const res = await Doom.api("POST", "/api/live/feeds", { kind: k }); if (res.ok) Doom.toast("The camera now feeds " + (e.title || k), "ok"); } },
        feeds ? "● camera feeds it" : "○ feed the camera here") : null);
    });
    $("engines").replaceChildren(...engines);
    const missing = Object.entries(live.unavailable || {});
    for (const k of ["cat", "machine"]) if (p[k] && !p[k].available) missing.push([p[k].title, p[k].reason]);
    $("unavailable-panel").hidden = missing.length === 0;
    $("unavailable").replaceChildren(...missing.map(([k, v]) => h("li", {}, h("b", {}, k), ": " + v)));
  }
  stream("live", render);
})();
