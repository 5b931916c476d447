"use strict";
(() => {
  const { h, die, stream } = Doom;
  const $ = (id) => document.getElementById(id);
  const video = $("video");
  video.addEventListener("error", () => { setTimeout(() => { video.src = "/video.mjpg?" + Date.now(); }, 2000); });

  // -- the roll area: a rectangle dragged on the camera image (fractions of the frame) ------
  const wrap = $("video-wrap"), box = $("roll-box");
  let area = null, drawing = false, start = null;
  function content() {   // the image's drawn rectangle inside the element (object-fit: contain)
    const r = video.getBoundingClientRect();
    const aspect = video.naturalWidth && video.naturalHeight ? video.naturalWidth / video.naturalHeight : 16 / 9;
    const w = Math.min(r.width, r.height * aspect), hgt = Math.min(r.height, r.width / aspect);
    return { left: (r.width - w) / 2, top: (r.height - hgt) / 2, width: w, height: hgt, r };
  }
  const clamp = (v) => Math.max(0, Math.min(1, v));
  function fraction(ev) {
    const c = content();
    return [clamp((ev.clientX - c.r.left - c.left) / c.width), clamp((ev.clientY - c.r.top - c.top) / c.height)];
  }
  function place(a) {
    box.hidden = !a;
    if (!a) return;
    const c = content();
    Object.assign(box.style, { left: c.left + a[0] * c.width + "px", top: c.top + a[1] * c.height + "px",
      width: (a[2] - a[0]) * c.width + "px", height: (a[3] - a[1]) * c.height + "px" });
  }
  function showArea() {
    const pct = (v) => Math.round(100 * v) + "%";
    $("roll-area-text").textContent = area ? `from ${pct(area[0])}, ${pct(area[1])} to ${pct(area[2])}, ${pct(area[3])} of the image`
      : "the whole image";
    $("roll-clear").hidden = !area;
    box.classList.toggle("editing", drawing);
    if (!drawing) place(area);
  }
  function stopDrawing() {
    drawing = false; start = null;
    wrap.classList.remove("drawing");
    $("roll-draw").textContent = "Draw the roll area";
    showArea();
  }
  async function save(a) {
    const res = await Doom.api("POST", "/api/live/roll-area", { area: a });
    if (res.ok) {
      area = res.doc.area;
      Doom.toast(area ? "Roll area set: dice outside it are ignored" : "The whole image is the roll area", "ok");
    }
    showArea();
  }
  $("roll-draw").addEventListener("click", () => {
    if (drawing) { stopDrawing(); return; }
    drawing = true;
    wrap.classList.add("drawing");
    $("roll-draw").textContent = "Cancel";
    Doom.toast("Drag a rectangle on the camera image around where you throw the dice", "ok");
  });
  $("roll-clear").addEventListener("click", () => save(null));
  wrap.addEventListener("pointerdown", (ev) => {
    if (!drawing) return;
    ev.preventDefault();
    start = fraction(ev);
    wrap.setPointerCapture(ev.pointerId);
    box.classList.add("editing");
    place([...start, ...start]);
  });
  wrap.addEventListener("pointermove", (ev) => {
    if (!drawing || !start) return;
    const [x, y] = fraction(ev);
    place([Math.min(start[0], x), Math.min(start[1], y), Math.max(start[0], x), Math.max(start[1], y)]);
  });
  wrap.addEventListener("pointerup", (ev) => {
    if (!drawing || !start) return;
    const [x, y] = fraction(ev);
    const a = [Math.min(start[0], x), Math.min(start[1], y), Math.max(start[0], x), Math.max(start[1], y)]
      .map((v) => Math.round(v * 1000) / 1000);
    stopDrawing();
    save(a);
  });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && drawing) stopDrawing(); });
  window.addEventListener("resize", () => place(area));
  video.addEventListener("load", () => place(area));

  const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

  function render(p) {
    if ("roll_area" in p) { area = p.roll_area; showArea(); }
    const live = p.live || {};
    const r = live.readings || {};
    $("fps").textContent = live.fps ? live.fps.toFixed(1) + " fps" : "";
    const dice = r.dice || [];
    $("dice-now").replaceChildren(...(dice.length ? dice.map((d) => die(d.value, { class: "die " + (d.color || "") + (d.check ? " check" : ""), title: d.state + " · " + Math.round(100 * (d.confidence || 0)) + "%" + (d.check ? " · check this die" : "") }))
      : [h("span", { class: "muted" }, "no dice in view")]));
    if (r.settled) $("dice-now").append(h("span", { class: "badge ok" }, "settled"));
    const ignored = r.ignored || [];
    if (ignored.length) $("dice-now").append(h("span", { class: "muted ignored-dice", title: "outside the roll area: not read into rolls" },
      `${ignored.length} outside the roll area`));
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
    $("events-now").replaceChildren(...(events.length ? events.map((e) => h("li", { class: e.refused ? "refused" : e.check ? "check" : "" },
      e.text, e.refused ? h("div", { class: "why" }, e.refused) : null)) : [h("li", { class: "muted" }, "nothing yet")]));
    const sg = r.sigil;
    const cardName = sg && sg.name ? sg.name[0].toUpperCase() + sg.name.slice(1) + (sg.layout ? ` (${sg.layout})` : "") : "Card";
    $("sigils-now").replaceChildren(...(sg ? [h("p", { class: "sigil-now" }, h("b", {}, cardName + ": "),
      sg.error ? h("span", { class: "muted" }, sg.error) : `${count((sg.lines || []).length, "line")}, ${(sg.crossed || []).length} crossed, top ${(sg.top || []).map((t) => (t ? t.value + (t.circled ? "◯" : "") : "·")).join(" ")}`,
      (sg.unseen || []).length ? h("span", { class: "muted" }, " · unseen: " + sg.unseen.join(", ")) : null)] : []));
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
    for (const k of ["cat", "machine"]) if (p[k] && (!p[k].available || p[k].problem)) missing.push([p[k].title, p[k].reason || p[k].problem]);
    $("unavailable-panel").hidden = missing.length === 0;
    $("unavailable").replaceChildren(...missing.map(([k, v]) => h("li", {}, h("b", {}, k), ": " + v)));
  }
  stream("live", render);
})();
