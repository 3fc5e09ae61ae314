// Connect for each auth kind: a key, the values a catalog row declares
// (fields, or a token row's key_fields), OAuth (the authorization page opens
// and comes back to /connected), and Pinned prices' coin picker.
import * as api from "../api.gen.js";
import { h, clear, form, status, field } from "../ui.js";

export function dialog(title, ...body) {
  const close = h("button", { type: "button", class: "close", "aria-label": "Close" }, "×");
  const d = h("dialog", { "aria-labelledby": "dlg-title" }, h("div", { class: "dlg-head" }, h("h2", { id: "dlg-title" }, title), close), ...body);
  close.onclick = () => d.close();
  d.addEventListener("close", () => d.remove());
  document.body.append(d);
  d.showModal();
  return d;
}

function isPinned(s, row) {
  return (row?.config?.adapter || s.slug).replace(/-/g, "_") === "pinned_prices";
}

export function connectDialog(s, row, ctx) {
  const cfg = row?.config || {};
  const base = { server_id: s.id, owner_scope: ctx.scope, owner_id: ctx.id };
  const done = async (reply, d) => {
    if (reply.authorization_url) {
      clear(d.querySelector(".dlg-body"), h("p", {}, `Finish the login with ${s.name} in the page that opened; it comes back here when done.`),
        h("p", {}, h("a", { href: reply.authorization_url, target: "_blank", rel: "noopener noreferrer", class: "authorize" }, "Open the authorization page again")));
      window.open(reply.authorization_url, "_blank", "noopener");
      return;
    }
    status(`${s.name} connected${reply.tools ? ` (${reply.tools} tools)` : ""}`);
    d.close();
    ctx.reload();
  };
  const body = h("div", { class: "dlg-body" });
  const d = dialog(`Connect ${s.name}`, body);
  if (row?.setup_hint) body.append(h("p", { class: "muted" }, row.setup_hint));
  if (s.auth === "oauth") {
    body.append(h("p", {}, `${s.name} signs in in your browser. The login lands on this box's page that says what happened.`),
      form({ label: "Connect with OAuth", submit: `Continue to ${s.name}`, onSubmit: async () => done(await api.post_mcp_connect(base), d) }));
    return;
  }
  const fields = [];
  if (s.auth === "none" && cfg.fields?.length) {
    for (const f of cfg.fields) fields.push({ name: f.name, label: f.label || f.name, type: f.secret === false ? "text" : "password", required: !f.optional });
  } else if (cfg.key_fields?.length) {
    for (const f of cfg.key_fields) fields.push({ name: f.name, label: (f.label || f.name) + (f.optional ? " (optional)" : ""), type: "password", required: !f.optional });
  } else if (s.auth === "token") {
    fields.push({ name: "key", label: "API key", type: "password", required: true });
  }
  const picker = isPinned(s, row) ? coinPicker(() => d.querySelector('[name="key"]')?.value || "") : null;
  body.append(form({
    label: `Connect ${s.name}`, submit: "Connect", fields, extra: picker?.el,
    onSubmit: async (v) => {
      const input = { ...base };
      if (fields.length === 1 && fields[0].name === "key") input.key = v.key;
      else if (fields.length) input.values = Object.fromEntries(fields.map((f) => [f.name, v[f.name]]).filter(([, x]) => x !== ""));
      if (picker) input.coins = picker.coins();
      done(await api.post_mcp_connect(input), d);
    },
  }));
}

// coinPicker searches CoinGecko with the key typed so far (or a connected
// login's key when connID is set) and keeps up to 20 coins.
export function coinPicker(keyOf, connID) {
  const chosen = new Map();
  const list = h("ul", { class: "coins", "aria-label": "Pinned coins" });
  const results = h("ul", { class: "coin-results", "aria-live": "polite" });
  const q = field({ name: "coin_query", label: "Search coins", help: "Type a name or symbol, then pick up to 20 coins." });
  const redraw = () => clear(list, [...chosen.values()].map((c) => h("li", {}, `${c.name} (${c.symbol})`, " ",
    h("button", { type: "button", class: "small", "aria-label": `Remove ${c.name}`, onclick: () => { chosen.delete(c.id); redraw(); } }, "×"))));
  const search = h("button", { type: "button", onclick: async () => {
    const query = q.querySelector("input").value.trim();
    if (!query) return;
    try {
      const found = connID ? await api.get_mcp_connections_by_id_pinned_prices_search(connID, { query: { q: query } })
        : await api.post_mcp_pinned_prices_search({ key: keyOf(), query });
      const coins = Array.isArray(found) ? found : found.coins || [];
      clear(results, coins.slice(0, 10).map((c) => h("li", {}, h("button", { type: "button", class: "link", onclick: () => {
        if (chosen.size < 20) chosen.set(c.id, { id: c.id, symbol: c.symbol, name: c.name }); redraw();
      } }, `${c.name} (${c.symbol})`))));
    } catch (e) {
      q.querySelector(".field-error").textContent = e.message;
    }
  } }, "Search");
  const el = h("fieldset", { class: "picker", "data-field": "coins" }, h("legend", {}, "Pinned coins"), q, search, results, list,
    h("p", { class: "field-error", "aria-live": "polite" }));
  return { el, coins: () => [...chosen.values()], set: (cs) => { cs.forEach((c) => chosen.set(c.id, c)); redraw(); } };
}
