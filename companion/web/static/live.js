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
    const sigils = r.sigils || [];
    $("sigils-now").replaceChildren(...sigils.map((s) => h("p", { class: "sigil-now" },
      h("b", {}, "Card " + s.layout + ": "), (s.lines || []).length + " lines, " + (s.crossed || []).length + " crossed",
      (s.unknown || []).length ? h("span", { class: "muted" }, " · unseen: " + s.unknown.join(", ")) : null)));
    if (r.settled) $("dice-now").append(h("span", { class: "badge ok" }, "settled"));
    const src = live.source || {};
    const rows = [["State", src.state || "none"], ["Source", src.name || src.spec || "—"], ["Detail", src.detail || "—"],
      ["Frames shown", String(live.frame || 0)]];
    if (src.retry_in) rows.push(["Retry in", src.retry_in.toFixed(1) + " s"]);
    if (live.error) rows.push(["Reader error", live.error]);
    $("source-detail").replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
    const engines = [["cat", "/cat"], ["machine", "/machine"]].map(([k, href]) => {
      const e = p[k] || {};
      return h("li", {}, h("a", { href }, e.title || k), " ",
        e.available ? h("span", { class: "badge ok" }, "ready") : h("span", { class: "badge warn", title: e.reason }, "unavailable"));
    });
    $("engines").replaceChildren(...engines);
    const missing = Object.entries(live.unavailable || {});
    for (const k of ["cat", "machine"]) if (p[k] && !p[k].available) missing.push([p[k].title, p[k].reason]);
    $("unavailable-panel").hidden = missing.length === 0;
    $("unavailable").replaceChildren(...missing.map(([k, v]) => h("li", {}, h("b", {}, k), ": " + v)));
  }
  stream("live", render);
})();
