// The Tools view of an organisation, guild or agent: every catalog server
// and native tool with its Inherit / On / Off switch and the scope that
// decides it, per-tool switches, Not set up with the missing variables,
// and tools the box does not offer.
import * as api from "../api.gen.js";
import { h, clear, status, errorBox, when, showProblems } from "../ui.js";
import { connectDialog, coinPicker, dialog } from "./connect.js";
import { testDialog } from "./test.js";

const viewAPI = { organisation: api.get_orgs_by_id_tools, guild: api.get_guilds_by_id_tools, agent: api.get_agents_by_id_tools };
const scopeWord = { organisation: "organisation", guild: "guild", agent: "agent", platform: "platform" };

export async function toolsView(panel, scope, id) {
  const holder = h("div", { class: "tools", id: "tools-view" });
  const filters = filterBar(holder);
  panel.append(filters.el, holder);
  const ctx = { scope, id, filters };
  ctx.reload = async () => {
    // A switch re-draws the view: the control that had focus gets it back.
    const key = document.activeElement?.dataset?.key;
    const opened = [...holder.querySelectorAll("details[open]")].map(detailsKey);
    const [view, servers, engine] = await Promise.all([viewAPI[scope](id), catalogRows(),
      api.get_worker_health().catch(() => null)]);
    ctx.engine = engine;
    renderTools(holder, view, servers, ctx);
    for (const d of holder.querySelectorAll("details")) if (opened.includes(detailsKey(d))) d.open = true;
    if (scope === "agent") holder.prepend(await offerPreview(id));
    if (key) holder.querySelector(`[data-key="${CSS.escape(key)}"]`)?.focus();
  };
  await ctx.reload().catch((e) => holder.append(errorBox(e)));
}

const detailsKey = (d) => d.className + ":" + (d.closest("li.server")?.dataset.slug || "");

// filterBar: a search over server and tool names and two narrowing
// checkboxes; they act on what is drawn, so a re-draw keeps them.
function filterBar(holder) {
  const search = h("input", { type: "search", id: "tools-search", placeholder: "Server or tool name", autocomplete: "off" });
  const connected = h("input", { type: "checkbox", id: "tools-connected" });
  const on = h("input", { type: "checkbox", id: "tools-on" });
  const apply = () => applyFilters(holder, { text: search.value.trim().toLowerCase(), connected: connected.checked, on: on.checked });
  for (const el of [search, connected, on]) el.addEventListener("input", apply);
  const el = h("div", { class: "tools-filters", role: "search", "aria-label": "Filter tools" },
    h("div", { class: "field" }, h("label", { for: "tools-search" }, "Search tools"), search),
    h("div", { class: "field check" }, connected, h("label", { for: "tools-connected" }, "Connected only")),
    h("div", { class: "field check" }, on, h("label", { for: "tools-on" }, "On only")),
    h("p", { class: "muted", id: "tools-count", "aria-live": "polite" }));
  return { el, apply };
}

function applyFilters(holder, f) {
  let shown = 0;
  let total = 0;
  for (const card of holder.querySelectorAll("li.server")) {
    const tools = [...card.querySelectorAll("li.tool")];
    const textHit = (el) => !f.text || el.dataset.search.includes(f.text);
    const serverHit = textHit(card);
    let toolHits = 0;
    for (const t of tools) {
      const hit = (serverHit || textHit(t)) && (!f.on || t.dataset.on === "1");
      t.hidden = !hit;
      if (hit) toolHits++;
    }
    const show = (serverHit || toolHits > 0) && (!f.connected || card.dataset.connected === "1") &&
      (!f.on || card.dataset.on === "1");
    card.hidden = !show;
    total++;
    if (show) shown++;
    // A search that hits a tool opens its list so the match is seen.
    const det = card.querySelector("details.server-tools");
    if (det && f.text && !serverHit && toolHits) det.open = true;
  }
  for (const row of holder.querySelectorAll("table.native tbody tr")) {
    row.hidden = !((!f.text || row.dataset.search.includes(f.text)) && (!f.on || row.dataset.on === "1"));
  }
  const folded = holder.querySelector("details.not-set-up");
  if (folded) {
    const n = [...folded.querySelectorAll("li.server")].filter((c) => !c.hidden).length;
    folded.hidden = n === 0;
    if (f.text && n) folded.open = true;
  }
  const count = document.getElementById("tools-count");
  if (count) count.textContent = f.text || f.connected || f.on ? `${shown} of ${total} servers shown` : "";
}

// offerPreview: the tools a direct run of the agent would be offered now,
// and the API's warnings about tools it leaves out.
async function offerPreview(agentID) {
  const box = h("section", { class: "offer-preview", "aria-labelledby": "offer-h" }, h("h2", { id: "offer-h" }, "What this agent gets"));
  try {
    const offer = await api.get_agents_by_id_offered_tools(agentID);
    const byServer = new Map();
    for (const t of offer.tools || []) {
      const k = t.server_slug || "native";
      if (!byServer.has(k)) byServer.set(k, []);
      byServer.get(k).push(t.name);
    }
    box.append(h("p", {}, offer.tools?.length ? `A direct run is offered ${offer.tools.length} tools.` : "A direct run is offered no tools."),
      h("ul", { class: "offer-list" }, [...byServer].map(([k, names]) =>
        h("li", {}, h("strong", {}, k === "native" ? "Native" : k), ": ", names.join(", ")))));
    if (offer.warnings?.length) {
      box.append(h("div", { role: "status", class: "offer-warnings" }, h("h3", {}, "Left out"),
        h("ul", {}, offer.warnings.map((w) => h("li", { class: "warn" }, w)))));
    }
  } catch (e) { box.append(errorBox(e)); }
  return box;
}

let catalogCache;
async function catalogRows() {
  if (!catalogCache) catalogCache = api.get_mcp_servers().then((rows) => new Map(rows.map((r) => [r.id, r]))).catch(() => new Map());
  return catalogCache;
}

// renderTools draws a view; it is timed (performance marks) for the figures.
export function renderTools(holder, view, catalog, ctx) {
  performance.mark("tools-render-start");
  clear(holder);
  const ready = view.servers.filter((s) => s.set_up);
  const unready = view.servers.filter((s) => !s.set_up);
  holder.append(h("h2", {}, "Servers"),
    h("ul", { class: "servers" }, ready.map((s) => serverCard(s, catalog.get(s.id), ctx))),
    unready.length ? h("details", { class: "not-set-up" }, h("summary", {}, `${unready.length} ${unready.length === 1 ? "server" : "servers"} not set up on this box`),
      h("ul", { class: "servers" }, unready.map((s) => serverCard(s, catalog.get(s.id), ctx)))) : null,
    h("h2", {}, "Native tools"), engineNotice(ctx.engine), nativeTable(view.native, ctx));
  ctx.filters?.apply();
  performance.mark("tools-render-end");
  performance.measure("tools-render", "tools-render-start", "tools-render-end");
}

function decided(by) {
  return by ? h("span", { class: "decided" }, "decided by the " + (scopeWord[by] || by)) : h("span", { class: "decided" }, "default");
}

// asks shows an approval setting that decides for a tool (docs/approvals.md):
// "asks first", with its rules, or an explicit "does not ask" under a wider Ask.
function asks(a) {
  if (!a) return null;
  const where = scopeWord[a.scope] || a.scope;
  if (!a.ask) return h("span", { class: "badge", title: "an approval setting of the " + where }, "does not ask · the " + where);
  const rules = (a.policy?.rules || []).map((r) => `${r.arg} ${r.op} ${r.value || (r.values || []).join(", ")}`);
  return h("span", { class: "badge warn", title: rules.length ? "asks when " + rules.join(" or ") : "asks before every call" },
    "asks first · the " + where + (rules.length ? " · when " + rules.join(" or ") : ""));
}

// switch3 is a radio group Inherit / On / Off; change(value) writes it.
// key names the switch stably across re-draws, so focus can return to it.
function switch3(label, value, change, disabled, key) {
  const name = "sw-" + Math.random().toString(36).slice(2);
  const group = h("div", { class: "switch3", role: "radiogroup", "aria-label": label });
  for (const v of ["inherit", "on", "off"]) {
    const id = name + "-" + v;
    group.append(h("input", { type: "radio", name, id, value: v, checked: value === v, disabled, "data-key": key && key + ":" + v,
      onchange: () => change(v).catch((e) => { status(e.message, "error"); }) }),
    h("label", { for: id }, v[0].toUpperCase() + v.slice(1)));
  }
  return group;
}

// writeSwitch sets one switch; what says so names the server or tool.
async function writeSwitch(ctx, kind, catalogID, v, label) {
  const body = { scope: ctx.scope, scope_id: ctx.id, catalog_kind: kind, catalog_id: catalogID };
  if (v === "inherit") await api.delete_bindings(body).catch((e) => { if (e.status !== 404) throw e; });
  else await api.put_bindings({ ...body, enabled: v === "on" });
  status(v === "inherit" ? `${label} follows the wider scope at this ${ctx.scope}` : `${label} is ${v} at this ${ctx.scope}`);
  await ctx.reload();
}

function serverCard(s, row, ctx) {
  const own = s.own_login;
  const login = s.login;
  const card = h("li", { class: "server", "data-slug": s.slug, id: "server-" + s.slug,
    "data-search": [s.name, s.slug, row?.description].filter(Boolean).join(" ").toLowerCase(),
    "data-connected": login?.status === "connected" ? "1" : "0", "data-on": s.enabled ? "1" : "0" });
  const head = h("div", { class: "server-head" },
    h("h3", {}, s.name), h("span", { class: "muted" }, s.auth),
    !s.set_up ? h("span", { class: "badge warn" }, "Not set up") : null,
    login ? h("span", { class: "badge " + login.status }, login.status + (login.account_hint ? " · " + login.account_hint : "") +
      (login.decided_by && login.decided_by !== ctx.scope ? " · from the " + login.decided_by : "")) : h("span", { class: "badge" }, "no login"),
    s.has_switch ? switch3(`${s.name} at this ${ctx.scope}`, s.switch, (v) => writeSwitch(ctx, "mcp", s.id, v, s.name), false, "mcp:" + s.id) : null,
    s.has_switch ? h("span", { class: "state" }, s.enabled ? "On" : "Off", " ", decided(s.decided_by)) : null);
  card.append(head);
  if (!s.set_up) {
    card.append(h("p", { class: "missing" }, "The box lacks ", (s.missing_variables || []).map((v, i) => [i ? ", " : "", h("code", {}, v)]),
      ": set ", (s.missing_variables || []).length > 1 ? "them" : "it", " in the box's environment (Admin → Platform keys) to connect."));
  }
  if (row?.description) card.append(h("p", { class: "desc" }, row.description));
  const actions = h("div", { class: "actions" });
  if (needsNoLogin(s, row)) {
    // Nothing to type: Turn on makes its login here by listing its tools (ADR 0616).
    if (!login || login.status !== "connected") {
      actions.append(h("button", { type: "button", class: "connect", disabled: !s.set_up,
        onclick: (ev) => turnOn(s, ctx, ev.target) }, "Turn on"));
    }
  } else if (!own || own.status !== "connected") {
    // A login from a wider scope already serves this one: connecting here
    // adds this scope's own login, which wins over it.
    const inherited = !own && login?.status === "connected";
    actions.append(h("button", { type: "button", class: "connect", disabled: !s.set_up,
      title: inherited ? `Runs here use the ${login.decided_by}'s login; connect one of this ${ctx.scope}'s own to use it instead` : null,
      onclick: () => connectDialog(s, row, ctx) }, own ? "Reconnect" : inherited ? `Use another login for this ${ctx.scope}` : "Connect"));
  }
  if (login?.status === "connected" && s.kind !== "github") {
    actions.append(h("button", { type: "button", class: "refresh", onclick: (ev) => refreshTools(s, login, ctx, ev.target) }, "Refresh"));
  }
  if (own) {
    if (own.status === "connected") actions.append(h("button", { type: "button", class: "test", onclick: () => testDialog(s, own) }, "Test"));
    if (own.status === "pending" && (row?.config?.adapter || s.slug) === "drive") {
      actions.append(h("button", { type: "button", class: "folder", onclick: () => folderDialog(s, own, ctx) }, "Choose folder"));
    }
    if (own.status === "connected" && s.kind === "github") {
      actions.append(h("button", { type: "button", class: "repos", onclick: () => reposDialog(s, own, ctx) }, "Repositories"));
    }
    if (own.status === "connected" && (row?.config?.adapter || s.slug).replace(/-/g, "_") === "pinned_prices") {
      actions.append(h("button", { type: "button", class: "coins", onclick: () => coinsDialog(s, own) }, "Coins"));
    }
    actions.append(h("button", { type: "button", class: "health", onclick: (ev) => showHealth(card, own, ev.target) }, "Health"),
      h("button", { type: "button", class: "danger", onclick: async () => {
        if (!confirm(`Disconnect ${s.name}? Its bindings go too.`)) return;
        await api.delete_mcp_connections_by_id(own.id); status("Disconnected"); ctx.reload();
      } }, "Disconnect"));
  }
  card.append(actions);
  if (s.tools?.length) {
    card.append(h("details", { class: "server-tools" }, h("summary", {}, `${s.tools.length} tools`),
      h("ul", {}, s.tools.map((t) => h("li", { class: "tool", "data-tool": t.name,
        "data-search": [t.remote_name, t.name].filter(Boolean).join(" ").toLowerCase(), "data-on": t.enabled ? "1" : "0" },
        h("span", { class: "tool-name" }, t.remote_name || t.name),
        switch3(`${t.remote_name || t.name} at this ${ctx.scope}`, t.switch,
          (v) => writeSwitch(ctx, "mcp_tool", t.name, v, `${s.name}'s ${t.remote_name || t.name}`), !t.listed, "mcp_tool:" + t.name),
        h("span", { class: "state" }, t.enabled ? "On" : "Off", " ", decided(t.decided_by)), " ", asks(t.approval),
        t.problem ? h("span", { class: "badge warn problem" }, t.problem) : null,
        t.description ? h("p", { class: "muted" }, t.description) : null)))));
  }
  return card;
}

// needsNoLogin: a remote row with auth none and nothing to fill in.
function needsNoLogin(s, row) {
  const cfg = row?.config || {};
  return s.kind === "remote" && s.auth === "none" && !cfg.provider && !cfg.fields?.length;
}

// turnOn switches a server that needs no login on at this scope; the API
// lists its tools first and says why when it cannot.
async function turnOn(s, ctx, btn) {
  btn.disabled = true;
  try {
    await api.put_bindings({ scope: ctx.scope, scope_id: ctx.id, catalog_kind: "mcp", catalog_id: s.id, enabled: true });
    status(`${s.name}: on`);
    await ctx.reload();
  } catch (e) { status(e.message, "error"); btn.disabled = false; }
}

// refreshTools lists the login's tools again now.
async function refreshTools(s, login, ctx, btn) {
  btn.disabled = true;
  try {
    const tools = await api.post_mcp_connections_by_id_tools_refresh(login.id);
    status(`${s.name}: ${tools.length} tools listed`);
    await ctx.reload();
  } catch (e) { status(e.message, "error"); btn.disabled = false; }
}

// folderDialog confines a Drive login to one folder that is not My Drive.
async function folderDialog(s, conn, ctx) {
  const body = h("div", { class: "dlg-body" });
  const d = dialog(`${s.name}: choose a folder`, body);
  const list = h("ul", { class: "rows", "aria-live": "polite" });
  const err = h("p", { class: "form-error", role: "alert" });
  const show = async (corpus, parent) => {
    try {
      const folders = await api.get_mcp_connections_by_id_drive_folders(conn.id, { query: { corpus, parent } });
      clear(list, folders.length ? folders.map((f) => h("li", {}, h("strong", {}, f.name), " ", h("span", { class: "muted" }, f.place || ""), " ",
        h("button", { type: "button", class: "small", onclick: () => show(corpus, f.id) }, "Open"), " ",
        h("button", { type: "button", class: "small", onclick: async () => {
          try { await api.put_mcp_connections_by_id_drive_folder(conn.id, { folder_id: f.id }); status(`${s.name} confined to ${f.name}`); d.close(); ctx.reload(); }
          catch (e) { err.textContent = e.message; }
        } }, "Use this folder"))) : h("li", { class: "muted" }, "No folder here."));
    } catch (e) { err.textContent = e.message; }
  };
  body.append(h("p", {}, "Drive tools reach only the folder you choose and what it holds (not My Drive itself)."),
    h("div", { class: "actions" }, [["my", "My Drive"], ["shared", "Shared with me"], ["drives", "Shared drives"]].map(([c, label]) =>
      h("button", { type: "button", class: "small", onclick: () => show(c) }, label))), err, list);
  show("my");
}

// reposDialog picks the repositories a GitHub login works on; the view
// reloads after a save so the dialog opened again starts from the new choice.
async function reposDialog(s, conn, ctx) {
  const body = h("div", { class: "dlg-body" });
  const d = dialog(`${s.name}: repositories`, body);
  let repos;
  try { repos = await api.get_mcp_connections_by_id_github_repositories(conn.id); } catch (e) { body.append(errorBox(e)); return; }
  const chosen = new Set((s.github_repositories || []).map((r) => r.url));
  const boxes = repos.map((r, i) => h("div", { class: "field check" }, h("input", { type: "checkbox", id: "repo-" + i, value: r.url, checked: chosen.has(r.url) }),
    h("label", { for: "repo-" + i }, r.full_name || r.name, r.private ? " (private)" : "")));
  const err = h("p", { class: "form-error", role: "alert" });
  body.append(h("fieldset", {}, h("legend", {}, "Repositories the installation reaches"), boxes), err,
    h("div", { class: "actions" }, h("button", { type: "button", onclick: async () => {
      const pick = repos.filter((r, i) => boxes[i].querySelector("input").checked).map((r) => ({ name: r.name, url: r.url, default_branch: r.default_branch }));
      try { await api.put_mcp_connections_by_id_github_selected(conn.id, { repositories: pick }); status("Repositories saved"); d.close(); ctx.reload(); }
      catch (e) { err.textContent = e.message; }
    } }, "Save repositories")));
}

// coinsDialog edits a connected Pinned prices login's coins.
async function coinsDialog(s, conn) {
  const body = h("div", { class: "dlg-body" });
  const d = dialog(`${s.name}: pinned coins`, body);
  const picker = coinPicker(() => "", conn.id);
  try {
    const cur = await api.get_mcp_connections_by_id_pinned_prices(conn.id);
    picker.set(Array.isArray(cur) ? cur : cur.coins || []);
  } catch (e) { body.append(errorBox(e)); }
  const save = h("button", { type: "button", onclick: async () => {
    try { await api.put_mcp_connections_by_id_pinned_prices(conn.id, { coins: picker.coins() }); status("Coins saved"); d.close(); }
    catch (e) { picker.el.querySelector(":scope > .field-error").textContent = e.message; }
  } }, "Save coins");
  body.append(picker.el, h("div", { class: "actions" }, save));
}

async function showHealth(card, conn, btn) {
  let box = card.querySelector(".health-box");
  if (!box) { box = h("div", { class: "health-box", role: "region", "aria-label": "Connection health" }); card.append(box); }
  btn.disabled = true;
  try {
    const hl = await api.get_mcp_connections_by_id_health(conn.id);
    clear(box, h("dl", {}, h("dt", {}, "State"), h("dd", {}, hl.state || hl.status), h("dt", {}, "Last refresh"), h("dd", {}, when(hl.last_success_at)),
      h("dt", {}, "Last failure"), h("dd", {}, hl.last_failure_at ? `${when(hl.last_failure_at)} (${hl.last_error_code || "error"})` : "—"),
      h("dt", {}, "Next retry"), h("dd", {}, when(hl.next_retry_at)),
      h("dt", {}, "Calls"), h("dd", {}, callsText(hl))));
  } catch (e) { clear(box, errorBox(e)); } finally { btn.disabled = false; }
}

// callsText is the login's circuit breaker in words.
function callsText(hl) {
  const n = hl.failures_in_a_row || 0;
  if (hl.calls === "paused") return h("span", { class: "badge warn" }, `paused until ${when(hl.paused_until)} after ${n} failures in a row`);
  if (hl.calls === "trial_due") return `paused after ${n} failures in a row; the next call is a trial`;
  return n ? `flowing (${n} failed in a row)` : "flowing";
}

// Code, script and browser tools run in the worker's sandbox engine.
const sandboxed = new Set(["code", "scripts", "browser"]);
const engineDown = (engine) => engine && engine.engine !== "working";

// engineNotice says, above the native tools, why sandboxed tools cannot run now.
function engineNotice(engine) {
  if (!engineDown(engine)) return null;
  return h("p", { class: "banner", role: "status", id: "engine-down" },
    engine.engine === "down" ? "Code tools are unavailable: the sandbox engine is down. " : "Code tools are unavailable: no worker is running. ",
    engine.advice || "");
}

function nativeTable(native, ctx) {
  return h("table", { class: "native" }, h("thead", {}, h("tr", {}, h("th", {}, "Tool"), h("th", {}, "Group"), h("th", {}, "Switch"), h("th", {}, "State"))),
    h("tbody", {}, native.map((n) => h("tr", { "data-tool": n.name, id: "native-" + n.name,
      "data-search": [n.name, n.group || n.family].filter(Boolean).join(" ").toLowerCase(),
      "data-on": (n.is_binding ? n.enabled : n.offered !== false) && !n.not_offered ? "1" : "0" },
      h("td", {}, h("code", {}, n.name)),
      h("td", {}, n.group || n.family || ""),
      h("td", {}, n.is_binding ? switch3(`${n.name} at this ${ctx.scope}`, n.switch, (v) => writeSwitch(ctx, "native_tool", n.name, v, n.name), false, "native:" + n.name) :
        h("span", { class: "muted" }, n.gate && n.gate !== "always" ? `follows the agent's ${n.gate} flag` : "always on")),
      h("td", {}, sandboxed.has(n.family) && engineDown(ctx.engine) ? [h("span", { class: "badge warn" }, "unavailable: " +
        (ctx.engine.engine === "down" ? "the sandbox engine is down" : "no worker is running")), " "] : null,
        n.is_binding ? [n.enabled ? "On" : "Off", " ", decided(n.decided_by), " "] : null, asks(n.approval), " ",
        n.not_offered && n.not_offered !== "turned off" ? h("span", { class: "badge warn" }, "not offered: " + n.not_offered,
          (n.missing_variables || []).length ? [" (set ", n.missing_variables.map((v, i) => [i ? ", " : "", h("code", {}, v)]), ")"] : null) :
          (!n.is_binding ? (n.offered === false ? "Off" : "On") : null))))));
}

export { showProblems };
