"use strict";
(() => {
  const { h, api, toast, stream } = Doom;
  const $ = (id) => document.getElementById(id);
  const kindName = { cat: "Doom Cat", machine: "Doom Machine" };

  function resultText(r) {
    if (!r) return "in play";
    return r.summary || JSON.stringify(r);
  }

  function render(p) {
    const games = p.games || [];
    $("no-games").hidden = games.length > 0;
    $("games").querySelector("tbody").replaceChildren(...games.map((g) => h("tr", { "data-game": g.id },
      h("td", {}, String(g.id)),
      h("td", {}, kindName[g.kind] || g.kind, g.current ? h("span", { class: "badge ok" }, "current") : null),
      h("td", {}, g.title),
      h("td", {}, new Date(g.created).toLocaleString()),
      h("td", {}, String(g.events)),
      h("td", {}, resultText(g.result)),
      h("td", { class: "actions" },
        h("button", { class: "ghost", onclick: async () => {
          const r = await api("POST", `/api/games/${g.id}/current`, {});
          if (r.ok) location.href = "/" + g.kind;
        } }, "Resume"),
        h("a", { class: "button ghost", href: `/api/games/${g.id}/export`, download: `doom-game-${g.id}.json` }, "Export"),
        g.kind === "cat" ? h("a", { class: "button ghost", href: `/api/games/${g.id}/share.png`, target: "_blank" }, "Share image") : null))));
    const campaigns = p.campaigns || [];
    $("campaigns").replaceChildren(...(campaigns.length ? campaigns.map((c) => h("div", { class: "campaign" },
      h("b", {}, c.title), " · goals ", (c.setup.goals || []).join(", "),
      c.standings ? h("span", {}, " · ", c.standings) : null))
      : [h("p", { class: "muted" }, "No campaigns yet.")]));
  }

  $("import-file").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    let doc;
    try { doc = JSON.parse(await file.text()); } catch (e) { toast("That file is not JSON: " + e.message, "error"); return; }
    const r = await api("POST", "/api/games/import", doc);
    if (r.ok) toast("Imported as game " + r.doc.id, "ok");
    ev.target.value = "";
  });
  stream("history", render);
})();
