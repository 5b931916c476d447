"use strict";
(() => {
  const { h, stream } = Doom;
  const $ = (id) => document.getElementById(id);
  function render(p) {
    const engine = p.engine || {};
    $("unavailable").hidden = !!engine.available;
    if (!engine.available) {
      $("unavailable").replaceChildren(h("h3", {}, (engine.title || "This game") + " is not available yet"),
        h("p", {}, engine.reason || ""), h("p", { class: "muted" }, "The live view and the other game still work."));
      $("app").replaceChildren();
      return;
    }
    $("app").replaceChildren(h("p", { class: "muted" }, "Ready."));
  }
  stream(document.body.dataset.page, render);
})();
