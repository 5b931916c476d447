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
      h("td", { "data-label": "started" }, new Date(g.created).toLocaleString()),
      h("td", { "data-label": "events" }, String(g.events)),
      h("td", { class: g.damaged ? "damaged" : "", "data-label": "result" }, g.damaged ? "damaged: " + g.damaged : resultText(g.result)),
      h("td", { class: "actions" },
        h("button", { class: "ghost", onclick: async () => {
          const r = await api("POST", `/api/games/${g.id}/current`, {});
          if (r.ok) location.href = "/" + g.kind;
        } }, "Resume"),
        h("a", { class: "button ghost", href: `/api/games/${g.id}/export`, download: `doom-game-${g.id}.json` }, "Export"),
        g.kind === "cat" ? h("a", { class: "button ghost", href: `/api/games/${g.id}/share.png`, target: "_blank" }, "Share image") : null))));
    const campaigns = p.campaigns || [];
    $("campaigns").replaceChildren(...(campaigns.length ? campaigns.map(campaignCard)
      : [h("p", { class: "muted" }, "No campaigns yet: 6 games over the rows and columns of a 3×3 grid of goals.")]));
  }

  function campaignCard(c) {
    const st = c.standings || {};
    const grid = c.setup.goals || [];
    const lines = { "row 0": [0, 1, 2], "row 1": [3, 4, 5], "row 2": [6, 7, 8], "column 0": [0, 3, 6], "column 1": [1, 4, 7], "column 2": [2, 5, 8] };
    const done = new Set((st.played || []).flatMap((l) => lines[l] || []));
    const totals = Object.entries(st.totals || {}).sort((a, b) => b[1] - a[1]);
    const verdict = st.games === 6 ? (st.solo_win === true ? "solo campaign won (over 840)" : st.solo_win === false ? "solo campaign lost (840 or less)"
      : "winner: " + (st.winners || []).join(", ")) : `${st.games || 0} of 6 games played` + (st.target ? ` · solo target: over ${st.target}` : "");
    return h("div", { class: "campaign", "data-campaign": c.id },
      h("div", { class: "campaign-grid" }, grid.map((g, i) => h("span", { class: done.has(i) ? "played" : "" }, "#" + String(g).padStart(2, "0")))),
      h("div", { class: "campaign-body" }, h("h3", {}, c.title), h("p", { class: "muted" }, verdict + (st.error ? " · " + st.error : "")),
        h("table", { class: "table standings" }, h("tbody", {}, totals.map(([n, t], i) => h("tr", {}, h("td", {}, String(i + 1)), h("td", {}, n), h("td", { class: "num" }, `${t} VP`))))),
        h("p", { class: "muted" }, "played: " + ((st.played || []).map(Doom.lineName).join(", ") || "none yet")),
        st.with_familiars ? familiarsBlock(c, st) : null));
  }

  /* A campaign with familiars: who holds which, and between games the choice of the player
     whose turn it is (lowest total first), each familiar allowed or refused with the reason. */
  function familiarsBlock(c, st) {
    const held = st.held || {};
    const names = Object.keys(held);
    const holding = h("p", { class: "familiars-held" }, h("b", {}, "Familiars: "),
      names.length ? names.map((n) => `${n}: ` + (held[n] ? `${held[n].name} (cost ${held[n].cost})` : "none")).join(" · ")
        : "picked in the first game (familiar mode asymmetric, or solo)");
    if (st.phase !== "choosing" || !(st.choose_order || []).length) return holding;
    const who = st.choose_order[0];
    const options = st.options || [];
    const refused = options.filter((o) => !o.ok);
    return h("div", {}, holding, h("div", { class: "familiar-choice" },
      h("p", {}, h("b", {}, who + " chooses"), " (between games, lowest total first): keep your familiar or take one unused or held by a player with a higher total"),
      h("div", { class: "row chips" }, options.filter((o) => o.ok || o.keep).map((o) => h("button", {
        class: o.keep ? "chip keep" : "ghost chip", "data-familiar": o.id, disabled: !o.ok, title: o.reason || (o.keep ? "keep it" : "take it"),
        onclick: async () => {
          const r = await api("POST", `/api/campaigns/${c.id}/familiar`, { player: who, familiar: o.id });
          if (r.ok) toast(`${who} ${o.keep ? "keeps" : "takes"} ${o.name}`, "ok");
        } }, (o.keep ? "Keep " : "") + `${o.name} (${o.cost})`)),
        refused.filter((o) => !o.keep).map((o) => h("button", { class: "ghost chip", "data-familiar": o.id, disabled: true, title: o.reason }, `${o.name} (${o.cost})`))),
      refused.length ? h("ul", { class: "muted refusals" }, refused.map((o) => h("li", {}, `${o.name}: ${o.reason}`))) : null));
  }

  const gridSel = [];
  for (let i = 0; i < 9; i++) {
    const sel = h("select", { "data-cell": i }, [...Array(27).keys()].map((k) => h("option", { value: k + 1 }, "#" + String(k + 1).padStart(2, "0"))));
    sel.value = String(i + 1);
    gridSel.push(sel);
  }
  $("campaign-grid").append(...gridSel);
  $("new-campaign").addEventListener("click", () => { $("campaign-form").hidden = !$("campaign-form").hidden; });
  $("campaign-random").addEventListener("click", () => {
    const pool = [...Array(27).keys()].map((k) => k + 1);
    for (let i = pool.length - 1; i > 0; i--) { const j = Math.floor(Math.random() * (i + 1)); [pool[i], pool[j]] = [pool[j], pool[i]]; }
    gridSel.forEach((s, i) => { s.value = String(pool[i]); });
  });
  $("campaign-create").addEventListener("click", async () => {
    const players = $("campaign-players").value.split(",").map((x) => x.trim()).filter(Boolean);
    const body = { title: $("campaign-title").value.trim() || "Campaign", goals: gridSel.map((s) => Number(s.value)) };
    if (players.length) body.players = players;
    if ($("campaign-familiars").checked) body.familiars = true;
    const r = await api("POST", "/api/campaigns", body);
    if (r.ok) { toast("Campaign created: start its games on the Doom Cat page", "ok"); $("campaign-form").hidden = true; }
  });

  $("import-file").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    ev.target.value = "";   // whatever comes of it, picking the same file again is a new change
    if (!file) return;
    let doc;
    try { doc = JSON.parse(await file.text()); } catch (e) { toast("That file is not JSON: " + e.message, "error"); return; }
    const r = await api("POST", "/api/games/import", doc);
    if (r.ok) toast("Imported as game " + r.doc.id, "ok");
  });
  stream("history", render);
})();
